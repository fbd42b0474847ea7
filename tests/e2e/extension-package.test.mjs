// `npm run package`: the unpacked folders and their zip files, checked as the stores and
// browsers would take them:
//   - each zip holds exactly the files of its folder, byte for byte, in sorted order,
//     with the manifest for its browser (the zips' loading in real browsers is the
//     subject of extension*.test.mjs, which run from the unzipped zips);
//   - the same inputs give the same zip bytes;
//   - a failed run leaves the previous package untouched and no temporary files;
//   - `web-ext lint` (npm web-ext, Mozilla's own linter) passes for dist/firefox/ with
//     warnings counted as errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, rm, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import webExt from 'web-ext';
import { repo } from './helpers.mjs';
import { packageExtension, listFiles } from '../../scripts/package-extension.mjs';

const run = promisify(execFile);
let dir;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'factlens-package-'));
});
after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const options = (out) => ({ out, defaultList: 'https://lists.example/demo.json',
                            trustedKey: join(repo, 'rules/keys/demo.pub'), allowHttp: false,
                            testHooks: false });

test('npm run package writes both folders and zips that hold exactly the same files', async () => {
  const { stdout } = await run('node', [join(repo, 'scripts/package-extension.mjs'),
    '--default-list', 'https://lists.example/demo.json', '--trusted-key', join(repo, 'rules/keys/demo.pub'),
    '--out', join(dir, 'cli')]);
  assert.match(stdout, /chromium: .*cli\/chromium and .*cli\/factlens-chromium\.zip/);
  assert.deepEqual((await readdir(join(dir, 'cli'))).sort(),
                   ['chromium', 'factlens-chromium.zip', 'factlens-firefox.zip', 'firefox']);
  for (const browser of ['chromium', 'firefox']) {
    const folder = join(dir, 'cli', browser);
    const zip = join(dir, 'cli', `factlens-${browser}.zip`);
    const files = await listFiles(folder);
    const { stdout: listing } = await run('unzip', ['-Z1', zip]);
    assert.deepEqual(listing.trim().split('\n'), files, `${browser}: the zip's entries, in order`);
    for (const file of files) {
      const { stdout: bytes } = await run('unzip', ['-p', zip, file], { encoding: 'buffer', maxBuffer: 2 ** 26 });
      assert.ok(bytes.equals(await readFile(join(folder, file))), `${browser}: ${file}`);
    }
    const manifest = JSON.parse(await readFile(join(folder, 'manifest.json'), 'utf8'));
    assert.equal(manifest.version, JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')).version);
    assert.deepEqual(manifest.host_permissions, ['https://lists.example/*']);
    if (browser === 'chromium') {
      assert.deepEqual(manifest.background, { service_worker: 'background.js', type: 'module' });
      assert.equal(manifest.browser_specific_settings, undefined);
    } else {
      assert.deepEqual(manifest.background, { scripts: ['background.js'], type: 'module' });
      assert.equal(manifest.browser_specific_settings.gecko.id, 'factlens@factlens.invalid');
    }
    const config = await readFile(join(folder, 'config.js'), 'utf8');
    assert.match(config, /"testHooks": false/);
    assert.match(config, /"testAllowHttpDefaultList": false/);
    assert.ok(files.includes('engine/dist/factlens-core.wasm'));
  }
});

test('the same inputs give the same zip bytes', async () => {
  const a = await packageExtension(options(join(dir, 'a')));
  const b = await packageExtension(options(join(dir, 'b')));
  for (const browser of ['chromium', 'firefox']) {
    assert.ok((await readFile(a.zips[browser])).equals(await readFile(b.zips[browser])), browser);
  }
});

test('a failed run leaves the previous package as it was', async () => {
  const out = join(dir, 'atomic');
  const first = await packageExtension(options(out));
  const before = {};
  for (const browser of ['chromium', 'firefox']) before[browser] = await readFile(first.zips[browser]);
  const badKey = join(dir, 'bad.pub');
  await writeFile(badKey, 'untrusted comment: not a key\nnope\n');
  await assert.rejects(packageExtension({ ...options(out), trustedKey: badKey }), /not a minisign public key/);
  // Fails late: zip is not on PATH, after both folders were filled.
  const path = process.env.PATH;
  process.env.PATH = '/nonexistent';
  try {
    await assert.rejects(packageExtension({ ...options(out), defaultList: 'https://other.example/l.json' }),
                         /zip/);
  } finally {
    process.env.PATH = path;
  }
  assert.deepEqual((await readdir(out)).sort(),
                   ['chromium', 'factlens-chromium.zip', 'factlens-firefox.zip', 'firefox']);
  for (const browser of ['chromium', 'firefox']) {
    assert.ok((await readFile(first.zips[browser])).equals(before[browser]), browser);
    const manifest = JSON.parse(await readFile(join(out, browser, 'manifest.json'), 'utf8'));
    assert.deepEqual(manifest.host_permissions, ['https://lists.example/*']);
  }
});

test('web-ext lint passes for the Firefox package, warnings counted as errors', async () => {
  const packaged = await packageExtension(options(join(dir, 'lint')));
  const result = await webExt.cmd.lint({
    sourceDir: packaged.firefox, output: 'json', metadata: false, pretty: false,
    warningsAsErrors: true, selfHosted: false, boring: true,
  }, { shouldExitProgram: false });
  const found = [...result.errors, ...result.warnings, ...result.notices]
    .map((m) => `${m.code}: ${m.message} (${m.file ?? ''})`);
  assert.deepEqual(found, []);
  assert.deepEqual(result.summary, { errors: 0, notices: 0, warnings: 0 });
});
