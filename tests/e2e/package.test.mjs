// The npm package as users get it: `npm pack`, installed from the tarball into a fresh
// project, used from Node and from a page in headless Chromium (through the
// package's own "browser" export, under a strict CSP).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile, mkdir, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repo, launchChromium, startServer, watchErrors } from './helpers.mjs';

const run = promisify(execFile);
let dir;
let project;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'factlens-pack-'));
  project = join(dir, 'app');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('npm pack holds only what users need, and installs into a fresh project offline', async () => {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: repo });
  const [pack] = JSON.parse(stdout);
  const files = pack.files.map((f) => f.path).sort();
  assert.deepEqual(files, [
    'README.md', 'package.json', 'web/annotate.js', 'web/browser.js', 'web/dist/factlens-core.mjs',
    'web/dist/factlens-core.wasm', 'web/engine.js', 'web/index.d.ts', 'web/index.js',
    'web/ui/overlay.d.ts', 'web/ui/overlay.js',
  ]);
  console.log(`# npm pack: ${pack.filename} ${pack.size} bytes packed, ${pack.unpackedSize} unpacked, ${files.length} files`);
  await mkdir(project);
  await writeFile(join(project, 'package.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(dir, pack.filename)],
    { cwd: project });
  await copyFile(join(repo, 'rules/examples/demo.json'), join(project, 'demo.json'));
});

test('the installed package works from Node', async () => {
  await writeFile(join(project, 'check.mjs'), `
    import { readFileSync } from 'node:fs';
    import { createEngine, FactlensError, annotate } from 'factlens';
    const engine = await createEngine();
    engine.loadList(readFileSync('demo.json', 'utf8'), { allowUnsigned: true });
    const v = engine.check('5G towers are spreading the coronavirus!!');
    let kind = null;
    try { engine.loadList('{', { allowUnsigned: true }); } catch (e) { kind = e instanceof FactlensError && e.kind; }
    console.log(JSON.stringify({ action: v.action, rule: v.matches[0].ruleId, kind,
      annotate: typeof annotate, heap: engine.memoryStats().bytesInUse > 0 }));
    engine.dispose();
  `);
  const { stdout } = await run('node', ['check.mjs'], { cwd: project });
  assert.deepEqual(JSON.parse(stdout),
    { action: 'demote', rule: '5g-covid', kind: 'format', annotate: 'function', heap: true });
});

test('the installed package works in a page in headless Chromium, under a strict CSP', async () => {
  // A page resolves "factlens" the way a bundler would: through the package's own
  // "browser" export condition, here written into an import map.
  const pkg = JSON.parse(await readFile(join(project, 'node_modules/factlens/package.json'), 'utf8'));
  const entry = pkg.exports['.'].browser.replace(/^\.\//, '/node_modules/factlens/');
  const importMap = JSON.stringify({ imports: { factlens: entry } });
  await writeFile(join(project, 'index.html'), `<!doctype html><meta charset="utf-8">
<link rel="icon" href="data:,"><script type="importmap">${importMap}</script>
<script type="module" src="app.js"></script><div id="feed"><p class="post">5G towers are spreading the coronavirus!!</p></div>`);
  await writeFile(join(project, 'app.js'), `
    import { createEngine, annotate } from 'factlens';
    const engine = await createEngine();
    engine.loadList(await (await fetch('demo.json')).text(), { allowUnsigned: true });
    window.result = engine.check('The earth is flat and NASA knows it').action;
    annotate(document.getElementById('feed'), { engine, selector: '.post' }).flush();
    document.documentElement.dataset.ready = 'true';
  `);
  const hash = createHash('sha256').update(importMap).digest('base64');
  const server = await startServer({
    mounts: { '/': project },
    headers: { 'Content-Security-Policy':
      `default-src 'self'; script-src 'self' 'wasm-unsafe-eval' 'sha256-${hash}'; style-src 'self'; img-src data:` },
  });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors = watchErrors(page);
    const wasmTypes = [];
    page.on('response', (r) => { if (r.url().endsWith('.wasm')) wasmTypes.push(r.headers()['content-type']); });
    await page.goto(`${server.url}/index.html`);
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 15000 });
    assert.equal(await page.evaluate(() => window.result), 'demote');
    assert.equal(await page.$eval('[data-factlens-overlay]', (h) => h.dataset.state), 'demoted');
    assert.deepEqual(wasmTypes, ['application/wasm']);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
