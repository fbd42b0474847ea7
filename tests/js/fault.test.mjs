// A wasm trap is contained: when the engine's module instance really runs out of
// memory in the middle of a call (its heap filled up to the module's maximum, so
// malloc fails and the C++ code aborts), the call throws FactlensError kind "fault",
// every engine of that instance refuses further calls with the same kind (the instance's
// stack and heap are in an unknown state), and the next createEngine() gets a fresh
// instance that works. The extension's background builds its restart on this.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createEngine, FactlensError } from 'factlens';
import { exhaustMemoryForTests } from '../../web/engine.js';

const list = readFileSync(new URL('../../rules/examples/demo.json', import.meta.url), 'utf8');
const post = '5G towers are spreading the coronavirus!!';

test('a trap in the middle of a batch throws kind "fault"; a new engine starts clean', async () => {
  const engine = await createEngine();
  const sibling = await createEngine();  // the same module instance
  engine.loadList(list, { allowUnsigned: true });
  assert.equal(engine.check(post).action, 'demote');
  const heapBefore = engine.memoryStats().heapSize;

  const taken = exhaustMemoryForTests(engine);
  assert.ok(taken > 1.5 * 2 ** 30, `only ${taken} bytes could be taken`);
  const fault = (error) => error instanceof FactlensError && error.kind === 'fault';
  assert.throws(() => engine.checkBatch([post, 'another post', post]), (error) =>
    fault(error) && /Aborted/.test(error.message));
  // The instance is never called again, whatever the call.
  assert.throws(() => engine.lists(), (e) => fault(e) && /an earlier call trapped/.test(e.message));
  assert.throws(() => sibling.check(post), fault);
  assert.throws(() => engine.memoryStats(), fault);
  engine.dispose();  // frees nothing in a trapped instance, and does not throw
  sibling.dispose();

  const fresh = await createEngine();
  assert.equal(fresh.memoryStats().heapSize, heapBefore, 'a new instance, not the exhausted one');
  assert.deepEqual(fresh.lists(), []);
  fresh.loadList(list, { allowUnsigned: true });
  assert.equal(fresh.check(post).action, 'demote');
  fresh.dispose();
});
