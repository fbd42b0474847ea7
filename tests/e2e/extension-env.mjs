// Shared by the extension's e2e scenarios (extension*.test.mjs): logging servers for the
// fixture pages and the lists, lists signed for the occasion with the real CLI, the
// packaged extension (unzipped from the zips `npm run package` writes, as a store
// would), and the page checks the scenarios share.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join, extname } from 'node:path';
import { repo } from './helpers.mjs';
import { launchWithExtension } from './browsers.mjs';
import { packageExtension } from '../../scripts/package-extension.mjs';

const run = promisify(execFile);
export const FACTLENS = join(repo, 'build/bin/factlens');
export const DEMO_SECRET = join(repo, 'rules/keys/demo-secret-DEMO-ONLY-UNTRUSTED.key');
export const DEMO_PUB = join(repo, 'rules/keys/demo.pub');
export const FIXTURES = join(repo, 'tests/fixtures/extension');
export const ARTIFACTS = join(repo, 'build/test-artifacts');
// Words of the fixture feed's posts: none may appear in any request.
export const POST_WORDS = ['coronavirus', 'sunset', 'sterilisation', 'cats are secretly', 'turbines',
                           'bakery', 'v4ccine', 'garden club', 'picnic'];
// What the fixture feed shows with the demo list.
export const FEED_EXPECTED = [['x1', 'demoted'], ['x3', 'hidden'], ['x4', 'label'], ['g1', 'label'],
                              ['f1', 'demoted']];

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8' };

/**
 * A server that logs every request ({ method, url, body, headers }). `routes` maps a
 * path to `async (req) => reply`, reply being { status = 200, type, body, headers } or
 * { cut: true, type, body }: the headers announce the whole body, half of it is sent,
 * and the connection is closed.
 */
export async function serve(routes) {
  const log = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    log.push({ method: req.method, url: req.url, body, headers: { ...req.headers } });
    const route = routes[req.url];
    if (req.method !== 'GET' || !route) {
      res.writeHead(404).end();
      return;
    }
    const reply = await route(req);
    const data = Buffer.from(reply.body ?? '');
    const headers = { 'cache-control': 'no-store', ...(reply.type ? { 'content-type': reply.type } : {}),
                      ...reply.headers };
    if (reply.cut) {
      res.writeHead(200, { ...headers, 'content-length': data.length });
      res.write(data.subarray(0, data.length >> 1));
      setTimeout(() => res.socket.destroy(), 50);
      return;
    }
    res.writeHead(reply.status ?? 200, headers).end(reply.status === 304 ? undefined : data);
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return { log, url: `http://127.0.0.1:${server.address().port}`, routes,
           close: () => new Promise((done) => { server.closeAllConnections(); server.close(done); }) };
}

/** A route serving a file of the repository. */
export const file = (path) => async () => ({ type: TYPES[extname(path)] ?? 'text/plain; charset=utf-8',
                                             body: await readFile(path) });

/** The fixture feed's server. */
export const serveFeed = () => serve({ '/feed.html': file(join(FIXTURES, 'feed.html')),
                                       '/feed.js': file(join(FIXTURES, 'feed.js')) });

/** The demo list as the tests serve it (build/demo/, signed by scripts/sign-demo.sh). */
export async function demoFiles() {
  return { text: await readFile(join(repo, 'build/demo/demo.json'), 'utf8'),
           signature: await readFile(join(repo, 'build/demo/demo.json.minisig'), 'utf8') };
}

/** Writes `list` (an object) to dir/name.json, signs it with `secret` (the demo key by
 *  default) using the CLI, and returns { text, signature }. */
export async function signList(dir, name, list, secret = DEMO_SECRET) {
  const path = join(dir, `${name}.json`);
  await mkdir(dir, { recursive: true });
  await writeFile(path, `${JSON.stringify(list, null, 2)}\n`);
  await run(FACTLENS, ['sign', '-s', secret, '-m', path, '-t', `factlens test list ${name}`]);
  return { text: await readFile(path, 'utf8'), signature: await readFile(`${path}.minisig`, 'utf8') };
}

/** Returns a parsed copy of the demo list. */
export const demoList = async () => JSON.parse((await demoFiles()).text);

/** A route that serves `files()[key]` (so a test can swap what is served). */
export const listRoute = (get, type = 'application/json') => async () => ({ type, body: get() });

/**
 * Packages the extension with the list at `listUrl` as its default, test-only http
 * and hooks allowed, and unzips the two zips into dir/unzipped/. Returns
 * { chromium, firefox } folders.
 */
export async function packageForTests(dir, listUrl) {
  const packaged = await packageExtension({
    out: join(dir, 'dist'), defaultList: listUrl, trustedKey: DEMO_PUB, allowHttp: true,
    testHooks: true,
  });
  const out = {};
  for (const browser of ['chromium', 'firefox']) {
    out[browser] = join(dir, 'unzipped', browser);
    await mkdir(out[browser], { recursive: true });
    await run('unzip', ['-q', '-o', packaged.zips[browser], '-d', out[browser]]);
  }
  return out;
}

/** Launches `browser` with the extension and a fresh profile named `name`. */
export const launch = (browser, extensions, dir, name) =>
  launchWithExtension(browser, { extension: extensions[browser], profile: join(dir, `${browser}-${name}`) });

/** Opens the options page once the default subscription reached `state`. */
export async function options(session, state) {
  const page = await session.openExtensionPage('pages/options.html');
  await page.waitForSelector(`#subs li[data-state="${state}"]`);
  return page;
}

/** Sends a message to the background from an extension page; returns the answer. */
export const ask = (page, message) => page.evaluate((m) => chrome.runtime.sendMessage(m), message);

/** The default subscription's status, asked of the background. */
export async function subscription(page) {
  const answer = await ask(page, { type: 'status' });
  assert.ok(answer.ok, JSON.stringify(answer));
  return answer.subscriptions[0];
}

/** Returns [[post, overlay state]] for every overlay on the page, in document order. */
export const overlays = (page) => page.evaluate(() =>
  [...document.querySelectorAll('[data-factlens-overlay]')].map((host) =>
    [host.nextElementSibling?.dataset.post ?? null, host.dataset.state]));

/** Waits until the page's overlays are `expected`; fails with the difference. */
export async function waitOverlays(page, expected, timeout = 10000) {
  try {
    await page.waitForFunction((want) => JSON.stringify(
      [...document.querySelectorAll('[data-factlens-overlay]')].map((host) =>
        [host.nextElementSibling?.dataset.post ?? null, host.dataset.state])) === want,
    JSON.stringify(expected), timeout);
  } catch {
    assert.deepEqual(await overlays(page), expected);
  }
}

export const displayOf = (page, post) => page.evaluate((p) =>
  getComputedStyle(document.querySelector(`[data-post="${p}"]`)).display, post);
export const styleOf = (page, post) => page.evaluate((p) =>
  document.querySelector(`[data-post="${p}"]`).getAttribute('style'), post);

/** Opens the fixture feed and waits for the demo list's labels. */
export async function openFeed(session, pages, expected = FEED_EXPECTED) {
  const page = await session.newPage();
  await page.goto(`${pages.url}/feed.html`);
  await waitOverlays(page, expected);
  return page;
}

/** The fixture site's own script still works. */
export async function assertSiteScriptWorks(page) {
  const before = await page.textContent('#counter');
  const clicks = Number(before.match(/\d+/)[0]);
  await page.click('#counter');
  assert.equal(await page.textContent('#counter'), `clicked ${clicks + 1} times`);
}
