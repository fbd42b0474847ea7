// The packaged extension in real headless Chromium and Firefox ESR (browsers.mjs), each
// scenario run in both, from the zip files `npm run package` writes (unzipped, as a
// store would): the default list (signed with the demo key, served on 127.0.0.1 from
// another origin than the page) is downloaded, verified and used; X-like and generic
// posts are labelled, demoted and hidden and the others left alone; re-rendered and
// recycled posts keep the right label; a list update is applied without a reload; a
// list whose signature fails or that expired is refused and shown; and no request
// carries post text or leaves the page's origin except the list and signature
// downloads.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFile, mkdtemp, rm, mkdir } from 'node:fs/promises';
import { join, extname } from 'node:path';
import { tmpdir } from 'node:os';
import { repo } from './helpers.mjs';
import { BROWSERS, launchWithExtension } from './browsers.mjs';
import { packageExtension } from '../../scripts/package-extension.mjs';

const FIXTURES = join(repo, 'tests/fixtures/extension');
const ARTIFACTS = join(repo, 'build/test-artifacts');
const POST_WORDS = ['coronavirus', 'sunset', 'sterilisation', 'cats are secretly', 'turbines',
                    'bakery', 'v4ccine', 'garden club', 'picnic'];

// A tiny server that logs every request it gets; `routes` maps paths to bodies.
async function serve(routes) {
  const log = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    log.push({ method: req.method, url: req.url, body });
    const route = routes[req.url];
    if (req.method !== 'GET' || !route) {
      res.writeHead(404).end();
      return;
    }
    const { type, data } = await route();
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(data);
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return { log, url: `http://127.0.0.1:${server.address().port}`,
           close: () => new Promise((done) => server.close(done)) };
}

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8' };
const file = (path) => async () => ({ type: TYPES[extname(path)] ?? 'text/plain; charset=utf-8',
                                      data: await readFile(path) });

let pages;
let lists;
let listMode = 'good';  // what the list server serves: 'good' or 'tampered' bytes
let dir;
let packaged;
const demoList = () => readFile(join(repo, 'build/demo/demo.json'), 'utf8');

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  pages = await serve({ '/feed.html': file(join(FIXTURES, 'feed.html')),
                        '/feed.js': file(join(FIXTURES, 'feed.js')) });
  lists = await serve({
    // Tampered: the same signature over other bytes (a claim rewritten in transit).
    '/demo.json': async () => ({ type: 'application/json', data: listMode === 'good'
      ? await demoList() : (await demoList()).replace('"rating": "satire"', '"rating": "false"') }),
    '/demo.json.minisig': file(join(repo, 'build/demo/demo.json.minisig')),
  });
  dir = await mkdtemp(join(tmpdir(), 'factlens-ext-'));
  packaged = await packageExtension({
    out: join(dir, 'dist'), defaultList: `${lists.url}/demo.json`,
    trustedKey: join(repo, 'rules/keys/demo.pub'), allowHttp: true,
  });
});
after(async () => {
  await pages?.close();
  await lists?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function launch(name) {
  const extension = packaged.chromium;
  const context = await chromium.launchPersistentContext(join(dir, name), {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS, `--disable-extensions-except=${extension}`,
           `--load-extension=${extension}`],
  });
  const requests = [];
  context.on('request', (r) => requests.push({ url: r.url(), body: r.postData() ?? '' }));
  const worker = context.serviceWorkers()[0] ?? await context.waitForEvent('serviceworker');
  const id = new URL(worker.url()).host;
  return { context, requests, worker, id };
}

// The options page, once the background has settled the default subscription.
async function options(context, id, state) {
  const page = await context.newPage();
  await page.goto(`chrome-extension://${id}/pages/options.html`);
  await page.waitForSelector(`#subs li[data-state="${state}"]`, { timeout: 15000 });
  return page;
}

const overlays = (page) => page.evaluate(() =>
  [...document.querySelectorAll('[data-factlens-overlay]')].map((host) =>
    [host.nextElementSibling?.dataset.post ?? null, host.dataset.state]));
const displayOf = (page, post) => page.evaluate((p) =>
  getComputedStyle(document.querySelector(`[data-post="${p}"]`)).display, post);
const styleOf = (page, post) => page.evaluate((p) =>
  document.querySelector(`[data-post="${p}"]`).getAttribute('style'), post);
const waitOverlays = (page, expected) => page.waitForFunction((want) => JSON.stringify(
  [...document.querySelectorAll('[data-factlens-overlay]')].map((host) =>
    [host.nextElementSibling?.dataset.post ?? null, host.dataset.state])) === want,
  JSON.stringify(expected), { timeout: 10000 }).catch(async () => {
  assert.deepEqual(await overlays(page), expected);
});

test('labels, demotes and hides the right posts with the signed default list', async () => {
  listMode = 'good';
  const { context, requests, id } = await launch('profile-good');
  try {
    const settings = await options(context, id, 'ok');
    assert.match(await settings.textContent('#subs'), /factlens demo list/);

    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${pages.url}/feed.html`);
    const expected = [['x1', 'demoted'], ['x3', 'hidden'], ['x4', 'label'], ['g1', 'label'],
                      ['f1', 'demoted']];
    await waitOverlays(page, expected);
    await page.screenshot({ path: join(ARTIFACTS, 'extension-chromium-feed.png'), fullPage: true });
    // Demoted and hidden posts collapse; labelled and unmatched ones stay as they were.
    for (const post of ['x1', 'x3', 'f1']) assert.equal(await displayOf(page, post), 'none');
    for (const post of ['x4', 'g1']) assert.equal(await displayOf(page, post), 'block');
    for (const post of ['x2', 'g2', 'f2']) {
      assert.equal(await styleOf(page, post), null, `${post} untouched`);
      assert.equal(await page.evaluate((p) => document.querySelector(`[data-post="${p}"]`)
        .previousElementSibling?.hasAttribute('data-factlens-overlay') ?? false, post), false);
    }
    // The site's own script still works.
    await page.click('#counter');
    assert.equal(await page.textContent('#counter'), 'clicked 1 times');

    // Re-render: the cell's nodes are replaced; the new post gets its label back, once.
    await page.evaluate(() => window.rerenderCell('cell-4'));
    await waitOverlays(page, expected);
    assert.equal(await page.evaluate(() =>
      document.querySelectorAll('#cell-4 [data-factlens-overlay]').length), 1);

    // Recycling: cell-1's nodes now show another (harmless) post, cell-2's a hidden one.
    await page.evaluate(() => {
      window.recycleCell('cell-1', { text: 'A picnic in the park with friends', status: 2001, author: 'erin' });
      window.recycleCell('cell-2', { text: 'Ampara restaurant putting sterilisation pills in the food',
                                     status: 2002, author: 'finn' });
    });
    await waitOverlays(page, [['x2002', 'hidden'], ['x3', 'hidden'], ['x4', 'label'],
                              ['g1', 'label'], ['f1', 'demoted']]);
    assert.equal(await styleOf(page, 'x2001'), null, 'recycled post given back its display');
    assert.equal(await displayOf(page, 'x2002'), 'none');

    // An update whose signature fails is refused and shown; the last good list stays.
    listMode = 'tampered';
    await settings.click('#update');
    await settings.waitForSelector('#subs li[data-state="update-failed"]', { timeout: 10000 });
    assert.match(await settings.textContent('#subs li .error'), /signature/i);
    await settings.screenshot({ path: join(ARTIFACTS, 'extension-chromium-options-refused.png') });
    await page.evaluate(() => window.rerenderCell('cell-4'));
    await waitOverlays(page, [['x2002', 'hidden'], ['x3', 'hidden'], ['x4', 'label'],
                              ['g1', 'label'], ['f1', 'demoted']]);
    assert.deepEqual(errors, []);

    // Privacy: only the list and its signature leave the page's origin, no request
    // carries post text, and the list server saw nothing but those two downloads.
    const allowed = new Set([`${lists.url}/demo.json`, `${lists.url}/demo.json.minisig`]);
    // The recording sees the service worker's downloads too (so it would see others).
    assert.ok(requests.some((r) => r.url === `${lists.url}/demo.json.minisig`), 'worker requests recorded');
    for (const { url, body } of requests) {
      const { protocol, origin } = new URL(url);
      if (protocol === 'chrome-extension:' || origin === pages.url) continue;
      assert.ok(allowed.has(url), `unexpected request to ${url}`);
    }
    for (const { url, body } of [...requests, ...lists.log, ...pages.log]) {
      for (const word of POST_WORDS) {
        assert.ok(!decodeURIComponent(url).includes(word) && !body.includes(word),
                  `post text "${word}" in a request to ${url}`);
      }
    }
    assert.ok(lists.log.length >= 4, 'two downloads at install and two at the update');
    for (const entry of lists.log) {
      assert.equal(entry.method, 'GET');
      assert.equal(entry.body, '');
      assert.ok(['/demo.json', '/demo.json.minisig'].includes(entry.url), entry.url);
    }
    assert.deepEqual([...new Set(pages.log.map((e) => e.url))].sort(), ['/feed.html', '/feed.js']);
  } finally {
    await context.close();
  }
});

test('a list whose signature fails is never used', async () => {
  listMode = 'tampered';
  const { context, id } = await launch('profile-tampered');
  try {
    const settings = await options(context, id, 'refused');
    assert.match(await settings.textContent('#subs li .error'), /signature/i);
    const page = await context.newPage();
    await page.goto(`${pages.url}/feed.html`);
    // Give the content script time to find and send the posts; nothing may be drawn.
    await page.waitForTimeout(1500);
    assert.deepEqual(await overlays(page), []);
    assert.equal(await styleOf(page, 'x3'), null);
  } finally {
    await context.close();
  }
});
