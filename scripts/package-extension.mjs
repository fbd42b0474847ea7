// Packages the browser extension: unpacked dist/chromium/ and dist/firefox/ from
// extension/ plus the npm package's own engine and overlay files (web/), so the
// extension runs exactly the code the package ships, and their zip files
// dist/factlens-chromium.zip and dist/factlens-firefox.zip (what the stores take).
//
//   npm run package -- [--default-list URL --trusted-key FILE] [--out DIR]
//                      [--test-allow-http-default-list] [--test-hooks]
//
// --default-list/--trusted-key bake a subscription in (managed deployments, tests); the
// key is pinned like any subscription's. Lists are fetched over https only; the e2e
// tests alone pass --test-allow-http-default-list, which lets the baked-in URL (and its
// .minisig and .rotation files, keyed ones too, no other) be http://127.0.0.1, and
// --test-hooks, which lets the extension's own pages move the background's clock and
// inject engine faults (background.js). Neither is ever in a release build.
//
// One manifest source serves both browsers; each package gets its own copy: Chromium's
// without `background.scripts` and the Gecko settings, Firefox's without
// `background.service_worker` (which Firefox ignores and web-ext lint flags).
//
// Everything is written under temporary names and renamed into place once all four
// outputs are complete, so a failed run leaves the previous package as it was. The zips
// are built by Debian's `zip` (scripts/bootstrap.sh) from a sorted file list with fixed
// timestamps and no extra attributes: the same inputs give the same bytes.
import { cp, mkdir, readFile, rename, rm, writeFile, readdir, stat, utimes } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../', import.meta.url));
export const BROWSERS = ['chromium', 'firefox'];

const usage = 'usage: npm run package -- [--default-list URL --trusted-key FILE] [--out DIR] ' +
  '[--test-allow-http-default-list] [--test-hooks]';

// Every file in a zip gets this modification time (zip stores local time: TZ=UTC below).
const ZIP_TIME = new Date('2026-01-01T00:00:00Z');

class UsageError extends Error {}

export function parseArgs(argv) {
  const options = { out: join(repo, 'dist'), defaultList: null, trustedKey: null, allowHttp: false,
                    testHooks: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value\n${usage}`);
      return argv[++i];
    };
    if (arg === '--default-list') options.defaultList = value();
    else if (arg === '--trusted-key') options.trustedKey = value();
    else if (arg === '--out') options.out = value();
    else if (arg === '--test-allow-http-default-list') options.allowHttp = true;
    else if (arg === '--test-hooks') options.testHooks = true;
    else throw new UsageError(`unknown argument ${arg}\n${usage}`);
  }
  if (Boolean(options.defaultList) !== Boolean(options.trustedKey)) {
    throw new UsageError(`--default-list and --trusted-key go together\n${usage}`);
  }
  return options;
}

/** Returns the base64 key line of a minisign public key file's text, or throws. */
export function keyLine(text, file) {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const line = lines.find((l) => !l.startsWith('untrusted comment:'));
  if (!line || !/^RW[A-Za-z0-9+/]{54}$/.test(line)) {
    throw new UsageError(`${file}: not a minisign public key (expected a base64 line starting with "RW")`);
  }
  return line;
}

function defaultListOrigin(url, allowHttp) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--default-list ${url}: not a URL`);
  }
  if (parsed.protocol === 'https:') return `https://${parsed.hostname}/*`;
  if (allowHttp && parsed.protocol === 'http:' && parsed.hostname === '127.0.0.1') {
    return 'http://127.0.0.1/*';
  }
  throw new UsageError(`--default-list ${url}: lists are downloaded over https only ` +
    '(http://127.0.0.1 only with --test-allow-http-default-list, for tests)');
}

async function exists(path) {
  return stat(path).then(() => true, () => false);
}

// ES module -> classic content script: content scripts cannot be modules, and the
// overlay has no imports, so dropping `export` is the whole change.
function classicScript(source, file) {
  const out = source.replace(/^export (?=const |function |class )/gm, '');
  if (/^\s*(import|export)\b/m.test(out)) throw new Error(`${file}: import/export left after conversion`);
  return `// Generated from web/ui/overlay.js by scripts/package-extension.mjs; do not edit.\n${out}`;
}

/** Returns the manifest for `browser` from the shared source manifest. */
export function manifestFor(browser, source, version) {
  const manifest = structuredClone(source);
  manifest.version = version;
  if (browser === 'chromium') {
    delete manifest.background.scripts;
    delete manifest.browser_specific_settings;
  } else {
    delete manifest.background.service_worker;
  }
  return manifest;
}

/** Returns every file under `dir`, relative, sorted by code unit (the zip's order). */
export async function listFiles(dir) {
  const out = [];
  const walk = async (sub) => {
    for (const entry of await readdir(join(dir, sub), { withFileTypes: true })) {
      const path = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(path);
      else out.push(path);
    }
  };
  await walk('');
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

async function zipFolder(dir, zipFile) {
  const files = await listFiles(dir);
  for (const file of files) await utimes(join(dir, file), ZIP_TIME, ZIP_TIME);
  // -X: no extra attributes (uid, gid, extended times); -D: no directory entries;
  // -@: names from stdin, in our order.
  const child = execFile('zip', ['-X', '-D', '-q', '-9', relative(dir, zipFile), '-@'],
                         { cwd: dir, env: { ...process.env, TZ: 'UTC' } });
  child.stdin.end(`${files.join('\n')}\n`);
  await new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', (error) => reject(new Error(`zip: ${error.message} (scripts/bootstrap.sh installs it)`)));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`zip exited ${code}: ${stderr}`))));
  });
}

async function fillPackage(browser, temp, options, key) {
  await mkdir(temp, { recursive: true });
  const src = join(repo, 'extension');
  for (const entry of await readdir(src)) {
    if (entry === 'README.md') continue;
    await cp(join(src, entry), join(temp, entry), { recursive: true });
  }
  const overlay = await readFile(join(repo, 'web/ui/overlay.js'), 'utf8');
  await writeFile(join(temp, 'content/overlay.js'), classicScript(overlay, 'web/ui/overlay.js'));
  for (const file of ['browser.js', 'engine.js', 'annotate.js', 'ui/overlay.js',
                      'dist/factlens-core.mjs', 'dist/factlens-core.wasm']) {
    await mkdir(dirname(join(temp, 'engine', file)), { recursive: true });
    await cp(join(repo, 'web', file), join(temp, 'engine', file));
  }
  const config = {
    defaultList: options.defaultList ? { url: options.defaultList, publicKey: key } : null,
    testAllowHttpDefaultList: options.allowHttp && Boolean(options.defaultList),
    testHooks: options.testHooks,
  };
  await writeFile(join(temp, 'config.js'),
    '// Written by scripts/package-extension.mjs: build-time defaults.\n' +
    `export default Object.freeze(${JSON.stringify(config, null, 2)});\n`);
  const manifest = manifestFor(browser, JSON.parse(await readFile(join(src, 'manifest.json'), 'utf8')),
                               JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')).version);
  if (options.defaultList) {
    manifest.host_permissions = [defaultListOrigin(options.defaultList, options.allowHttp)];
  }
  await writeFile(join(temp, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Writes both packages and their zips; returns { chromium, firefox, zips: { chromium,
 *  firefox } } paths. */
export async function packageExtension(options) {
  if (!(await exists(join(repo, 'web/dist/factlens-core.wasm')))) {
    throw new UsageError('web/dist/factlens-core.wasm is missing: run npm run build first');
  }
  let key = null;
  if (options.defaultList) {
    defaultListOrigin(options.defaultList, options.allowHttp);
    const text = await readFile(options.trustedKey, 'utf8').catch((error) => {
      throw new UsageError(`--trusted-key ${options.trustedKey}: ${error.message}`);
    });
    key = keyLine(text, options.trustedKey);
  }
  await mkdir(options.out, { recursive: true });
  const tag = `tmp-${process.pid}`;
  const outputs = [];  // [temporary path, final path]
  try {
    for (const browser of BROWSERS) {
      const folder = join(options.out, browser);
      const zip = join(options.out, `factlens-${browser}.zip`);
      const zipTemp = join(options.out, `factlens-${browser}.${tag}.zip`);  // zip wants .zip
      outputs.push([`${folder}.${tag}`, folder], [zipTemp, zip]);
      await rm(`${folder}.${tag}`, { recursive: true, force: true });
      await rm(zipTemp, { force: true });
      await fillPackage(browser, `${folder}.${tag}`, options, key);
      await zipFolder(`${folder}.${tag}`, zipTemp);
    }
  } catch (error) {
    for (const [temp] of outputs) await rm(temp, { recursive: true, force: true });
    throw error;
  }
  for (const [temp, target] of outputs) {
    await rm(target, { recursive: true, force: true });
    await rename(temp, target);
  }
  const out = { zips: {} };
  for (const browser of BROWSERS) {
    out[browser] = join(options.out, browser);
    out.zips[browser] = join(options.out, `factlens-${browser}.zip`);
  }
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const written = await packageExtension(parseArgs(process.argv.slice(2)));
    for (const browser of BROWSERS) {
      console.log(`${browser}: ${written[browser]} and ${written.zips[browser]}`);
    }
  } catch (error) {
    console.error(`package-extension: error: ${error.message}`);
    process.exit(error instanceof UsageError ? 2 : 1);
  }
}
