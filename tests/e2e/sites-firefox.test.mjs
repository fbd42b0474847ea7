// The packaged extension on the fixture copies of each supported site
// (tests/fixtures/sites/) in Firefox ESR (Debian's, through puppeteer-core over
// WebDriver BiDi, tests/e2e/browsers.mjs): the right posts labelled, demoted and hidden,
// nothing else touched, the sites' own scripts still working, old Reddit's demoted
// posts moved below and back, the reader's controls from the keyboard and the popup,
// and no request but the pages' own and the list downloads. sites.test.mjs runs the
// same fixtures in Chromium. The badge is read from an extension page here (Chromium's
// test asks its service worker).
//
// Host names: Firefox goes through browsers.mjs's recording proxy for everything; the
// proxy tunnels https (CONNECT) for the fixture host names on the fixture server's
// port to 127.0.0.1 and refuses every other name, so nothing can reach the real sites
// and every connection is logged. Firefox never resolves the names itself (the proxy
// gets them), so no DNS prefs are needed. The fixtures' throwaway self-signed
// certificate is accepted through BiDi's acceptInsecureCerts (HSTS-preloaded names
// such as x.com included). Screenshots: build/test-artifacts/sites/firefox-*.png.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, mkdtemp, rm, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { repo } from './helpers.mjs';
import { launchWithExtension } from './browsers.mjs';
import { startSiteServer, startListServer, FIXTURE_HOSTS, POST_WORDS, waitLabels,
         assertTouchedOnly, assertListing, waitBadge } from './sites.mjs';
import { packageExtension } from '../../scripts/package-extension.mjs';

const ARTIFACTS = join(repo, 'build/test-artifacts/sites');

let sites;
let lists;
let dir;
let firefox;
const errors = [];

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  lists = await startListServer({
    '/demo.json': async () => ({ type: 'application/json',
                                 data: await readFile(join(repo, 'build/demo/demo.json')) }),
    '/demo.json.minisig': async () => ({ type: 'text/plain',
                                         data: await readFile(join(repo, 'build/demo/demo.json.minisig')) }),
  });
  dir = await mkdtemp(join(tmpdir(), 'factlens-sites-firefox-'));
  const packaged = await packageExtension({
    out: join(dir, 'dist'), defaultList: `${lists.url}/demo.json`,
    trustedKey: join(repo, 'rules/keys/demo.pub'), allowHttp: true,
  });
  sites = await startSiteServer();
  firefox = await launchWithExtension('firefox', {
    extension: packaged.firefox, profile: join(dir, 'profile'),
    tunnel: (host, port) => host in FIXTURE_HOSTS && port === sites.port,
  });
  const options = await firefox.openExtensionPage('pages/options.html');
  await options.waitForSelector('#subs li[data-state="ok"]', 30000);
  await options.close();
});

after(async () => {
  await firefox?.close();
  await sites?.close();
  await lists?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(() => { errors.length = 0; });

async function open(host, path = '/') {
  const page = await firefox.newPage();
  page.raw.on('pageerror', (e) => errors.push(`${host}: pageerror: ${e.message ?? e}`));
  page.raw.on('console', (m) => { if (m.type() === 'error') errors.push(`${host}: console: ${m.text()}`); });
  await page.goto(sites.url(host, path));
  return page;
}

const shot = (page, name) => page.screenshot(join(ARTIFACTS, `firefox-${name}.png`));

// The text of the element `selector` finds; puppeteer's `>>>` pierces open shadow roots.
const textOf = (page, selector) => page.raw.$eval(selector, (el) => el.textContent);

// Presses a button in the closed shadow root of the overlay of post `fixture` the way a
// keyboard reader does: from the last focusable element of the page before the
// overlay, Tab through the overlays in between (a notice has one tab stop, "show
// anyway"; a label three: the review link, "why?", "not this post") and `tabs` more
// inside this one (1: a notice's "show anyway"; 3: a label's "not this post"), then
// Enter. (No script, the test's included, can reach into a closed root.)
async function pressOverlayButton(page, fixture, tabs = 1) {
  await page.raw.bringToFront();  // keys go to the front tab
  const between = await page.evaluate((f) => {
    const host = document.querySelector(`[data-fixture="${f}"]`).previousElementSibling;
    if (!host?.hasAttribute('data-factlens-overlay')) return 'no overlay';
    const before = (el) => el.compareDocumentPosition(host) & Node.DOCUMENT_POSITION_FOLLOWING &&
      el.getClientRects().length;
    const from = [...document.querySelectorAll('a[href], button, [tabindex="0"]')]
      .filter((el) => before(el) && !el.closest('[data-factlens-overlay]')).at(-1);
    if (!from) return 'nothing to tab from';
    from.focus();
    if (document.activeElement !== from) return 'focus refused';
    return [...document.querySelectorAll('[data-factlens-overlay]')]
      .filter((h) => before(h) && from.compareDocumentPosition(h) & Node.DOCUMENT_POSITION_FOLLOWING)
      .reduce((stops, h) => stops + (h.dataset.state === 'label' ? 3 : 1), 0);
  }, fixture);
  assert.equal(typeof between, 'number', between);
  for (let i = 0; i < between + tabs; i++) await page.raw.keyboard.press('Tab');
  assert.equal(await page.evaluate((f) => document.activeElement ===
    document.querySelector(`[data-fixture="${f}"]`).previousElementSibling, fixture), true,
  `Tab reaches the overlay of ${fixture}`);
  await page.raw.keyboard.press('Enter');
}

test('Firefox, X: tweets and quoted tweets, Show more, infinite scroll, re-render and recycled cells (strict CSP)', async () => {
  const page = await open('x.com');
  let expected = [['x1001', 'demoted'], ['x900', 'label']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await page.click('[data-fixture="x1002"] [data-testid="like"]');
  assert.equal(await page.textContent('[data-fixture="x1002"] [data-testid="like"]'), '1');
  // "Show more" (clicking it may scroll the page far enough to load more), then the
  // infinite scroll.
  await page.click('[data-fixture="x1004"] [data-testid="tweet-text-show-more-link"]');
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  expected = [...expected, ['x1004', 'demoted'], ['x1101', 'hidden']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await page.evaluate(() => window.rerenderCell(0));
  await waitLabels(page, expected);
  await page.evaluate(() => {
    window.recycleCell(0, { id: '1202', user: 'ivy', text: 'Picnic at the lake with the kids' });
    window.recycleCell(1, { id: '1201', user: 'jo', text: 'The v4ccine has a microchip in it so they can track you' });
  });
  expected = [['x1201', 'demoted'], ['x900', 'label'], ['x1004', 'demoted'], ['x1101', 'hidden']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await shot(page, 'x-recycled');
  assert.deepEqual(errors, []);
  await page.close();
});

test('Firefox, Facebook: feed units, See more, re-render that drops foreign nodes', async () => {
  const page = await open('www.facebook.com');
  let expected = [['fb-pfbid0aaa', 'demoted']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await page.click('[data-fixture="fb-pfbid0ccc"] [data-see-more]');
  expected = [...expected, ['fb-pfbid0ccc', 'label']];
  await waitLabels(page, expected);
  await page.evaluate(() => window.rerender(0));
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await page.click('[data-fixture="fb-pfbid0ddd"] [data-like]');
  assert.equal(await page.textContent('[data-fixture="fb-pfbid0ddd"] [data-like]'), 'Like 1');
  await shot(page, 'facebook');
  assert.deepEqual(errors, []);
  await page.close();
});

test('Firefox, Reddit (new): shreddit posts and slotted comments in shadow DOM, appended posts', async () => {
  const page = await open('www.reddit.com');
  let expected = [['rp-aa1', 'demoted'], ['rp-aa3', 'label'], ['rc-c2', 'hidden']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  assert.deepEqual(await page.evaluate(() => [...document.querySelectorAll('shreddit-post')]
    .map((p) => p.dataset.fixture)), ['rp-aa1', 'rp-aa2', 'rp-aa3']);
  const box = await page.evaluate(() => document.querySelector('[data-fixture="rc-c2"]')
    .previousElementSibling.getBoundingClientRect().height);
  assert.ok(box > 10, `slotted overlay rendered (height ${box})`);
  // The vote button lives in the post's (open) shadow root and keeps working.
  await page.click('[data-fixture="rp-aa2"] >>> button.vote');
  assert.equal(await textOf(page, '[data-fixture="rp-aa2"] >>> button.vote'), 'upvote 1');
  await page.click('#more');
  expected = [...expected, ['rp-bb10', 'demoted']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await shot(page, 'reddit');
  assert.deepEqual(errors, []);
  await page.close();
});

test('Firefox, Reddit (old): demoted posts below the others, back in place on show anyway and switch-off', async () => {
  const page = await open('old.reddit.com');
  let expected = [['ro-o1', 'demoted'], ['ro-o4', 'demoted'], ['rc-k1', 'label']];
  await waitLabels(page, expected);
  await page.waitForFunction(() => document.querySelector('#siteTable > .nav-buttons')
    .previousElementSibling.previousElementSibling.dataset.fixture === 'ro-o4');
  await assertListing(page, ['ro-o2', 'ro-o3', 'ro-o5', 'ro-o1', 'ro-o4']);
  await assertTouchedOnly(page, expected, ['ro-o1', 'ro-o4']);
  await page.click('[data-fixture="ro-o2"] .expando-button');
  expected = [...expected, ['ro-o2', 'label']];
  await waitLabels(page, expected);
  await page.click('[data-fixture="rc-k1"] > .entry a.vote');
  assert.equal(await page.textContent('[data-fixture="rc-k1"] > .entry a.vote'), 'upvote 1');
  // The next page appended (never-ending reddit): demoted posts below its undemoted one.
  // The reader's keyboard focus is on the "show anyway" of a moved post meanwhile: that
  // one is not moved from under the focus, and moves once the focus leaves it, into
  // the site's order among the moved ones.
  // (Shift+Tab from the listing's "next" link: the last tab stop before it is that button.)
  await page.evaluate(() => document.querySelector('#siteTable .nav-buttons a').focus());
  await page.raw.keyboard.down('Shift');
  await page.raw.keyboard.press('Tab');
  await page.raw.keyboard.up('Shift');
  await page.evaluate(() => window.loadMore());
  expected = [...expected, ['ro-o6', 'demoted']];
  await waitLabels(page, expected);
  await page.waitForFunction(() => document.querySelector('#siteTable > .nav-buttons')
    .previousElementSibling.previousElementSibling.dataset.fixture === 'ro-o6');
  await assertListing(page, ['ro-o2', 'ro-o3', 'ro-o5', 'ro-o4', 'ro-o7', 'ro-o1', 'ro-o6']);
  assert.equal(await page.evaluate(() => document.activeElement?.nextElementSibling?.dataset.fixture), 'ro-o4');
  await page.raw.keyboard.press('Tab');
  await page.waitForFunction(() => document.querySelector('[data-fixture="ro-o7"]')
    .compareDocumentPosition(document.querySelector('[data-fixture="ro-o4"]')) & Node.DOCUMENT_POSITION_FOLLOWING);
  await assertListing(page, ['ro-o2', 'ro-o3', 'ro-o5', 'ro-o7', 'ro-o1', 'ro-o4', 'ro-o6']);
  assert.equal(await page.evaluate(() => document.activeElement?.closest('.thing')?.dataset.fixture), 'ro-o7');
  await shot(page, 'reddit-old-moved');
  // Show anyway, from the keyboard: back in its place, the focus on its label there.
  await pressOverlayButton(page, 'ro-o1');
  expected = expected.map(([f, s]) => [f, f === 'ro-o1' ? 'label' : s]);
  await waitLabels(page, expected);
  await assertListing(page, ['ro-o1', 'ro-o2', 'ro-o3', 'ro-o5', 'ro-o7', 'ro-o4', 'ro-o6']);
  await assertTouchedOnly(page, expected, ['ro-o4', 'ro-o6']);
  assert.equal(await page.evaluate(() => document.activeElement?.nextElementSibling?.dataset.fixture),
               'ro-o1', 'focus on the shown post\'s label');
  await shot(page, 'reddit-old-shown-anyway');
  // Switched off for the site in the options page: every post back in its place, no
  // anchor left; on again: the demoted ones (not shown anyway) below once more.
  const settings = await firefox.openExtensionPage('pages/options.html');
  await settings.waitForSelector('#site-reddit');
  await settings.click('#site-reddit');
  await waitLabels(page, []);
  await assertListing(page, ['ro-o1', 'ro-o2', 'ro-o3', 'ro-o4', 'ro-o5', 'ro-o6', 'ro-o7']);
  await assertTouchedOnly(page, []);
  await settings.click('#site-reddit');
  await waitLabels(page, expected);
  await assertListing(page, ['ro-o1', 'ro-o2', 'ro-o3', 'ro-o5', 'ro-o7', 'ro-o4', 'ro-o6']);
  await assertTouchedOnly(page, expected, ['ro-o4', 'ro-o6']);
  await settings.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test('Firefox, Mastodon (any instance): virtualised articles, translation in place, show anyway kept by key', async () => {
  const page = await open('social.factlens.test');
  let expected = [['m110001', 'demoted']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await page.click('[data-translate="110003"]');
  expected = [['m110001', 'demoted'], ['m110003', 'demoted']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  // Shown anyway from the keyboard: kept by key when the post scrolls off and back.
  await pressOverlayButton(page, 'm110001');
  expected = [['m110001', 'label'], ['m110003', 'demoted']];
  await waitLabels(page, expected);
  // Off screen the article renders spans only: nothing may be labelled there; back on
  // screen the labels come back.
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await page.waitForFunction(() => document.querySelector('article[data-id="110001"]').dataset.hidden === 'true');
  await new Promise((done) => setTimeout(done, 300));
  assert.equal(await page.evaluate(() => document.querySelectorAll('article[data-id="110001"] [data-factlens-overlay]').length), 0);
  await page.evaluate(() => window.scrollTo(0, 0));
  await waitLabels(page, expected);
  await page.click('[data-favourite="110002"]');
  assert.equal(await page.textContent('[data-favourite="110002"]'), '★ 1');
  await shot(page, 'mastodon');
  assert.deepEqual(errors, []);
  await page.close();
});

test('Firefox, Bluesky: appended translation, quoted post as its own unit, more items', async () => {
  const page = await open('bsky.app');
  let expected = [['b-3kaaa1', 'hidden'], ['b-3kaaa2', 'label'], ['b-3kzzz9', 'demoted']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await page.click('[data-fixture="b-3kaaa3"] [data-translate]');
  expected = [...expected, ['b-3kaaa3', 'demoted']];
  await waitLabels(page, expected);
  await page.click('#more');
  expected = [...expected, ['b-3kbbb1', 'demoted']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await page.click('[data-fixture="b-3kaaa4"] [data-testid="likeBtn"]');
  assert.equal(await page.textContent('[data-fixture="b-3kaaa4"] [data-testid="likeBtn"]'), '♡ 1');
  await shot(page, 'bluesky');
  assert.deepEqual(errors, []);
  await page.close();
});

test('Firefox, YouTube comments: elements reused for other comments (strict CSP, Trusted Types)', async () => {
  const page = await open('www.youtube.com', '/watch?v=fx0001');
  let expected = [['yt-UgxA1', 'demoted'], ['yt-UgxA3', 'label']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await page.click('#sort');
  expected = [['yt-UgxB2', 'hidden']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await page.click('[data-fixture="yt-UgxB1"] #like-button');
  assert.equal(await page.textContent('[data-fixture="yt-UgxB1"] #like-button'), '1');
  await shot(page, 'youtube');
  assert.deepEqual(errors, []);
  await page.close();
});

test('Firefox, Threads and LinkedIn (classic and SDUI)', async () => {
  const page = await open('www.threads.net');
  const threads = [['t-C1aaa', 'demoted'], ['t-C1ccc', 'label']];
  await waitLabels(page, threads);
  await assertTouchedOnly(page, threads);
  await page.click('[data-like="C1bbb"]');
  assert.equal(await page.textContent('[data-like="C1bbb"]'), 'Like 1');
  await page.evaluate(() => window.rerenderAll());
  await waitLabels(page, threads);
  await assertTouchedOnly(page, threads);
  await page.goto(sites.url('www.linkedin.com', '/feed/'));
  const classic = [['li-1', 'demoted']];
  await waitLabels(page, classic);
  await assertTouchedOnly(page, classic);
  await page.click('[data-fixture="li-2"] [data-like]');
  assert.equal(await page.textContent('[data-fixture="li-2"] [data-like]'), 'Like 1');
  await page.goto(sites.url('www.linkedin.com', '/feed/sdui.html'));
  await waitLabels(page, [['li-s2', 'label']]);
  await page.click('[data-testid="expandable-text-button"]');
  const sdui = [['li-s2', 'label'], ['li-s1', 'hidden']];
  await waitLabels(page, sdui);
  await assertTouchedOnly(page, sdui);
  await shot(page, 'linkedin-sdui');
  assert.deepEqual(errors, []);
  await page.close();
});

test('Firefox, reader controls: the badge and the popup\'s count, not this post from the keyboard, the site switch', async () => {
  const page = await open('www.threads.net');
  await waitLabels(page, [['t-C1aaa', 'demoted'], ['t-C1ccc', 'label']]);
  // The popup is about the active tab: the site's, brought to the front.
  const options = await firefox.openExtensionPage('pages/options.html');
  await page.raw.bringToFront();
  const tabIds = await options.evaluate(async () =>
    (await chrome.tabs.query({ active: true })).map((t) => t.id));
  assert.equal(tabIds.length, 1, 'one active tab');
  // The toolbar badge counts the matched posts of this tab (read from an extension
  // page: Firefox's background is not reachable over BiDi).
  const badge = (want) => waitBadge(
    () => options.evaluate((id) => chrome.action.getBadgeText({ tabId: id }), tabIds[0]), want);
  await badge('2');
  const popup = await firefox.openExtensionPage(`pages/popup.html?tab=${tabIds[0]}`);
  await popup.waitForFunction(() => document.querySelectorAll('#claims li').length === 2);
  assert.match(await popup.textContent('#found'), /Found on this page: 2 posts/);
  assert.equal(await popup.textContent('#site-name'), 'factlens on www.threads.net');
  await popup.screenshot(join(ARTIFACTS, 'firefox-popup-found.png'));

  await pressOverlayButton(page, 't-C1ccc', 3);
  await waitLabels(page, [['t-C1aaa', 'demoted']]);
  await badge('1');
  await popup.click('#site-switch');
  await waitLabels(page, []);
  await assertTouchedOnly(page, []);
  await badge('');
  await popup.click('#site-switch');
  await waitLabels(page, [['t-C1aaa', 'demoted']]);
  // Forgetting the exceptions (options page) brings the dismissed label back.
  const settings = await firefox.openExtensionPage('pages/options.html');
  await settings.waitForFunction(() => !document.getElementById('dismissed-clear').disabled);
  await settings.click('#dismissed-clear');
  await waitLabels(page, [['t-C1aaa', 'demoted'], ['t-C1ccc', 'label']]);
  await badge('2');
  assert.deepEqual(errors, []);
  await Promise.all([page.close(), popup.close(), settings.close(), options.close()]);
});

test('Firefox, privacy: scrolling through every site, only the pages and the list downloads are requested', async () => {
  const settings = await firefox.openExtensionPage('pages/options.html');
  const before = firefox.requests.length;
  await settings.click('#update');
  await settings.waitForSelector('#subs li[data-state="ok"]');
  await settings.close();
  const paths = { 'www.youtube.com': '/watch?v=fx0001', 'www.linkedin.com': '/feed/' };
  for (const host of Object.keys(FIXTURE_HOSTS).filter((h) => h !== 'feed.factlens.test')) {
    const page = await open(host, paths[host] ?? '/');
    for (let y = 0; y < 6; y++) {
      await page.raw.mouse.wheel({ deltaY: 600 });
      await new Promise((done) => setTimeout(done, 80));
    }
    await page.evaluate(() => window.scrollTo(0, 0));
    await new Promise((done) => setTimeout(done, 300));
    await page.close();
  }
  const listUrls = new Set([`${lists.url}/demo.json`, `${lists.url}/demo.json.minisig`]);
  assert.ok(firefox.requests.slice(before).some((r) => r.url === `${lists.url}/demo.json.minisig`),
            'the background\'s list downloads are recorded');
  // The proxy saw every connection Firefox made: the list downloads (plain http) and
  // https tunnels to the fixture hosts on the fixture server's port, nothing else.
  for (const { url, method } of firefox.requests) {
    if (listUrls.has(url)) {
      assert.equal(method, 'GET');
      continue;
    }
    const { protocol, hostname, port } = new URL(url);
    assert.equal(method, 'CONNECT', url);
    assert.ok(protocol === 'https:' && hostname in FIXTURE_HOSTS && Number(port) === sites.port,
              `unexpected connection to ${url}`);
  }
  for (const { url, body } of [...firefox.requests, ...lists.log, ...sites.log]) {
    for (const word of POST_WORDS) {
      assert.ok(!decodeURIComponent(url).toLowerCase().includes(word.toLowerCase()) &&
                !body.toLowerCase().includes(word.toLowerCase()), `post text "${word}" in a request to ${url}`);
    }
  }
  for (const entry of lists.log) {
    assert.equal(entry.method, 'GET');
    assert.ok(listUrls.has(`${lists.url}${entry.url}`), entry.url);
  }
  // Inside the tunnels: the pages' own files only, all GET.
  for (const entry of sites.log) {
    assert.equal(entry.method, 'GET', entry.url);
    assert.match(entry.url, /^\/(|feed\/|feed\/sdui\.html|watch\?v=fx0001|site\.css|site\.js)$/, entry.url);
  }
  assert.deepEqual(errors, []);
});
