// factlens: the JavaScript API over the wasm engine (Node 20 and plain ES module
// loaders; bundlers targeting browsers take browser.js through the "browser" export
// condition).
//
//   import { createEngine, FactlensError, annotate } from 'factlens';
//   const engine = await createEngine();
//   engine.loadList(listText, { signature, publicKey, lastVersion });
//   const verdict = engine.check(postText, { region: 'DE' });
import { engineFactory, importerFactory } from './engine.js';

export { FactlensError } from './engine.js';
export { annotate } from './annotate.js';

const isNode =
  typeof process === 'object' && typeof process.versions?.node === 'string' &&
  typeof window === 'undefined';

async function readFileBytes(url) {
  const { readFile } = await import('node:fs/promises');
  return readFile(url instanceof URL || !/^[a-z]+:/i.test(url) ? url : new URL(url));
}

// For tests only: FACTLENS_WASM_DIST=<folder> runs the package on another build of the
// module there (factlens-core.mjs + .wasm), such as the debug build with Emscripten's
// runtime checks (`npm run test:wasm-debug`: build/wasm-debug/dist). Unset, the
// package uses its own dist/.
const distOverride = isNode && process.env.FACTLENS_WASM_DIST
  ? (async (dir) => {
    const [{ resolve }, { pathToFileURL }] = await Promise.all([import('node:path'), import('node:url')]);
    return pathToFileURL(`${resolve(dir)}/`);
  })(process.env.FACTLENS_WASM_DIST)
  : null;

const wasmUrl = distOverride
  ? distOverride.then((dist) => new URL('factlens-core.wasm', dist))
  : new URL('./dist/factlens-core.wasm', import.meta.url);
const loadGlue = distOverride
  ? async () => (await import(new URL('factlens-core.mjs', await distOverride).href)).default
  : undefined;

/** Creates an engine; see index.d.ts. */
export const createEngine = engineFactory(wasmUrl, isNode ? readFileBytes : null, loadGlue);

/** Imports ClaimReview markup as factlens/1 rules; see index.d.ts. */
export const importClaimReview = importerFactory(wasmUrl, isNode ? readFileBytes : null, loadGlue);
