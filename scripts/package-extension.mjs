// Packages the browser extension: unpacked dist/chromium/ and dist/firefox/ from
// extension/ plus the npm package's own engine and overlay files (web/), so the
// extension runs exactly the code the package ships.
//
//   npm run package -- [--default-list URL --trusted-key FILE] [--out DIR]
//                      [--test-allow-http-default-list]
//
// --default-list/--trusted-key bake a subscription in (managed deployments, tests); the
// key is pinned like any subscription's. Lists are fetched over https only; the e2e
// tests alone pass --test-allow-http-default-list, which lets the baked-in URL (and no
// other) be http://127.0.0.1. Each folder is written under a temporary name and renamed
// into place, so a failed run leaves the previous package as it was.
import { cp, mkdir, readFile, rename, rm, writeFile, readdir, stat } from 'node:fs/promises';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../', import.meta.url));
export const BROWSERS = ['chromium', 'firefox'];

const usage = 'usage: npm run package -- [--default-list URL --trusted-key FILE] [--out DIR] ' +
  '[--test-allow-http-default-list]';

class UsageError extends Error {}

export function parseArgs(argv) {
  const options = { out: join(repo, 'dist'), defaultList: null, trustedKey: null, allowHttp: false };
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

async function writePackage(browser, options, key) {
  const target = join(options.out, browser);
  const temp = `${target}.tmp-${process.pid}`;
  await rm(temp, { recursive: true, force: true });
  try {
    await fillPackage(temp, options, key);
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    throw error;
  }
  await rm(target, { recursive: true, force: true });
  await rename(temp, target);
  return target;
}

async function fillPackage(temp, options, key) {
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
  };
  await writeFile(join(temp, 'config.js'),
    '// Written by scripts/package-extension.mjs: build-time defaults.\n' +
    `export default Object.freeze(${JSON.stringify(config, null, 2)});\n`);
  const manifest = JSON.parse(await readFile(join(src, 'manifest.json'), 'utf8'));
  manifest.version = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')).version;
  if (options.defaultList) {
    manifest.host_permissions = [defaultListOrigin(options.defaultList, options.allowHttp)];
  }
  await writeFile(join(temp, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Writes both packages; returns { chromium, firefox } folder paths. */
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
  const out = {};
  for (const browser of BROWSERS) out[browser] = await writePackage(browser, options, key);
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const written = await packageExtension(parseArgs(process.argv.slice(2)));
    for (const [browser, path] of Object.entries(written)) console.log(`${browser}: ${path}`);
  } catch (error) {
    console.error(`package-extension: error: ${error.message}`);
    process.exit(error instanceof UsageError ? 2 : 1);
  }
}
