// The wasm heap goes back to where it started after many engines are created and
// disposed and many lists loaded, replaced, refused and unloaded: nothing leaks per
// engine, per list or per failed load. Measured with engine.memoryStats() (malloc's
// own count of bytes in use, so the figure is exact, not a sampled process size).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createEngine, FactlensError } from 'factlens';

const list = readFileSync(new URL('../../rules/examples/demo.json', import.meta.url), 'utf8');
const posts = readFileSync(new URL('../../rules/examples/demo-posts.txt', import.meta.url), 'utf8')
  .split('\n').filter(Boolean);
const broken = list.replace('(pill|pills', '(pill|pills(');  // an RE2 compile error
const withVersion = (v) => list.replace('"version": 1', `"version": ${v}`);
// RE2 programs are shared across lists through one process-wide registry whose hash
// table keeps its bucket array between uses: its size may move by a few words, once,
// never per cycle. A leaked list costs over 10 KB per cycle; 256 bytes of slack over
// 150-200 cycles cannot hide one.
const kSlack = 256;

async function cycle() {
  const engine = await createEngine();
  engine.loadList(list, { allowUnsigned: true });
  engine.checkBatch(posts);
  engine.dispose();
}

test('createEngine/loadList/check/dispose cycles leave the wasm heap where it started', async () => {
  const probe = await createEngine();
  await cycle();  // first use fills RE2's and the runtime's one-time caches
  const before = probe.memoryStats().bytesInUse;
  for (let i = 0; i < 200; i++) await cycle();
  const after = probe.memoryStats().bytesInUse;
  console.log(`# heap in use: ${before} bytes before, ${after} after 200 engine cycles`);
  assert.ok(Math.abs(after - before) <= kSlack, `${before} -> ${after}`);
  // The measure itself sees an engine that was not disposed, so the test can fail.
  const kept = await createEngine();
  kept.loadList(list, { allowUnsigned: true });
  assert.ok(probe.memoryStats().bytesInUse > before + 10000,
    'a loaded list must show in bytesInUse');
  kept.dispose();
  assert.ok(Math.abs(probe.memoryStats().bytesInUse - before) <= kSlack);
  probe.dispose();
});

test('reloading, replacing, refusing and unloading lists on one engine frees every old list', async () => {
  const engine = await createEngine();
  engine.loadList(list, { allowUnsigned: true });
  engine.check(posts[1]);
  engine.unloadList('factlens-demo');
  const before = engine.memoryStats().bytesInUse;
  for (let i = 1; i <= 150; i++) {
    engine.loadList(withVersion(i), { allowUnsigned: true });  // replaces the loaded one
    assert.throws(() => engine.loadList(broken, { allowUnsigned: true }), FactlensError);
    assert.throws(() => engine.loadList('{"format": "factlens/1", "list": ', { allowUnsigned: true }),
      FactlensError);
    engine.checkBatch(posts);
  }
  assert.equal(engine.lists().length, 1);
  engine.unloadList('factlens-demo');
  const after = engine.memoryStats().bytesInUse;
  console.log(`# heap in use: ${before} bytes before, ${after} after 150 load/replace/refuse cycles`);
  assert.ok(Math.abs(after - before) <= kSlack, `${before} -> ${after}`);
  engine.dispose();
});
