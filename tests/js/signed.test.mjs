// Signed lists in the wasm build: lists signed by the real minisign tool (prehashed
// and legacy) verify; tampering, wrong keys, rollback, replay, expiry and key
// rotation are refused or accepted exactly as in the native build
// (tests/cpp/engine_test.cpp, tests/cpp/minisign_interop_test.sh).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, FactlensError } from 'factlens';

const root = new URL('../../', import.meta.url);
const factlens = new URL('build/bin/factlens', root).pathname;
const listText = readFileSync(new URL('rules/examples/demo.json', root), 'utf8');
let dir;
const file = (name) => join(dir, name);
const read = (name) => readFileSync(file(name), 'utf8');
const run = (cmd, args, input) => execFileSync(cmd, args, { cwd: dir, input, stdio: ['pipe', 'pipe', 'pipe'] });

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'factlens-signed-'));
  writeFileSync(file('list.json'), listText);
  run('minisign', ['-G', '-W', '-p', 'm.pub', '-s', 'm.key']);
  run('minisign', ['-S', '-s', 'm.key', '-m', 'list.json', '-x', 'prehashed.minisig']);
  run('minisign', ['-S', '-l', '-s', 'm.key', '-m', 'list.json', '-x', 'legacy.minisig']);
  run(factlens, ['keygen', '-W', '-p', 'other.pub', '-s', 'other.key']);
});
after(() => rmSync(dir, { recursive: true, force: true }));

function throwsKind(fn, kind) {
  assert.throws(fn, (e) => e instanceof FactlensError && e.kind === kind || assert.fail(`${e.kind}: ${e.message}`));
}

test('lists signed by minisign (prehashed and legacy) verify in wasm', async () => {
  for (const sig of ['prehashed.minisig', 'legacy.minisig']) {
    const engine = await createEngine();
    const info = engine.loadList(listText, { signature: read(sig), publicKey: read('m.pub') });
    assert.equal(info.signed, true);
    assert.equal(info.id, 'factlens-demo');
    assert.match(info.trustedComment, /^timestamp:\d+\tfile:list\.json/);
    assert.equal(info.publicKey, read('m.pub').trim().split('\n')[1]);
    assert.equal(engine.check('5G towers are spreading the coronavirus!!').action, 'demote');
    engine.dispose();
  }
});

test('a signature made by another key, or over other bytes, is refused whole', async () => {
  const engine = await createEngine();
  throwsKind(() => engine.loadList(listText, { signature: read('prehashed.minisig'), publicKey: read('other.pub') }), 'key');
  throwsKind(() => engine.loadList(listText.replace('"version": 1', '"version": 7'),
    { signature: read('prehashed.minisig'), publicKey: read('m.pub') }), 'signature');
  throwsKind(() => engine.loadList(listText, { publicKey: read('m.pub') }), 'signature');
  assert.deepEqual(engine.lists(), []);
  engine.dispose();
});

test('rollback, replay and expiry are refused; the digest is what callers store', async () => {
  const engine = await createEngine();
  const options = { signature: read('prehashed.minisig'), publicKey: read('m.pub') };
  const info = engine.loadList(listText, options);
  assert.match(info.digest, /^[0-9a-f]{64}$/);
  const fresh = await createEngine();
  throwsKind(() => fresh.loadList(listText, { ...options, lastVersion: 2 }), 'rollback');
  throwsKind(() => fresh.loadList(listText, { ...options, lastVersion: 1, lastDigest: '0'.repeat(64) }), 'rollback');
  fresh.loadList(listText, { ...options, lastVersion: 1, lastDigest: info.digest });
  throwsKind(() => fresh.loadList(listText, { ...options, now: new Date('2031-01-01T00:00:00Z') }), 'expired');
  assert.equal(fresh.lists(new Date('2031-01-01T00:00:00Z'))[0].stale, true);
  assert.equal(fresh.lists()[0].stale, false);
  engine.dispose();
  fresh.dispose();
});

test('a key rotation statement from factlens rotate is honoured in wasm', async () => {
  run(factlens, ['keygen', '-W', '-p', 'new.pub', '-s', 'new.key']);
  run(factlens, ['sign', '-s', 'new.key', '-m', 'list.json', '-x', 'new.minisig']);
  run(factlens, ['rotate', '-s', 'm.key', '-p', 'new.pub', '--list', 'factlens-demo', '-o', 'rotation.json']);
  const engine = await createEngine();
  const options = { signature: read('new.minisig'), publicKey: read('m.pub') };
  throwsKind(() => engine.loadList(listText, options), 'key');
  const rotations = [{ statement: read('rotation.json'), signature: read('rotation.json.minisig') }];
  const info = engine.loadList(listText, { ...options, rotations });
  assert.equal(info.keyRotated, true);
  assert.equal(info.publicKey, read('new.pub').trim().split('\n')[1]);
  engine.dispose();
});
