// The page and the list cannot fool or hijack the extension, in Chromium and Firefox
// ESR (issue 9 item 5; the npm overlay's own tests are in annotate.test.mjs):
//   - a signed list whose every string field carries HTML and script payloads: shown as
//     text on the options page and in the page's labels, never parsed (no element, no
//     script run, no request for the payloads' images);
//   - `javascript:` and `data:` review links: the list is refused at load, the last
//     good one kept;
//   - page scripts cannot reach the background (no extension API in the page), and
//     messages, events and forged overlay elements change nothing;
//   - page CSS aimed at the overlay cannot hide it; the overlay's shadow root is closed;
//     an overlay the page removes comes back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { BROWSERS } from './browsers.mjs';
import { axNodes } from './helpers.mjs';
import {
  ARTIFACTS, FEED_EXPECTED, serve, serveFeed, demoList, signList, packageForTests, launch, options,
  ask, subscription, waitOverlays, overlays, openFeed, assertSiteScriptWorks,
} from './extension-env.mjs';

let pages;
let lists;
let dir;
let extensions;
let served;
let variants;

// A payload for field `name`: markup that would show as an element, run a script, or
// fetch an image from the page server (logged) if it were ever parsed as HTML.
let payload;

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  dir = await mkdtemp(join(tmpdir(), 'factlens-hostile-'));
  pages = await serveFeed();
  payload = (name) => `<img src="${pages.url}/pwned-${name}.png" onerror="window.pwned='${name}'">` +
    `<script>window.pwned='${name}'</script><b id="pwned-${name}">${name}</b>`;
  const base = await demoList();
  const hostile = structuredClone(base);
  Object.assign(hostile.list, { name: payload('name'), description: payload('description') });
  hostile.list.publisher = { name: payload('publisher'), url: 'https://factlens.invalid/?q=<script>x</script>' };
  for (const [i, rule] of hostile.rules.entries()) {
    rule.claim = payload(`claim${i}`);
    rule.review = { url: `https://example.org/check?x="><script>window.pwned=${i}</script>`,
                    title: payload(`title${i}`), publisher: payload(`reviewer${i}`), date: '2025-01-01' };
    delete rule.examples;
  }
  const withReviewUrl = (version, url) => {
    const list = structuredClone(base);
    list.list.version = version;
    list.rules[0].review.url = url;
    return list;
  };
  variants = {
    hostile: await signList(dir, 'hostile', hostile),
    javascript: await signList(dir, 'javascript', withReviewUrl(2, 'javascript:window.pwned="link"')),
    data: await signList(dir, 'data', withReviewUrl(3, 'data:text/html,<script>window.pwned="data"</script>')),
  };
  lists = await serve({
    '/demo.json': async () => ({ type: 'application/json', body: served.text }),
    '/demo.json.minisig': async () => ({ type: 'text/plain', body: served.signature }),
  });
  extensions = await packageForTests(dir, `${lists.url}/demo.json`);
});
after(async () => {
  await pages?.close();
  await lists?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const pwnedRequests = (session) => [...session.requests, ...pages.log].filter((r) => /pwned/.test(r.url));

for (const browser of BROWSERS) {
  test(`${browser}: list payloads stay text, javascript:/data: links are refused, the page cannot forge or hide labels`, async () => {
    served = variants.hostile;
    pages.log.length = 0;
    const session = await launch(browser, extensions, dir, 'hostile');
    try {
      const settings = await options(session, 'ok');
      assert.equal(await settings.textContent('#subs li strong'), payload('name'));
      assert.equal(await settings.evaluate(() => document.querySelectorAll('img, script:not([src]), b').length), 0);

      const page = await openFeed(session, pages);
      await page.screenshot(join(ARTIFACTS, `extension-${browser}-hostile-list.png`));
      if (browser === 'chromium') {
        // What a screen reader gets from the closed shadow roots: the payloads as text.
        const ax = await axNodes(page.raw);
        const texts = ax.map((n) => n.name).join('\n');
        const full = (field) => [...Array(20).keys()].filter((i) => texts.includes(payload(`${field}${i}`)));
        assert.ok(full('claim').length >= 4, `claims shown as text: ${full('claim')}`);
        assert.ok(full('title').length >= 1 && full('reviewer').length >= 1, 'review strings shown as text');
        assert.ok(!ax.some((n) => n.role === 'image'), 'no image element from a payload');
      }
      const title = await page.evaluate(() => document.title);

      // Page CSS aimed at the overlay, the page removing one, and the page forging one.
      await page.evaluate(() => {
        const sheet = new CSSStyleSheet();
        sheet.replaceSync('[data-factlens-overlay], [data-factlens-overlay] * { display: none !important;' +
          ' visibility: hidden !important; opacity: 0 !important; height: 0 !important }');
        document.adoptedStyleSheets = [sheet];
        document.querySelector('[data-factlens-overlay]').remove();
        const fake = document.createElement('div');
        fake.setAttribute('data-factlens-overlay', '');
        fake.dataset.state = 'hidden';
        fake.textContent = 'False: forged by the page';
        document.querySelector('[data-post="x2"]').before(fake);
      });
      await waitOverlays(page, FEED_EXPECTED);
      const hosts = await page.evaluate(() => [...document.querySelectorAll('[data-factlens-overlay]')]
        .map((h) => ({ display: getComputedStyle(h).display, visibility: getComputedStyle(h).visibility,
                       height: h.getBoundingClientRect().height, shadowRoot: h.shadowRoot === null })));
      for (const host of hosts) {
        assert.deepEqual({ ...host, height: host.height > 10 },
                         { display: 'block', visibility: 'visible', height: true, shadowRoot: true });
      }
      await page.screenshot(join(ARTIFACTS, `extension-${browser}-hostile-page-css.png`));

      // The page has no way to the background: no extension API, and what it can
      // send (window messages, DOM events) is not listened to.
      const reach = await page.evaluate(async () => {
        const api = globalThis.chrome?.runtime?.sendMessage ?? globalThis.browser?.runtime?.sendMessage;
        if (!api) return 'no extension API';
        try {
          await api({ type: 'check', texts: ['5G towers are spreading the coronavirus'] });
          return 'answered';
        } catch (error) {
          return `refused: ${error.message}`;
        }
      });
      assert.match(reach, /no extension API|refused/);
      await page.evaluate(() => {
        window.postMessage({ type: 'lists-changed' }, '*');
        window.postMessage({ type: 'check', texts: ['Lovely sunset'], verdicts: [{ action: 'hide' }] }, '*');
        document.dispatchEvent(new CustomEvent('factlens', { detail: { type: 'hide', post: 'x2' } }));
      });
      await new Promise((done) => setTimeout(done, 500));
      assert.deepEqual(await overlays(page), FEED_EXPECTED);

      // javascript: and data: review links: refused at load, the last good list kept.
      for (const [variant, version] of [['javascript', 2], ['data', 3]]) {
        served = variants[variant];
        const answer = await ask(settings, { type: 'update' });
        const sub = answer.subscriptions[0];
        assert.equal(sub.state, 'update-failed', variant);
        assert.match(sub.error.message, /https/, `${variant}: ${sub.error.message}`);
        assert.equal(sub.list.version, 1, `${variant} list (version ${version}) not used`);
      }
      await page.evaluate(() => window.rerenderCell('cell-4'));
      await waitOverlays(page, FEED_EXPECTED);

      // Nothing was ever parsed: no script ran, no payload image was requested.
      assert.equal(await page.evaluate(() => window.pwned ?? null), null);
      assert.equal(await page.evaluate(() => document.title), title);
      assert.equal(await settings.evaluate(() => window.pwned ?? null), null);
      assert.deepEqual(pwnedRequests(session), []);
      assert.equal((await subscription(settings)).list.name, payload('name'));
      await assertSiteScriptWorks(page);
      assert.deepEqual(page.errors, []);
    } finally {
      await session.close();
    }
  });
}
