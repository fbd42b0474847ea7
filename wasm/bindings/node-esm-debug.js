// Debug build only (scripts/build.sh --debug-wasm), placed before the ES module glue
// by --extern-pre-js. The debug build adds "node" to ENVIRONMENT so that its
// ASSERTIONS-checked environment detection passes under Node (the tests'
// FACTLENS_WASM_DIST), but Emscripten 3.1.6's Node path uses `require` and
// `__dirname`, which ES modules lack: give the module both, under Node only.
// The test is the glue's own ENVIRONMENT_IS_NODE.
const { require, __dirname } = typeof process === 'object' && typeof process.versions?.node === 'string'
  ? await (async () => {
    const [{ createRequire }, { fileURLToPath }] = await Promise.all([import('node:module'), import('node:url')]);
    return { require: createRequire(import.meta.url), __dirname: fileURLToPath(new URL('.', import.meta.url)) };
  })()
  : {};
