// Shared by tests/e2e/sites.test.mjs and scripts/bench-extension.mjs: the fixture
// copies of the feeds in tests/fixtures/sites/, served over https under the sites' own
// host names (Chromium maps those names to 127.0.0.1 and refuses every other name, so
// nothing can reach the real sites), a logging list server, and Chromium with the
// packaged extension.
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createHttpServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { join, extname, normalize, sep } from 'node:path';
import { tmpdir } from 'node:os';
import { chromium } from 'playwright-core';
import { CHROMIUM_PATH, CHROMIUM_ARGS } from '../../scripts/chromium.mjs';
import { repo } from './helpers.mjs';

export const SITES_DIR = join(repo, 'tests/fixtures/sites');

// The sites' strict policies (X and YouTube run with Trusted Types): the extension
// must work where the page may not eval, inline or build HTML from strings.
const STRICT_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; require-trusted-types-for 'script'; " +
  "trusted-types 'none'";

/** Fixture host name -> { dir, csp? }. The Mastodon fixture runs on a host with no
 *  famous name: the adapter must know Mastodon by its markup. */
export const FIXTURE_HOSTS = Object.freeze({
  'x.com': { dir: 'x', csp: STRICT_CSP },
  'www.facebook.com': { dir: 'facebook' },
  'www.reddit.com': { dir: 'reddit' },
  'old.reddit.com': { dir: 'reddit-old' },
  'social.factlens.test': { dir: 'mastodon' },
  'bsky.app': { dir: 'bluesky' },
  'www.youtube.com': { dir: 'youtube', csp: STRICT_CSP },
  'www.threads.net': { dir: 'threads' },
  'www.linkedin.com': { dir: 'linkedin' },
  'feed.factlens.test': { dir: 'bench' },
});

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
                '.css': 'text/css; charset=utf-8', '.json': 'application/json; charset=utf-8' };

// A throwaway self-signed certificate (the browser is told to ignore certificate
// errors; https is needed because these host names are HSTS-preloaded).
function certificate(dir) {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
    '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=factlens-fixtures'],
  { stdio: 'ignore' });
  return { key, cert };
}

/** Serves the fixture sites over https by Host header; logs every request.
 *  `extra(host, path)` may answer paths the folders do not have (generated pages).
 *  Returns { port, url(host, path), log, close() }. */
export async function startSiteServer({ extra } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'factlens-sites-'));
  const { key, cert } = certificate(dir);
  const log = [];
  const server = createHttpsServer({ key: await readFile(key), cert: await readFile(cert) },
    async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      log.push({ host, method: req.method, url: req.url, body });
      const site = FIXTURE_HOSTS[host];
      const { pathname } = new URL(req.url, 'https://fixture');
      const headers = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff',
                        ...(site?.csp ? { 'content-security-policy': site.csp } : {}) };
      const generated = req.method === 'GET' && (await extra?.(host, pathname));
      if (generated) {
        res.writeHead(200, { ...headers, 'content-type': generated.type }).end(generated.data);
        return;
      }
      const root = site && join(SITES_DIR, site.dir);
      let file = root && normalize(join(root, decodeURIComponent(pathname)));
      if (file && (await stat(file).catch(() => null))?.isDirectory()) file = join(file, 'index.html');
      // Single-page apps answer their routes (/watch, /feed/) with the app's page.
      if (file && !extname(file) && !(await stat(file).catch(() => null))) file = join(root, 'index.html');
      if (req.method !== 'GET' || !file || !file.startsWith(root + sep) ||
          !(await stat(file).catch(() => null))?.isFile()) {
        res.writeHead(404, headers).end();
        return;
      }
      res.writeHead(200, { ...headers, 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' })
        .end(await readFile(file));
    });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address();
  return {
    port,
    log,
    url: (host, path = '/') => `https://${host}:${port}${path}`,
    close: async () => {
      server.closeAllConnections?.();
      await new Promise((done) => server.close(done));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A plain http server on 127.0.0.1 answering `routes` (path -> async () => {type,
 *  data}); logs every request (method, url, body). */
export async function startListServer(routes) {
  const log = [];
  const server = createHttpServer(async (req, res) => {
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
           close: () => { server.closeAllConnections?.(); return new Promise((done) => server.close(done)); } };
}

/** Launches Chromium with the unpacked extension at `extension`, the fixture host names
 *  mapped to 127.0.0.1 and every other name unresolvable. Records every request the
 *  pages and the extension's worker make. Returns { context, requests, worker, id }. */
export async function launchWithExtension(extension, profile) {
  const rules = [...Object.keys(FIXTURE_HOSTS).map((h) => `MAP ${h} 127.0.0.1`),
                 'EXCLUDE 127.0.0.1', 'MAP * ~NOTFOUND'].join(', ');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    ignoreHTTPSErrors: true,
    viewport: { width: 1000, height: 800 },
    args: [...CHROMIUM_ARGS, `--disable-extensions-except=${extension}`,
           `--load-extension=${extension}`, `--host-resolver-rules=${rules}`],
  });
  const requests = [];
  context.on('request', (r) => requests.push({ url: r.url(), method: r.method(), body: r.postData() ?? '' }));
  const worker = context.serviceWorkers()[0] ?? await context.waitForEvent('serviceworker');
  const id = new URL(worker.url()).host;
  return { context, requests, worker, id };
}

/** Waits until the options page shows the default subscription in `state`. */
export async function waitSubscription(context, id, state, timeout = 30000) {
  const page = await context.newPage();
  await page.goto(`chrome-extension://${id}/pages/options.html`);
  await page.waitForSelector(`#subs li[data-state="${state}"]`, { timeout });
  return page;
}
