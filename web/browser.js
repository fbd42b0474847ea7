// factlens for browsers and bundlers (the package's "browser" export condition): the
// same API as index.js without any Node import. The wasm reference below is the
// `new URL(..., import.meta.url)` form that webpack, Rollup, Vite and esbuild copy
// next to the bundle by themselves.
import { engineFactory, importerFactory } from './engine.js';

export { FactlensError } from './engine.js';
export { annotate } from './annotate.js';

const wasmUrl = new URL('./dist/factlens-core.wasm', import.meta.url);

/** Creates an engine; see index.d.ts. */
export const createEngine = engineFactory(wasmUrl, null);

/** Imports ClaimReview markup as factlens/1 rules; see index.d.ts. */
export const importClaimReview = importerFactory(wasmUrl, null);
