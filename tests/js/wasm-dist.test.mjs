// FACTLENS_WASM_DIST (web/index.js, test-only) makes the package load the wasm module
// from another folder: `npm run test:wasm-debug` runs this whole folder on the debug
// build that way, so the switch itself must be proven to take effect.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const dist = new URL('../../web/dist/', import.meta.url);
const probe = `
  const { createEngine } = await import('factlens');
  try {
    const engine = await createEngine();
    console.log(engine.check('hello').action);
  } catch (e) {
    console.log('failed: ' + e.code + ' ' + e.message);
  }`;
const run = (env) => execFileSync(process.execPath, ['--input-type=module', '-e', probe],
  { cwd: new URL('../..', import.meta.url), env: { ...process.env, ...env }, encoding: 'utf8' }).trim();

test('FACTLENS_WASM_DIST loads the module from the folder it names, and only from there', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'factlens-dist-'));
  try {
    cpSync(dist, dir, { recursive: true });
    assert.equal(run({ FACTLENS_WASM_DIST: dir }), 'none');
    // The same folder emptied: the package does not fall back to web/dist.
    rmSync(path.join(dir, 'factlens-core.mjs'));
    assert.match(run({ FACTLENS_WASM_DIST: dir }), /^failed: ERR_MODULE_NOT_FOUND .*factlens-core\.mjs/);
    assert.equal(run({ FACTLENS_WASM_DIST: '' }), 'none');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
