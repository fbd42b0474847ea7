// The wasm heap goes back to where it started after many engines are created and
// disposed and many lists loaded, replaced, refused and unloaded: nothing leaks per
// engine, per list or per failed load. Measured with engine.memoryStats() (malloc's
// own count of bytes in use, so the figure is exact, not a sampled process size).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createEngine, FactlensError } from 'factlens';
import { exhaustMemoryForTests } from '../../web/engine.js';

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
  // (A batch first: the engine keeps its buffers for posts and verdicts, up to
  // 64 KB each, from one check to the next.)
  engine.checkBatch(posts);
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

// Wasm memory grows and never shrinks; an isolated engine's instance is the way to give
// it back (the extension swaps one in after a load from text). Which instances exist is
// seen through WebAssembly.instantiate (the glue's call in Node), held by WeakRefs only.
test('an isolated engine has a wasm memory of its own, collected once it is disposed and dropped', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  const shared = await createEngine();  // the shared instance exists before the hook
  const memories = [];
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = async function (...args) {
    const result = await instantiate.apply(this, args);
    for (const value of Object.values((result.instance ?? result).exports)) {
      if (value instanceof WebAssembly.Memory) memories.push(new WeakRef(value));
    }
    return result;
  };
  let isolated;
  let kept;
  let failing;
  try {
    const another = await createEngine();
    assert.equal(memories.length, 0, 'a shared engine must reuse the shared instance');
    another.dispose();
    isolated = await createEngine({ isolated: true });
    kept = await createEngine({ isolated: true });
    failing = await createEngine({ isolated: true });
    assert.equal(memories.length, 3, 'each isolated engine must have an instance of its own');
  } finally {
    WebAssembly.instantiate = instantiate;
  }
  await assert.rejects(createEngine({ isolated: 'yes' }), { kind: 'argument' });

  // Separate heaps, the same verdicts.
  const sharedBefore = shared.memoryStats().bytesInUse;
  isolated.loadList(list, { allowUnsigned: true });
  shared.loadList(list, { allowUnsigned: true });
  assert.ok(isolated.memoryStats().bytesInUse > 10000, 'the list must be in the isolated heap');
  assert.equal(kept.memoryStats().bytesInUse < isolated.memoryStats().bytesInUse, true,
    'another isolated engine must not see that list in its heap');
  assert.ok(shared.memoryStats().bytesInUse > sharedBefore);
  assert.deepEqual(isolated.checkBatch(posts), shared.checkBatch(posts));

  // A trap in one instance leaves the others working.
  exhaustMemoryForTests(failing);
  assert.throws(() => failing.loadList(list, { allowUnsigned: true }), { kind: 'fault' });
  assert.deepEqual(isolated.checkBatch(posts), shared.checkBatch(posts));

  // Disposed and dropped, an instance's memory is collected; the one still in use is not
  // (the control that shows the collection was looked for, not assumed).
  isolated.dispose();
  failing.dispose();
  isolated = null;
  failing = null;
  for (let i = 0; i < 20 && (memories[0].deref() || memories[2].deref()); i++) {
    await new Promise((done) => setImmediate(done));
    gc();
  }
  assert.equal(memories[0].deref(), undefined, 'the disposed isolated engine\'s memory must be collected');
  assert.equal(memories[2].deref(), undefined, 'the trapped instance\'s memory must be collected');
  assert.ok(memories[1].deref() instanceof WebAssembly.Memory, 'the live engine\'s memory must stay');
  kept.loadList(list, { allowUnsigned: true });
  assert.deepEqual(kept.checkBatch(posts), shared.checkBatch(posts));
  kept.dispose();
  shared.unloadList('factlens-demo');
  shared.dispose();
});
