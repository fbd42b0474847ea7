// The packaged extension on fixture copies of each supported site (tests/fixtures/sites/,
// served over https under the sites' own host names), in real headless Chromium with
// the signed demo list: the right posts are labelled, demoted and hidden and nothing
// else is touched; labels follow re-renders, recycled nodes, virtualised lists,
// infinite scroll, "see more" expansions and translations; the sites' own scripts keep
// working; the reader's switches, "not this post" and the popup work; and, scrolling
// through every site, the browser makes no request but the pages' own and the list
// downloads, none of them carrying post text. Screenshots of each state are saved in
// build/test-artifacts/sites/. sites-firefox.test.mjs runs the fixtures in Firefox ESR.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, mkdtemp, rm, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { repo } from './helpers.mjs';
import { startSiteServer, startListServer, launchWithExtension, waitSubscription,
         FIXTURE_HOSTS, POST_WORDS, labelsIn, waitLabels, assertTouchedOnly,
         assertListing, waitBadge as waitSiteBadge } from './sites.mjs';
import { packageExtension } from '../../scripts/package-extension.mjs';
import { signList } from './extension-env.mjs';

const ARTIFACTS = join(repo, 'build/test-artifacts/sites');
let sites;
let lists;
let dir;
let browser;  // { context, requests, worker, id }
let served = null;  // { text, signature } of a list served instead of the demo list
const errors = [];

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  // The signed demo list, or the one a test serves instead (`served`).
  lists = await startListServer({
    '/demo.json': async () => ({ type: 'application/json',
                                 data: served?.text ?? await readFile(join(repo, 'build/demo/demo.json')) }),
    '/demo.json.minisig': async () => ({ type: 'text/plain',
                                         data: served?.signature ??
                                           await readFile(join(repo, 'build/demo/demo.json.minisig')) }),
  });
  dir = await mkdtemp(join(tmpdir(), 'factlens-sites-'));
  const packaged = await packageExtension({
    out: join(dir, 'dist'), defaultList: `${lists.url}/demo.json`,
    trustedKey: join(repo, 'rules/keys/demo.pub'), allowHttp: true,
  });
  sites = await startSiteServer();
  browser = await launchWithExtension(packaged.chromium, join(dir, 'profile'));
  await (await waitSubscription(browser.context, browser.id, 'ok')).close();
});

after(async () => {
  await browser?.context.close();
  await sites?.close();
  await lists?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(() => { errors.length = 0; });

async function open(host, path = '/') {
  const page = await browser.context.newPage();
  page.on('pageerror', (e) => errors.push(`${host}: pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`${host}: console: ${m.text()}`); });
  await page.goto(sites.url(host, path));
  return page;
}

// The toolbar badge of tab `tabId` (set by the background from the content script's
// count), asked of the service worker.
const waitBadge = (tabId, want) => waitSiteBadge(
  () => browser.worker.evaluate((id) => chrome.action.getBadgeText({ tabId: id }), tabId), want);

const shot = (page, name) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

// Clicks a button inside the closed shadow root of the overlay of post `fixture` the
// way a reader does: at its place on the screen (found through DevTools, which sees
// closed roots; page scripts cannot).
async function clickOverlay(page, fixture, action) {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { root } = await cdp.send('DOM.getDocument', { depth: -1, pierce: true });
    const attr = (node, name) => {
      const a = node.attributes ?? [];
      for (let i = 0; i < a.length; i += 2) if (a[i] === name) return a[i + 1];
      return null;
    };
    let button = null;
    const find = (node, pred) => {
      if (pred(node)) return node;
      for (const child of [...(node.children ?? []), ...(node.shadowRoots ?? [])]) {
        const hit = find(child, pred);
        if (hit) return hit;
      }
      return null;
    };
    const visit = (node) => {
      const kids = node.children ?? [];
      kids.forEach((child, i) => {
        const next = kids.slice(i + 1).find((k) => k.nodeType === 1);
        if (attr(child, 'data-factlens-overlay') !== null && next && attr(next, 'data-fixture') === fixture) {
          button = find(child.shadowRoots[0], (n) => attr(n, 'data-action') === action);
        }
      });
      for (const child of [...kids, ...(node.shadowRoots ?? [])]) visit(child);
    };
    visit(root);
    assert.ok(button, `a ${action} button in the overlay of ${fixture}`);
    await cdp.send('DOM.scrollIntoViewIfNeeded', { nodeId: button.nodeId });
    const { model } = await cdp.send('DOM.getBoxModel', { nodeId: button.nodeId });
    const q = model.content;
    await page.mouse.click((q[0] + q[4]) / 2, (q[1] + q[5]) / 2);
  } finally {
    await cdp.detach();
  }
}

test('X: tweets and quoted tweets, Show more, infinite scroll, re-render and recycled cells (strict CSP)', async () => {
  const page = await open('x.com');
  let expected = [['x1001', 'demoted'], ['x900', 'label']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await shot(page, 'x-1-initial');
  // The quoted tweet is its own unit: the quoting tweet has no label of its own.
  assert.equal(await page.evaluate(() => document.querySelector('[data-fixture="x1003"]')
    .previousElementSibling?.hasAttribute('data-factlens-overlay') ?? false), false);

  // The demoted tweet is the same node, where the site put it (React keeps working on it).
  await page.evaluate(() => {
    const article = document.querySelector('[data-fixture="x1001"]');
    window.demoted = { article, parent: article.parentElement };
  });
  // The site's like button (its own script) still counts.
  await page.click('[data-fixture="x1002"] [data-testid="like"]');
  assert.equal(await page.textContent('[data-fixture="x1002"] [data-testid="like"]'), '1');

  // "Show more" expands the tweet in place: checked again on the full text.
  await page.click('[data-fixture="x1004"] [data-testid="tweet-text-show-more-link"]');
  expected = [...expected, ['x1004', 'demoted']];
  await waitLabels(page, expected);

  // Infinite scroll appends more posts.
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  expected = [...expected, ['x1101', 'hidden']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await shot(page, 'x-2-expanded-and-appended');

  assert.ok(await page.evaluate(() => window.demoted.article.isConnected &&
    window.demoted.article.parentElement === window.demoted.parent &&
    document.querySelector('[data-fixture="x1001"]') === window.demoted.article));
  // A re-render replaces the cell's nodes: one label, again.
  await page.evaluate(() => window.rerenderCell(0));
  await waitLabels(page, expected);
  assert.equal(await page.evaluate(() => document.querySelectorAll('[data-factlens-overlay]').length), 4);

  // Recycled cells show other posts: keys follow the status ids, not the nodes.
  await page.evaluate(() => {
    window.recycleCell(0, { id: '1202', user: 'ivy', text: 'Picnic at the lake with the kids' });
    window.recycleCell(1, { id: '1201', user: 'jo', text: 'The v4ccine has a microchip in it so they can track you' });
  });
  expected = [['x1201', 'demoted'], ['x900', 'label'], ['x1004', 'demoted'], ['x1101', 'hidden']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await shot(page, 'x-3-recycled');
  assert.deepEqual(errors, []);
  await page.close();
});

test('Facebook: feed units, See more, re-render that drops foreign nodes; comments left alone', async () => {
  const page = await open('www.facebook.com');
  let expected = [['fb-pfbid0aaa', 'demoted']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await shot(page, 'facebook-1-initial');
  await page.click('[data-fixture="fb-pfbid0ccc"] [data-see-more]');
  expected = [...expected, ['fb-pfbid0ccc', 'label']];
  await waitLabels(page, expected);
  // The unit is rebuilt from the site's state (our overlay thrown away with it).
  await page.evaluate(() => window.rerender(0));
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await page.click('[data-fixture="fb-pfbid0ddd"] [data-like]');
  assert.equal(await page.textContent('[data-fixture="fb-pfbid0ddd"] [data-like]'), 'Like 1');
  await shot(page, 'facebook-2-expanded-rerendered');
  assert.deepEqual(errors, []);
  await page.close();
});

test('Reddit (new): shreddit posts and slotted comments in shadow DOM, ads left alone, appended posts', async () => {
  const page = await open('www.reddit.com');
  let expected = [['rp-aa1', 'demoted'], ['rp-aa3', 'label'], ['rc-c2', 'hidden']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  // The demoted post stays where the site put it (no adapter but old Reddit's moves).
  assert.deepEqual(await page.evaluate(() => [...document.querySelectorAll('shreddit-post')]
    .map((p) => p.dataset.fixture)), ['rp-aa1', 'rp-aa2', 'rp-aa3']);
  // The nested comment's overlay is slotted where the comment is, so it is rendered.
  const box = await page.evaluate(() => document.querySelector('[data-fixture="rc-c2"]')
    .previousElementSibling.getBoundingClientRect().height);
  assert.ok(box > 10, `slotted overlay rendered (height ${box})`);
  await shot(page, 'reddit-1-initial');
  // The vote button lives in the post's shadow root and keeps working.
  await page.click('[data-fixture="rp-aa2"] >> css=button.vote');
  assert.equal(await page.textContent('[data-fixture="rp-aa2"] >> css=button.vote'), 'upvote 1');
  await page.click('#more');
  expected = [...expected, ['rp-bb10', 'demoted']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await shot(page, 'reddit-2-appended');
  assert.deepEqual(errors, []);
  await page.close();
});

test('Reddit (old): things, comments apart from their replies, the expando; demoted posts moved below and back', async () => {
  const page = await open('old.reddit.com');
  let expected = [['ro-o1', 'demoted'], ['ro-o4', 'demoted'], ['rc-k1', 'label']];
  await waitLabels(page, expected);
  // Demoted link posts are moved below the undemoted ones of the listing, in their own
  // order, each with its overlay and its clearleft; comments stay in their thread.
  await page.waitForFunction(() => document.querySelector('#siteTable > .nav-buttons')
    .previousElementSibling.previousElementSibling.dataset.fixture === 'ro-o4');
  await assertListing(page, ['ro-o2', 'ro-o3', 'ro-o5', 'ro-o1', 'ro-o4']);
  await assertTouchedOnly(page, expected, ['ro-o1', 'ro-o4']);
  await shot(page, 'reddit-old-1-demoted-moved');
  await page.click('[data-fixture="ro-o2"] .expando-button');
  expected = [...expected, ['ro-o2', 'label']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected, ['ro-o1', 'ro-o4']);
  await page.click('[data-fixture="rc-k1"] > .entry a.vote');
  assert.equal(await page.textContent('[data-fixture="rc-k1"] > .entry a.vote'), 'upvote 1');
  await assertListing(page, ['ro-o2', 'ro-o3', 'ro-o5', 'ro-o1', 'ro-o4']);
  await shot(page, 'reddit-old-2-expanded');

  // The next page appended below the moved posts (never-ending reddit): the demoted
  // ones go below its undemoted post, its demoted one with them; but not the one whose
  // "show anyway" has the reader's keyboard focus (Shift+Tab from the listing's "next"
  // link) until the focus leaves it; then it joins them in the site's order.
  await page.focus('#siteTable .nav-buttons a');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.nextElementSibling?.dataset.fixture), 'ro-o4');
  await page.evaluate(() => window.loadMore());
  expected = [...expected, ['ro-o6', 'demoted']];
  await waitLabels(page, expected);
  await page.waitForFunction(() => document.querySelector('#siteTable > .nav-buttons')
    .previousElementSibling.previousElementSibling.dataset.fixture === 'ro-o6');
  await assertListing(page, ['ro-o2', 'ro-o3', 'ro-o5', 'ro-o4', 'ro-o7', 'ro-o1', 'ro-o6']);
  assert.equal(await page.evaluate(() => document.activeElement?.nextElementSibling?.dataset.fixture), 'ro-o4');
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => document.querySelector('[data-fixture="ro-o7"]')
    .compareDocumentPosition(document.querySelector('[data-fixture="ro-o4"]')) & Node.DOCUMENT_POSITION_FOLLOWING);
  await assertListing(page, ['ro-o2', 'ro-o3', 'ro-o5', 'ro-o7', 'ro-o1', 'ro-o4', 'ro-o6']);
  assert.equal(await page.evaluate(() => document.activeElement?.closest('.thing')?.dataset.fixture), 'ro-o7');
  await assertTouchedOnly(page, expected, ['ro-o1', 'ro-o4', 'ro-o6']);

  // Show anyway: the post goes back to its own place, and the keyboard focus stays on
  // its label (now in that place).
  await clickOverlay(page, 'ro-o1', 'reveal');
  expected = expected.map(([f, s]) => [f, f === 'ro-o1' ? 'label' : s]);
  await waitLabels(page, expected);
  await assertListing(page, ['ro-o1', 'ro-o2', 'ro-o3', 'ro-o5', 'ro-o7', 'ro-o4', 'ro-o6']);
  assert.equal(await page.evaluate(() => document.activeElement?.nextElementSibling?.dataset.fixture),
               'ro-o1', 'focus on the shown post\'s label');
  await assertTouchedOnly(page, expected, ['ro-o4', 'ro-o6']);
  await shot(page, 'reddit-old-3-shown-anyway');

  // Switched off for the site (options page): every post back in its place; on again:
  // the demoted post (not shown anyway) moves below once more.
  const settings = await browser.context.newPage();
  await settings.goto(`chrome-extension://${browser.id}/pages/options.html`);
  await settings.click('#site-reddit');
  await waitLabels(page, []);
  await assertListing(page, ['ro-o1', 'ro-o2', 'ro-o3', 'ro-o4', 'ro-o5', 'ro-o6', 'ro-o7']);
  assert.equal(await page.evaluate(() => [...document.getElementById('siteTable').childNodes]
    .filter((n) => n.nodeType === Node.COMMENT_NODE).length), 0, 'no anchor left behind');
  await settings.click('#site-reddit');
  await waitLabels(page, expected);
  await assertListing(page, ['ro-o1', 'ro-o2', 'ro-o3', 'ro-o5', 'ro-o7', 'ro-o4', 'ro-o6']);

  // A list update that no longer demotes the post (the shark photo rated partly false:
  // label only) puts it back in its place without a reload; the next one (rated
  // altered again) moves it below once more.
  const shark = async (version, rating) => {
    const list = JSON.parse(await readFile(join(repo, 'build/demo/demo.json'), 'utf8'));
    list.list.version = version;
    list.rules.find((r) => r.id === 'shark-on-highway').rating = rating;
    served = await signList(join(dir, 'lists'), `demo-v${version}`, list);
    await settings.click('#update');
    await settings.waitForSelector('#subs li[data-state="ok"]');
  };
  await shark(2, 'partly_false');
  expected = expected.map(([f, s]) => [f, f === 'ro-o4' ? 'label' : s]);
  await waitLabels(page, expected);
  await assertListing(page, ['ro-o1', 'ro-o2', 'ro-o3', 'ro-o4', 'ro-o5', 'ro-o7', 'ro-o6']);
  await shark(3, 'altered');
  expected = expected.map(([f, s]) => [f, f === 'ro-o4' ? 'demoted' : s]);
  await waitLabels(page, expected);
  await assertListing(page, ['ro-o1', 'ro-o2', 'ro-o3', 'ro-o5', 'ro-o7', 'ro-o4', 'ro-o6']);
  await assertTouchedOnly(page, expected, ['ro-o4', 'ro-o6']);
  await settings.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test('Mastodon (any instance): virtualised articles, translation in place, show anyway kept by key', async () => {
  const page = await open('social.factlens.test');
  let expected = [['m110001', 'demoted']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await shot(page, 'mastodon-1-initial');
  // Translate replaces the German text in the same node; the English matches.
  await page.click('[data-translate="110003"]');
  expected = [['m110001', 'demoted'], ['m110003', 'demoted']];
  await waitLabels(page, expected);
  await shot(page, 'mastodon-2-translated');
  // Back to the original: the post keeps the verdict of its translation.
  await clickOverlay(page, 'm110003', 'reveal');
  await page.click('[data-translate="110003"]');
  await page.waitForFunction(() => document.querySelector('[data-fixture="m110003"] .status__content__text')
    .getAttribute('lang') === 'de');
  await waitLabels(page, [['m110001', 'demoted'], ['m110003', 'label']]);
  // The reader shows the first post anyway; it scrolls off screen (the article keeps its
  // height and renders spans only: nothing may be labelled there) and back.
  await clickOverlay(page, 'm110001', 'reveal');
  await waitLabels(page, [['m110001', 'label'], ['m110003', 'label']]);
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await page.waitForFunction(() => document.querySelector('article[data-id="110001"]').dataset.hidden === 'true');
  await page.waitForTimeout(300);
  assert.deepEqual(await labelsIn(page), []);
  assert.equal(await page.evaluate(() => document.querySelectorAll('article[data-id="110001"] [data-factlens-overlay]').length), 0);
  await page.evaluate(() => window.scrollTo(0, 0));
  await waitLabels(page, [['m110001', 'label'], ['m110003', 'label']]);
  await page.click('[data-favourite="110002"]');
  assert.equal(await page.textContent('[data-favourite="110002"]'), '★ 1');
  await shot(page, 'mastodon-3-scrolled-back');
  assert.deepEqual(errors, []);
  await page.close();
});

test('Bluesky: clamped text, appended translation, quoted post as its own unit, more items', async () => {
  const page = await open('bsky.app');
  // b-3kzzz9 is the post quoted by b-3kaaa4: demoted on its own, the quoting post not.
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
  await shot(page, 'bluesky-1-translated-appended');
  assert.deepEqual(errors, []);
  await page.close();
});

test('YouTube comments: Polymer reuses the elements for other comments (strict CSP, Trusted Types)', async () => {
  const page = await open('www.youtube.com', '/watch?v=fx0001');
  let expected = [['yt-UgxA1', 'demoted'], ['yt-UgxA3', 'label']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await shot(page, 'youtube-1-initial');
  await page.click('#sort');
  expected = [['yt-UgxB2', 'hidden']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await page.click('[data-fixture="yt-UgxB1"] #like-button');
  assert.equal(await page.textContent('[data-fixture="yt-UgxB1"] #like-button'), '1');
  await shot(page, 'youtube-2-recycled');
  await page.click('#sort');
  await waitLabels(page, [['yt-UgxA1', 'demoted'], ['yt-UgxA3', 'label']]);
  assert.deepEqual(errors, []);
  await page.close();
});

test('Threads: pressable containers, re-created on every like and re-render', async () => {
  const page = await open('www.threads.net');
  const expected = [['t-C1aaa', 'demoted'], ['t-C1ccc', 'label']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await page.click('[data-like="C1bbb"]');
  assert.equal(await page.textContent('[data-like="C1bbb"]'), 'Like 1');
  await page.evaluate(() => window.rerenderAll());
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await shot(page, 'threads-1-rerendered');
  assert.deepEqual(errors, []);
  await page.close();
});

test('LinkedIn: classic data-urn updates and the SDUI feed with its "more" button', async () => {
  const page = await open('www.linkedin.com', '/feed/');
  const classic = [['li-1', 'demoted']];
  await waitLabels(page, classic);
  await assertTouchedOnly(page, classic);
  await page.click('[data-fixture="li-2"] [data-like]');
  assert.equal(await page.textContent('[data-fixture="li-2"] [data-like]'), 'Like 1');
  await shot(page, 'linkedin-1-classic');
  await page.goto(sites.url('www.linkedin.com', '/feed/sdui.html'));
  let expected = [['li-s2', 'label']];
  await waitLabels(page, expected);
  await page.click('[data-testid="expandable-text-button"]');
  expected = [...expected, ['li-s1', 'hidden']];
  await waitLabels(page, expected);
  await assertTouchedOnly(page, expected);
  await shot(page, 'linkedin-2-sdui-expanded');
  assert.deepEqual(errors, []);
  await page.close();
});

test('reader controls: not this post, per-site switch from the popup and the options page', async () => {
  const page = await open('www.threads.net');
  await waitLabels(page, [['t-C1aaa', 'demoted'], ['t-C1ccc', 'label']]);
  await page.bringToFront();
  // The badge counts the matched posts of this tab.
  const tabId = await browser.worker.evaluate(async () =>
    (await chrome.tabs.query({ active: true })).map((t) => t.id));
  assert.equal(tabId.length, 1, 'one active tab');
  await waitBadge(tabId[0], '2');

  // The popup: what was found on this page, from the tab's content script.
  const popup = await browser.context.newPage();
  await popup.goto(`chrome-extension://${browser.id}/pages/popup.html?tab=${tabId[0]}`);
  await popup.waitForFunction(() => document.querySelectorAll('#claims li').length === 2);
  assert.match(await popup.textContent('#found'), /Found on this page: 2 posts/);
  assert.match(await popup.textContent('#claims'), /vaccines contain microchips/);
  assert.match(await popup.textContent('#claims'), /Wind turbines kill more birds/);
  assert.equal(await popup.textContent('#site-name'), 'factlens on www.threads.net');
  await popup.screenshot({ path: join(ARTIFACTS, 'popup-found.png') });

  // "Not this post": the label goes, is remembered locally, and stays gone after reload.
  await page.bringToFront();
  await clickOverlay(page, 't-C1ccc', 'dismiss');
  await waitLabels(page, [['t-C1aaa', 'demoted']]);
  const stored = await browser.worker.evaluate(async () => (await chrome.storage.local.get('dismissedPosts')).dismissedPosts);
  assert.equal(Object.keys(stored).length, 1);
  assert.ok(!JSON.stringify(stored).includes('C1ccc'), 'only a hash of the post key is stored');
  await page.reload();
  await waitLabels(page, [['t-C1aaa', 'demoted']]);
  await popup.reload();
  await popup.waitForFunction(() => document.querySelectorAll('#claims li').length === 1);

  // The popup switches factlens off on this site: every overlay goes, the post is back.
  await popup.click('#site-switch');
  await waitLabels(page, []);
  assert.equal(await page.getAttribute('[data-fixture="t-C1aaa"]', 'style'), null);
  await popup.waitForFunction(() => /Switched off/.test(document.getElementById('found').textContent));
  await waitBadge(tabId[0], '');
  const options = await browser.context.newPage();
  await options.goto(`chrome-extension://${browser.id}/pages/options.html`);
  await options.waitForSelector('#hosts li[data-host="www.threads.net"]');
  assert.match(await options.textContent('#dismissed'), /: 1/);
  await options.screenshot({ path: join(ARTIFACTS, 'options-sites.png'), fullPage: true });
  // Reset the host override, then switch the Threads site off in the options page.
  await options.click('#hosts li[data-host="www.threads.net"] button');
  await waitLabels(page, [['t-C1aaa', 'demoted']]);
  await options.click('#site-threads');
  await waitLabels(page, []);
  await options.click('#site-threads');
  await waitLabels(page, [['t-C1aaa', 'demoted']]);
  // Forgetting the exceptions brings the dismissed label back.
  await options.click('#dismissed-clear');
  await waitLabels(page, [['t-C1aaa', 'demoted'], ['t-C1ccc', 'label']]);
  await waitBadge(tabId[0], '2');
  assert.deepEqual(errors, []);
  await Promise.all([page.close(), popup.close(), options.close()]);
});

test('privacy: scrolling through every site, only the pages and the list downloads are requested', async () => {
  // An update now, so the worker's list downloads happen while the recording runs.
  const settings = await browser.context.newPage();
  await settings.goto(`chrome-extension://${browser.id}/pages/options.html`);
  const before = browser.requests.length;
  await settings.click('#update');
  await settings.waitForSelector('#subs li[data-state="ok"]');
  await settings.close();
  assert.ok(browser.requests.slice(before).some((r) => r.url === `${lists.url}/demo.json.minisig`),
            'the worker\'s list downloads are recorded');
  const paths = { 'www.youtube.com': '/watch?v=fx0001', 'www.linkedin.com': '/feed/' };
  for (const host of Object.keys(FIXTURE_HOSTS).filter((h) => h !== 'feed.factlens.test')) {
    const page = await open(host, paths[host] ?? '/');
    for (let y = 0; y < 6; y++) {
      await page.mouse.wheel(0, 600);
      await page.waitForTimeout(80);
    }
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(300);
    await page.close();
  }
  const listUrls = new Set([`${lists.url}/demo.json`, `${lists.url}/demo.json.minisig`]);
  for (const { url, method, body } of browser.requests) {
    const { protocol, hostname, port } = new URL(url);
    if (protocol === 'chrome-extension:' || protocol === 'data:') continue;
    if (listUrls.has(url)) {
      assert.equal(method, 'GET');
      continue;
    }
    assert.ok(protocol === 'https:' && hostname in FIXTURE_HOSTS && Number(port) === sites.port,
              `unexpected request to ${url}`);
    assert.equal(method, 'GET', url);
  }
  for (const { url, body } of [...browser.requests, ...lists.log, ...sites.log]) {
    for (const word of POST_WORDS) {
      assert.ok(!decodeURIComponent(url).toLowerCase().includes(word.toLowerCase()) &&
                !body.toLowerCase().includes(word.toLowerCase()), `post text "${word}" in a request to ${url}`);
    }
  }
  for (const entry of lists.log) {
    assert.equal(entry.method, 'GET');
    assert.ok(listUrls.has(`${lists.url}${entry.url}`), entry.url);
  }
  // The sites' server saw the pages' own files only.
  for (const entry of sites.log) {
    assert.match(entry.url, /^\/(|feed\/|feed\/sdui\.html|watch\?v=fx0001|site\.css|site\.js)$/, entry.url);
  }
  assert.deepEqual(errors, []);
});

// Last: it stops the service worker, and with it `browser.worker`.
test('the periodic update alarm is created once: a worker start keeps its schedule', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(`chrome-extension://${browser.id}/pages/options.html`);
    const alarm = () => page.evaluate(() => chrome.alarms.get('factlens-update'));
    const before = await alarm();
    assert.equal(before?.periodInMinutes, 30, JSON.stringify(before));
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    await page.waitForTimeout(500);
    // Woken by a message: the new worker's start ran, then answered.
    const answer = await page.evaluate(() => chrome.runtime.sendMessage({ type: 'status' }));
    assert.ok(answer.ok, JSON.stringify(answer));
    assert.deepEqual(await alarm(), before, 'a worker start did not move the alarm');
  } finally {
    await page.close();
  }
});
