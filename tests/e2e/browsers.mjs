// The packaged extension in both browsers the extension supports, behind one small
// page API, so that each extension scenario is written once and runs in both:
//   - Chromium: Debian's, through playwright-core (scripts/chromium.mjs);
//   - Firefox ESR: Debian's, through puppeteer-core over WebDriver BiDi. puppeteer-core
//     never downloads a browser; it drives /usr/lib/firefox-esr/firefox-esr.
//
// Requests: Chromium's context reports every request, the service worker's included.
// Firefox reports a page's own requests only, so Firefox runs behind a recording proxy
// (every http request it makes, from pages, content scripts or the background, goes
// through it; https is refused at CONNECT and logged) - the same proof in both.
import { createServer, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { pipeline } from 'node:stream';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { CHROMIUM_PATH, CHROMIUM_ARGS } from '../../scripts/chromium.mjs';

export const BROWSERS = ['chromium', 'firefox'];
export const FIREFOX_PATH = process.env.FACTLENS_FIREFOX ?? '/usr/lib/firefox-esr/firefox-esr';

// Firefox gives each installed extension a random moz-extension:// host; this pref pins
// ours (the id is the manifest's browser_specific_settings.gecko.id).
const GECKO_ID = 'factlens@factlens.invalid';
const FIREFOX_UUID = '3f0c6a52-8e1d-4b7a-9c26-5d1e0b7f4a90';

/** One page of either browser. */
class TestPage {
  #kind;
  constructor(kind, raw) {
    this.#kind = kind;
    this.raw = raw;
    this.errors = [];  // uncaught page errors
    raw.on('pageerror', (e) => this.errors.push(e.message ?? String(e)));
  }

  async goto(url) {
    await this.raw.goto(url);
  }

  evaluate(fn, arg) {
    return this.raw.evaluate(fn, arg);
  }

  /** Resolves when fn(arg) is truthy in the page; rejects after `timeout` ms. */
  waitForFunction(fn, arg, timeout = 10000) {
    return this.#kind === 'chromium'
      ? this.raw.waitForFunction(fn, arg, { timeout })
      : this.raw.waitForFunction(fn, { timeout, polling: 50 }, arg);
  }

  waitForSelector(selector, timeout = 15000) {
    return this.raw.waitForSelector(selector, { timeout });
  }

  click(selector) {
    return this.raw.click(selector);
  }

  textContent(selector) {
    return this.raw.evaluate((s) => document.querySelector(s)?.textContent ?? null, selector);
  }

  screenshot(path) {
    return this.raw.screenshot({ path, fullPage: true });
  }

  close() {
    return this.raw.close();
  }
}

// A forward proxy for plain http that logs every request (method, absolute URL, body)
// and passes it on to 127.0.0.1; anything else is refused (and logged), except https
// tunnels (CONNECT host:port) that `tunnel(host, port)` allows: those go to
// 127.0.0.1:port (the site fixtures under the sites' own names, tests/e2e/sites.mjs).
async function startRecordingProxy(log, tunnel) {
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    log.push({ url: req.url, method: req.method, body: body.toString('utf8'),
               headers: { ...req.headers } });
    let target;
    try {
      target = new URL(req.url);
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (target.protocol !== 'http:' || target.hostname !== '127.0.0.1') {
      res.writeHead(502).end();
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    const upstream = httpRequest({ host: '127.0.0.1', port: target.port, method: req.method,
                                   path: `${target.pathname}${target.search}`, headers }, (up) => {
      res.writeHead(up.statusCode, up.headers);
      // A response cut by the server is cut for the browser too.
      pipeline(up, res, (error) => { if (error) res.destroy(); });
    });
    upstream.on('error', () => res.destroy());
    upstream.end(body);
  });
  const tunnels = new Set();  // open CONNECT sockets: server.close() would wait for them
  server.on('connect', (req, socket, head) => {
    log.push({ url: `https://${req.url}/`, method: 'CONNECT', body: '', headers: { ...req.headers } });
    const m = req.url.match(/^([a-z0-9.-]+):(\d+)$/i);
    if (!m || !tunnel?.(m[1].toLowerCase(), Number(m[2]))) {
      socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      return;
    }
    const upstream = connect(Number(m[2]), '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head?.length) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    const end = () => { upstream.destroy(); socket.destroy(); tunnels.delete(end); };
    tunnels.add(end);
    upstream.on('error', end);
    socket.on('error', end);
    upstream.on('close', end);
    socket.on('close', end);
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return { port: server.address().port, close: () => new Promise((done) => {
    server.closeAllConnections();
    for (const end of tunnels) end();
    server.close(done);
  }) };
}

/**
 * Launches `browser` ('chromium' or 'firefox') with the unpacked extension at
 * `extension` and a fresh profile under `profile`. `tunnel(host, port)` (Firefox only)
 * lets https to those names through the recording proxy to 127.0.0.1:port, with
 * certificate errors accepted (the fixtures' throwaway certificate). Returns
 * { name, newPage(), openExtensionPage(path), requests, close() }; `requests` collects
 * { url, method, body } of every request the browser makes.
 */
export async function launchWithExtension(browser, { extension, profile, tunnel }) {
  await mkdir(profile, { recursive: true });
  const requests = [];
  if (browser === 'chromium') {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS, `--disable-extensions-except=${extension}`,
             `--load-extension=${extension}`],
    });
    context.on('request', (r) => requests.push({ url: r.url(), method: r.method(),
                                                 body: r.postData() ?? '' }));
    const worker = context.serviceWorkers()[0] ?? await context.waitForEvent('serviceworker');
    const origin = `chrome-extension://${new URL(worker.url()).host}`;
    return {
      name: browser, requests, origin,
      newPage: async () => new TestPage(browser, await context.newPage()),
      openExtensionPage: async (path) => {
        const page = new TestPage(browser, await context.newPage());
        await page.goto(`${origin}/${path}`);
        return page;
      },
      close: () => context.close(),
    };
  }
  if (browser !== 'firefox') throw new Error(`unknown browser ${browser}`);
  if (!existsSync(FIREFOX_PATH)) {
    throw new Error(`${FIREFOX_PATH} not found: run scripts/bootstrap.sh (installs Debian's firefox-esr)`);
  }
  const proxy = await startRecordingProxy(requests, tunnel);
  let instance;
  try {
    instance = await launchFirefox(profile, proxy.port, tunnel);
    await instance.installExtension(extension);
  } catch (error) {
    await instance?.close();
    await proxy.close();
    throw error;
  }
  const origin = `moz-extension://${FIREFOX_UUID}`;
  return {
    name: browser, requests, origin,
    newPage: async () => new TestPage(browser, await instance.newPage()),
    openExtensionPage: async (path) => {
      const raw = await instance.newPage();
      const url = `${origin}/${path}`;
      // BiDi navigates there but never reports the load of an extension page: start
      // the navigation, then wait until the page is the extension's.
      raw.goto(url, { timeout: 0 }).catch(() => {});
      const deadline = Date.now() + 15000;
      for (;;) {
        const href = await raw.evaluate(() => document.readyState === 'complete' && location.href)
          .catch(() => null);
        if (href === url) break;
        if (Date.now() > deadline) throw new Error(`${url} did not load`);
        await new Promise((done) => setTimeout(done, 50));
      }
      return new TestPage(browser, raw);
    },
    close: async () => {
      await instance.close();
      await proxy.close();
    },
  };
}

/** The directory screenshots and other artefacts of the e2e tests are saved in. */
export const artifactsDir = (repo) => join(repo, 'build/test-artifacts');

// Firefox's start, a fresh profile's first above all, has taken more than puppeteer's
// default 30 s on a loaded 2-core CI machine, before any of factlens runs. So the launch
// waits longer and, if Firefox still never says it is listening, is tried once more on
// an emptied profile, saying so on stderr. Only the launch is retried: the extension's
// install and every test step after it are not.
const FIREFOX_LAUNCH_TIMEOUT_MS = 90000;

async function launchFirefox(profile, proxyPort, tunnel) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await puppeteer.launch(firefoxLaunchOptions(profile, proxyPort, tunnel));
    } catch (error) {
      if (attempt === 2 || !/Timed out/.test(error.message)) throw error;
      process.stderr.write(`firefox did not start within ${FIREFOX_LAUNCH_TIMEOUT_MS} ms `
                           + `(${error.message}); trying once more on an emptied profile\n`);
      await rm(profile, { recursive: true, force: true });
      await mkdir(profile, { recursive: true });
    }
  }
}

function firefoxLaunchOptions(profile, proxyPort, tunnel) {
  return {
    timeout: FIREFOX_LAUNCH_TIMEOUT_MS,
    browser: 'firefox',
    executablePath: FIREFOX_PATH,
    headless: true,
    userDataDir: profile,
    // WebDriver BiDi's session capability: Firefox then accepts the fixtures'
    // self-signed certificate, HSTS-preloaded names (x.com, youtube.com...) included.
    acceptInsecureCerts: Boolean(tunnel),
    // Lets WebDriver BiDi navigate to moz-extension:// pages (the options page).
    args: ['--remote-allow-system-access'],
    // Release builds ignore services.settings.server (below) without it.
    env: { ...process.env, MOZ_REMOTE_SETTINGS_DEVTOOLS: '1' },
    extraPrefsFirefox: {
      'extensions.webextensions.uuids': JSON.stringify({ [GECKO_ID]: FIREFOX_UUID }),
      'network.proxy.type': 1,
      'network.proxy.http': '127.0.0.1',
      'network.proxy.http_port': proxyPort,
      'network.proxy.ssl': '127.0.0.1',
      'network.proxy.ssl_port': proxyPort,
      'network.proxy.no_proxies_on': '',
      'network.proxy.allow_hijacking_localhost': true,
      // Quiet, like CHROMIUM_ARGS: none of Firefox's own background requests, so that
      // the recording holds only what pages and the extension asked for.
      'services.settings.server': 'data:,#remote-settings-dummy/v1',
      'network.connectivity-service.enabled': false,
      'network.captive-portal-service.enabled': false,
      'browser.safebrowsing.malware.enabled': false,
      'browser.safebrowsing.phishing.enabled': false,
      'browser.safebrowsing.downloads.enabled': false,
      'browser.safebrowsing.blockedURIs.enabled': false,
      'browser.safebrowsing.provider.mozilla.updateURL': '',
      'extensions.update.enabled': false,
      'extensions.getAddons.cache.enabled': false,
      'app.update.enabled': false,
      'app.normandy.enabled': false,
      'datareporting.healthreport.uploadEnabled': false,
      'toolkit.telemetry.enabled': false,
      'browser.ping-centre.telemetry': false,
      'network.dns.disablePrefetch': true,
      'network.prefetch-next': false,
      'network.http.speculative-parallel-limit': 0,
    },
  };
}
