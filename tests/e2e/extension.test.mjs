// The packaged extension in real headless Chromium and Firefox ESR (browsers.mjs), each
// scenario run in both, from the zip files `npm run package` writes (unzipped, as a
// store would): the default list (signed with the demo key, served on 127.0.0.1 from
// another origin than the page) is downloaded, verified and used; X-like and generic
// posts are labelled, demoted and hidden and the others left alone; re-rendered and
// recycled posts keep the right label; a list update is applied without a reload; a
// list whose signature fails or that expired is refused and shown; and no request
// carries post text or leaves the page's origin except the list and signature
// downloads. Screenshots of each state go to build/test-artifacts/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { BROWSERS } from './browsers.mjs';
import {
  ARTIFACTS, POST_WORDS, FEED_EXPECTED, serve, serveFeed, demoFiles, demoList, signList,
  packageForTests, launch, options, waitOverlays, overlays, displayOf, styleOf, openFeed,
  assertSiteScriptWorks,
} from './extension-env.mjs';

let pages;
let lists;
let dir;
let extensions;
let served;  // { text, signature } the list server hands out
let variants;

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  dir = await mkdtemp(join(tmpdir(), 'factlens-ext-'));
  const demo = await demoFiles();
  const base = await demoList();
  // Version 2 adds a rule for the garden club post; the tampered one is version 1's
  // signature over other bytes (a claim rewritten in transit); the expired one is a
  // properly signed list whose validity ended.
  const v2 = structuredClone(base);
  v2.list.version = 2;
  v2.rules.push({ ...structuredClone(base.rules[0]), id: 'garden-club-test',
                  claim: 'The garden club minutes are forged.', rating: 'false', severity: 'low',
                  match: { patterns: ['\\bgarden club\\b'] }, examples: undefined });
  const expired = structuredClone(base);
  Object.assign(expired.list, { issued: '2024-01-01T00:00:00Z', expires: '2025-01-01T00:00:00Z' });
  variants = {
    good: demo,
    v2: await signList(dir, 'v2', v2),
    tampered: { text: demo.text.replace('"rating": "satire"', '"rating": "false"'), signature: demo.signature },
    expired: await signList(dir, 'expired', expired),
  };
  pages = await serveFeed();
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

for (const browser of BROWSERS) {
  test(`${browser}: labels, demotes and hides the right posts; updates apply without reload`, async () => {
    served = variants.good;
    lists.log.length = 0;
    pages.log.length = 0;
    const session = await launch(browser, extensions, dir, 'good');
    try {
      const settings = await options(session, 'ok');
      assert.match(await settings.textContent('#subs'), /factlens demo list/);

      const page = await openFeed(session, pages);
      await page.screenshot(join(ARTIFACTS, `extension-${browser}-feed.png`));
      // Demoted and hidden posts collapse; labelled and unmatched ones stay as they were.
      for (const post of ['x1', 'x3', 'f1']) assert.equal(await displayOf(page, post), 'none');
      for (const post of ['x4', 'g1']) assert.equal(await displayOf(page, post), 'block');
      for (const post of ['x2', 'g2', 'f2']) {
        assert.equal(await styleOf(page, post), null, `${post} untouched`);
        assert.equal(await page.evaluate((p) => document.querySelector(`[data-post="${p}"]`)
          .previousElementSibling?.hasAttribute('data-factlens-overlay') ?? false, post), false);
      }
      await assertSiteScriptWorks(page);

      // Re-render: the cell's nodes are replaced; the new post gets its label back, once.
      await page.evaluate(() => window.rerenderCell('cell-4'));
      await waitOverlays(page, FEED_EXPECTED);
      assert.equal(await page.evaluate(() =>
        document.querySelectorAll('#cell-4 [data-factlens-overlay]').length), 1);

      // Recycling: cell-1's nodes now show another (harmless) post, cell-2's a hidden one.
      await page.evaluate(() => {
        window.recycleCell('cell-1', { text: 'A picnic in the park with friends', status: 2001, author: 'erin' });
        window.recycleCell('cell-2', { text: 'Ampara restaurant putting sterilisation pills in the food',
                                       status: 2002, author: 'finn' });
      });
      const recycled = [['x2002', 'hidden'], ['x3', 'hidden'], ['x4', 'label'], ['g1', 'label'],
                        ['f1', 'demoted']];
      await waitOverlays(page, recycled);
      assert.equal(await styleOf(page, 'x2001'), null, 'recycled post given back its display');
      assert.equal(await displayOf(page, 'x2002'), 'none');

      // A new version (a rule for the garden club post) applies to the open page, no reload.
      served = variants.v2;
      await settings.click('#update');
      await settings.waitForSelector('#subs li[data-state="ok"] .detail');
      await waitOverlays(page, [...recycled, ['f2', 'demoted']]);
      assert.match(await settings.textContent('#subs li .detail'), /Version 2/);
      await page.screenshot(join(ARTIFACTS, `extension-${browser}-feed-updated.png`));

      // An update whose signature fails is refused and shown; the last good list stays.
      served = variants.tampered;
      await settings.click('#update');
      await settings.waitForSelector('#subs li[data-state="update-failed"]', 10000);
      assert.match(await settings.textContent('#subs li .error'), /signature/i);
      await settings.screenshot(join(ARTIFACTS, `extension-${browser}-options-refused.png`));
      await page.evaluate(() => window.rerenderCell('cell-4'));
      await waitOverlays(page, [...recycled, ['f2', 'demoted']]);
      assert.deepEqual(page.errors, []);

      // Privacy: only the list and its signature leave the page's origin, no request
      // carries post text, and the list server saw nothing but those two downloads.
      const allowed = new Set([`${lists.url}/demo.json`, `${lists.url}/demo.json.minisig`]);
      // The recording sees the background's downloads too (so it would see others).
      assert.ok(session.requests.some((r) => r.url === `${lists.url}/demo.json.minisig`),
                'background requests recorded');
      for (const { url } of session.requests) {
        const { protocol, origin } = new URL(url);
        if (protocol === 'chrome-extension:' || protocol === 'moz-extension:' || origin === pages.url) continue;
        assert.ok(allowed.has(url), `unexpected request to ${url}`);
      }
      for (const { url, body } of [...session.requests, ...lists.log, ...pages.log]) {
        for (const word of POST_WORDS) {
          assert.ok(!decodeURIComponent(url).includes(word) && !body.includes(word),
                    `post text "${word}" in a request to ${url}`);
        }
      }
      assert.equal(lists.log.length, 6, 'two downloads at install and at each of the two updates');
      for (const entry of lists.log) {
        assert.equal(entry.method, 'GET');
        assert.equal(entry.body, '');
        assert.equal(entry.headers.cookie, undefined);
        assert.equal(entry.headers.referer, undefined);
        assert.ok(['/demo.json', '/demo.json.minisig'].includes(entry.url), entry.url);
      }
      assert.deepEqual([...new Set(pages.log.map((e) => e.url))].sort(), ['/feed.html', '/feed.js']);
    } finally {
      await session.close();
    }
  });

  for (const [variant, reason] of [['tampered', /signature/i], ['expired', /expired/i]]) {
    test(`${browser}: a list that is ${variant} is refused, shown, and never used`, async () => {
      served = variants[variant];
      const session = await launch(browser, extensions, dir, variant);
      try {
        const settings = await options(session, 'refused');
        assert.match(await settings.textContent('#subs li .error'), reason);
        await settings.screenshot(join(ARTIFACTS, `extension-${browser}-options-${variant}.png`));
        const page = await session.newPage();
        await page.goto(`${pages.url}/feed.html`);
        // Give the content script time to find and send the posts; nothing may be drawn.
        await new Promise((done) => setTimeout(done, 1500));
        assert.deepEqual(await overlays(page), []);
        assert.equal(await styleOf(page, 'x3'), null);
      } finally {
        await session.close();
      }
    });
  }
}
