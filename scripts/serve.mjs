// A small static server for the demo (web/) and the e2e tests: correct MIME types
// (application/wasm, so browsers can stream-compile), a CSP that allows wasm but no
// eval and no inline script, and no path outside the folders it was given.
//
//   node scripts/serve.mjs [--port N] [--screenshot FILE]
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { realpath, stat, rename, writeFile } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.minisig': 'text/plain; charset=utf-8',
  '.pub': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.md': 'text/plain; charset=utf-8',
};

/** The policy the demo runs under, and the one web/README.md recommends. */
export const CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self' https:",  // signed lists by URL: https only
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Starts serving. `mounts` maps URL prefixes ('/', '/lists/') to folders; the longest
 * matching prefix wins. Returns { server, url, close() }.
 * @param {{ mounts: Record<string, string>, port?: number, host?: string,
 *           index?: string, headers?: Record<string, string> }} options
 */
export async function startServer({ mounts, port = 0, host = '127.0.0.1', index = '/',
                                    headers = {} }) {
  const prefixes = Object.keys(mounts).sort((a, b) => b.length - a.length);
  // A mount may be a folder or a single file; one not there yet (build/demo before
  // sign-demo.sh ran) answers 404.
  const roots = Object.fromEntries(await Promise.all(prefixes.map(async (p) =>
    [p, await realpath(mounts[p]).catch(() => null)])));

  async function resolve(urlPath) {
    const prefix = prefixes.find((p) => urlPath.startsWith(p));
    if (!prefix) return null;
    const base = roots[prefix];
    if (!base) return null;
    let file = join(base, decodeURIComponent(urlPath.slice(prefix.length)));
    let info = await stat(file).catch(() => null);
    if (info?.isDirectory()) {
      file = join(file, 'index.html');
      info = await stat(file).catch(() => null);
    }
    if (!info?.isFile()) return null;
    const real = await realpath(file);
    // No escape through "..", encoded slashes or symlinks.
    return real === base || real.startsWith(base + sep) ? { file: real, size: info.size } : null;
  }

  const server = createServer(async (req, res) => {
    const common = {
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      ...headers,
    };
    try {
      const { pathname } = new URL(req.url, 'http://localhost');
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { ...common, Allow: 'GET, HEAD' }).end();
        return;
      }
      if (pathname === '/' && index !== '/') {
        res.writeHead(302, { ...common, Location: index }).end();
        return;
      }
      if (pathname.endsWith('/') === false && !extname(pathname)) {
        const dir = await resolve(pathname + '/');
        if (dir) {
          res.writeHead(301, { ...common, Location: pathname + '/' }).end();
          return;
        }
      }
      const found = await resolve(pathname);
      if (!found) {
        res.writeHead(404, { ...common, 'Content-Type': 'text/plain; charset=utf-8' })
          .end(`not found: ${pathname}\n`);
        return;
      }
      res.writeHead(200, {
        ...common,
        'Content-Type': MIME[extname(found.file)] ?? 'application/octet-stream',
        'Content-Length': found.size,
      });
      if (req.method === 'HEAD') res.end();
      else createReadStream(found.file).pipe(res);
    } catch (error) {
      res.writeHead(400, { ...common, 'Content-Type': 'text/plain; charset=utf-8' })
        .end(`bad request: ${error.message}\n`);
    }
  });
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, ok);
  });
  const url = `http://${host}:${server.address().port}`;
  return {
    server,
    url,
    close: () => new Promise((ok) => { server.closeAllConnections(); server.close(ok); }),
  };
}

const repo = fileURLToPath(new URL('..', import.meta.url));
/** What `npm start` serves: web/ at the root, the example lists under /lists/, the
 *  demo list as signed by scripts/sign-demo.sh under /signed/, and the demo public
 *  key (only that file: rules/keys/ also holds the demo's secret key). */
export const DEMO_MOUNTS = {
  '/': join(repo, 'web'),
  '/lists/': join(repo, 'rules/examples'),
  '/signed/': join(repo, 'build/demo'),
  '/keys/demo.pub': join(repo, 'rules/keys/demo.pub'),
};

/** Renders the demo in headless Chromium and writes a PNG to `file` (via a temp name). */
export async function screenshotDemo(url, file) {
  const { launchChromium } = await import('./chromium.mjs');
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true'
      || document.documentElement.dataset.error, null, { timeout: 30000 });
    const failure = await page.evaluate(() => document.documentElement.dataset.error);
    if (failure || errors.length) throw new Error(`demo failed: ${failure ?? errors.join('; ')}`);
    const png = await page.screenshot({ fullPage: true });
    const temp = `${file}.tmp-${process.pid}`;
    await writeFile(temp, png);
    await rename(temp, file);
    return png.length;
  } finally {
    await browser.close();
  }
}

async function main(argv) {
  let port = Number(process.env.PORT ?? 8719);
  let screenshot = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--port') port = Number(argv[++i]);
    else if (argv[i] === '--screenshot') screenshot = argv[++i];
    else {
      console.error(`serve: unknown option ${argv[i]}\nusage: npm start -- [--port N] [--screenshot FILE]`);
      process.exit(2);
    }
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error('serve: --port needs a number from 0 to 65535');
    process.exit(2);
  }
  if (screenshot === undefined || screenshot === '') {
    console.error('serve: --screenshot needs a file name');
    process.exit(2);
  }
  let served;
  try {
    served = await startServer({ mounts: DEMO_MOUNTS, port: screenshot ? 0 : port, index: '/demo/' });
  } catch (error) {
    if (error.code !== 'EADDRINUSE') throw error;
    console.error(`serve: port ${port} is taken; using a free one`);
    served = await startServer({ mounts: DEMO_MOUNTS, port: 0, index: '/demo/' });
  }
  const url = `${served.url}/demo/`;
  if (screenshot) {
    try {
      const bytes = await screenshotDemo(url, screenshot);
      console.log(`factlens: wrote ${screenshot} (${bytes} bytes) from ${url}`);
    } finally {
      await served.close();
    }
    return;
  }
  console.log(`factlens demo and rule playground: ${url}  (Ctrl-C stops)`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(`serve: ${error.stack ?? error}`);
    process.exit(1);
  });
}
