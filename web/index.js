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

const wasmUrl = new URL('./dist/factlens-core.wasm', import.meta.url);

/** Creates an engine; see index.d.ts. */
export const createEngine = engineFactory(wasmUrl, isNode ? readFileBytes : null);

/** Imports ClaimReview markup as factlens/1 rules; see index.d.ts. */
export const importClaimReview = importerFactory(wasmUrl, isNode ? readFileBytes : null);
