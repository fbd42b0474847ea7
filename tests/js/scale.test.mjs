// The scale work through the JS API: the prefilter loses no match on the bench
// workloads, and the compiled form round-trips (and refuses damaged bytes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { createEngine, FactlensError } from '../../web/index.js';
import { generateWorkload } from '../../scripts/bench/generate.mjs';

const SEED = 20250115;  // the seed `npm run bench` uses

// The sizes of a compiled form's sections, by tag ({ RULE: n, ... }), from its
// section table (wasm/README's layout: magic, version, section count, then each
// section's tag, length and bytes).
function sectionSizes(form) {
  const view = new DataView(form.buffer, form.byteOffset, form.byteLength);
  const sizes = {};
  let at = 12;
  for (let i = 0; i < view.getUint32(8, true); i++) {
    const tag = String.fromCharCode(...form.subarray(at, at + 4));
    sizes[tag] = view.getUint32(at + 4, true);
    at += 8 + sizes[tag];
  }
  return sizes;
}

for (const [ruleCount, postCount] of [[1000, 2000], [10000, 200]]) {
  test(`prefilter: same verdicts with and without it, bench workload of ${ruleCount} rules`, async () => {
    const w = generateWorkload({ seed: SEED, ruleCount });
    const posts = w.posts.slice(0, postCount);
    const fast = await createEngine();
    const slow = await createEngine();
    fast.loadList(w.listText, { allowUnsigned: true });
    slow.loadList(w.listText, { allowUnsigned: true, prefilter: false });
    let matched = 0;
    for (const post of posts) {
      const a = fast.check(post);
      assert.deepEqual(a, slow.check(post));
      if (a.matches.length) matched++;
    }
    assert.ok(matched > 0, 'the workload must hold matches for the comparison to mean anything');
    fast.dispose();
    slow.dispose();
  });
}

// An engine with workload `w`'s list loaded (an unsigned draft), the list's info
// and its compiled form, whole and in parts.
async function exported(w) {
  const engine = await createEngine();
  const info = engine.loadList(w.listText, { allowUnsigned: true });
  return { engine, info, bytes: engine.exportCompiled(info.id),
    parts: engine.exportCompiled(info.id, { parts: true }) };
}

// The bytes of `parts`, one after another.
const joined = (parts) => new Uint8Array(Buffer.concat(parts));

test('compiled form: a restored list gives identical verdicts', async () => {
  const w = generateWorkload({ seed: SEED, ruleCount: 1000, postCount: 500 });
  const { engine, info, bytes } = await exported(w);
  assert.ok(bytes instanceof Uint8Array);
  const restored = await createEngine();
  assert.deepEqual(restored.loadCompiled(bytes, { allowUnsigned: true }), info);
  for (const post of w.posts) assert.deepEqual(restored.check(post), engine.check(post));
  // The same bytes again from the restored list (its URL tables are written in
  // key order, not in the order a hash table filled another way keeps them).
  assert.deepEqual(restored.exportCompiled(info.id), bytes);
  assert.throws(() => restored.loadCompiled(bytes, { allowUnsigned: true, lastVersion: 2 }),
    (e) => e instanceof FactlensError && e.kind === 'rollback');
  engine.dispose();
  restored.dispose();
});

// The 30k-rule bench list the memory tests load, generated once (0.6 s), and its
// compiled form, made once for the restore tests.
let workload30kCache, form30kCache, parts30kCache;
const workload30k = () =>
  (workload30kCache ??= generateWorkload({ seed: SEED, ruleCount: 30000, postCount: 1 }));
async function form30k() {
  if (!form30kCache) {
    const { engine, bytes, parts } = await exported(workload30k());
    engine.dispose();
    form30kCache = bytes;
    parts30kCache = parts;
  }
  return form30kCache;
}
async function parts30k() {
  await form30k();
  return parts30kCache;
}

// Runs `body` (the text of an async function body that reads `engine` and `data`
// and returns what to report) on an engine in a worker of its own: a fresh module,
// whose wasm memory no earlier load has grown. Resolves with what `body` returned.
async function inFreshModule(body, data) {
  const source = `import { parentPort, workerData } from 'node:worker_threads';
    const { createEngine } = await import(workerData.index);
    const engine = await createEngine();
    const data = workerData.data;
    parentPort.postMessage(await (async () => { ${body} })());`;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`), {
    workerData: { index: new URL('../../web/index.js', import.meta.url).href, data },
  });
  try {
    return await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  } finally {
    await worker.terminate();
  }
}

// Wasm memory never shrinks, so what a restore holds at its peak stays. The form
// stays in JavaScript, and the engine reads each section a window at a time: the
// heap malloc has taken after a restore (heapReserved) stays below what the list
// holds plus its largest section (the rule records), which a restore that copied
// a section in whole could not (at 100k rules: 28.7 MB more than in use, for a
// 25.7 MB section). (The wasm memory beyond the heap, the module's stack and data
// and growth not yet taken, is not the restore's: 6.8 MB at 30k rules.)
test('compiled form: a restore holds neither the form nor a section whole in wasm memory', async () => {
  const bytes = await form30k();
  const stats = await inFreshModule(
    `engine.loadCompiled(data, { allowUnsigned: true }); return engine.memoryStats();`, bytes);
  const sizes = sectionSizes(bytes);
  const largest = Math.max(...Object.values(sizes));
  assert.equal(largest, sizes.RULE);
  assert.ok(stats.bytesInUse <= stats.heapReserved && stats.heapReserved <= stats.heapSize);
  assert.ok(stats.heapReserved - stats.bytesInUse < largest,
    `heap ${stats.heapReserved} B (wasm memory ${stats.heapSize} B), in use ` +
    `${stats.bytesInUse} B, largest section ${largest} B of a ${bytes.length} B form`);
});

// With `transfer`, the engine takes the form's buffer and leaves the rule records
// in it, reading a rule's record into wasm memory when the rule is first needed:
// the heap after a restore holds neither the form nor the records. Of a form in
// parts (exportCompiled with `parts`), it keeps the records' part alone.
test('compiled form: with transfer, the rule records stay in the bytes the engine took', async () => {
  const bytes = await form30k();
  const parts = await parts30k();
  const body = (transfer) => `engine.loadCompiled(data, { allowUnsigned: true, transfer: ${transfer} });
    const stats = engine.memoryStats();
    return { stats, left: [data].flat().reduce((n, part) => n + part.length, 0) };`;
  const copied = await inFreshModule(body(false), bytes);
  const kept = await inFreshModule(body(true), bytes);
  const keptParts = await inFreshModule(body(true), parts);
  const records = sectionSizes(bytes).RULE;
  assert.equal(copied.left, bytes.length);
  assert.equal(copied.stats.keptFormBytes, 0);
  for (const k of [kept, keptParts]) {
    assert.equal(k.left, 0, 'the worker\'s bytes were taken');
    assert.ok(k.stats.bytesInUse < copied.stats.bytesInUse - 0.9 * records,
      `heap in use ${k.stats.bytesInUse} B with transfer, ${copied.stats.bytesInUse} B ` +
      `without, for ${records} B of records`);
    assert.ok(k.stats.heapReserved - k.stats.bytesInUse < records / 4);
  }
  assert.equal(kept.stats.keptFormBytes, bytes.length);
  // The parts: before the records, the records (the RULE section but its counts and
  // strings), after them; only the records' part is kept.
  assert.equal(parts.length, 3);
  assert.deepEqual(joined(parts), bytes);
  assert.ok(parts[1].length < records && parts[1].length > 0.9 * records);
  assert.equal(keptParts.stats.keptFormBytes, parts[1].length);
});

test('compiled form: a list restored with transfer, whole or in parts, gives identical verdicts, searches and export', async () => {
  const w = generateWorkload({ seed: SEED, ruleCount: 1000, postCount: 500 });
  const { engine, info, bytes, parts } = await exported(w);
  const restored = await createEngine();
  const taken = bytes.slice();
  assert.deepEqual(restored.loadCompiled(taken, { allowUnsigned: true, transfer: true }), info);
  assert.equal(taken.length, 0, 'the caller\'s bytes are detached');
  assert.equal(restored.memoryStats().keptFormBytes, bytes.length);
  assert.throws(() => restored.loadCompiled(taken, { allowUnsigned: true, transfer: true }),
    (e) => e instanceof FactlensError && e.kind === 'argument' && /could not take the bytes/.test(e.message));
  // The restored list answers as the loaded one: every verdict, and 20 searches.
  const answersAsLoaded = () => {
    let matched = 0;
    for (const post of w.posts) {
      const verdict = restored.check(post);
      assert.deepEqual(verdict, engine.check(post));
      if (verdict.matches.length) matched++;
    }
    assert.ok(matched > 20, `${matched} posts matched`);
    for (const post of w.posts.slice(0, 20)) assert.deepEqual(restored.search(post, 5), engine.search(post, 5));
  };
  answersAsLoaded();
  assert.deepEqual(restored.exportCompiled(info.id), bytes);
  // The same from the form in parts: the records' part alone is kept.
  assert.deepEqual(joined(parts), bytes);
  const partEnds = [parts[0].length, parts[0].length + parts[1].length];
  assert.deepEqual(restored.loadCompiled(parts, { allowUnsigned: true, transfer: true }), info);
  assert.deepEqual(parts.map((part) => part.length), [0, 0, 0], 'the caller\'s parts are detached');
  const recordsPart = restored.memoryStats().keptFormBytes;
  assert.ok(recordsPart > 0 && recordsPart < bytes.length / 2, `${recordsPart} of ${bytes.length} B kept`);
  answersAsLoaded();
  assert.deepEqual(restored.exportCompiled(info.id), bytes);
  assert.deepEqual(joined(restored.exportCompiled(info.id, { parts: true })), bytes);
  // Parts over one buffer, or anything but Uint8Arrays, are refused; the caller keeps them.
  const shared = bytes.slice();
  const halves = [shared.subarray(0, 100), shared.subarray(100)];
  assert.throws(() => restored.loadCompiled(halves, { allowUnsigned: true, transfer: true }),
    (e) => e instanceof FactlensError && e.kind === 'argument' && /part 0/.test(e.message));
  const twice = new Uint8Array(8);
  assert.throws(() => restored.loadCompiled([twice, twice], { allowUnsigned: true, transfer: true }),
    (e) => e instanceof FactlensError && e.kind === 'argument' && /buffer of its own/.test(e.message));
  assert.throws(() => restored.loadCompiled([bytes, 'more'], { allowUnsigned: true }),
    (e) => e instanceof FactlensError && e.kind === 'argument' && /array of Uint8Arrays/.test(e.message));
  assert.equal(shared.length, bytes.length);
  // A byte damaged in the records' part is refused as in a whole form.
  const damaged = [bytes.slice(0, partEnds[0]), bytes.slice(partEnds[0], partEnds[1]),
    bytes.slice(partEnds[1])];
  damaged[1][damaged[1].length >> 1] ^= 0x40;
  assert.throws(() => restored.loadCompiled(damaged, { allowUnsigned: true, transfer: true }),
    (e) => e instanceof FactlensError && e.kind === 'format' && /checksum/.test(e.message));
  // Parts without transfer are read where they are, as a whole form is.
  assert.deepEqual(restored.loadCompiled(halves, { allowUnsigned: true }), info);
  assert.equal(restored.memoryStats().keptFormBytes, 0);
  assert.deepEqual(restored.exportCompiled(info.id), bytes);
  restored.loadCompiled(bytes.slice(), { allowUnsigned: true, transfer: true });
  // Only a whole, unshared buffer can be taken; the caller keeps anything else.
  const larger = new Uint8Array(bytes.length + 16);
  larger.set(bytes);
  for (const view of [larger.subarray(0, bytes.length),
    new Uint8Array(new SharedArrayBuffer(bytes.length))]) {
    assert.throws(() => restored.loadCompiled(view, { allowUnsigned: true, transfer: true }),
      (e) => e instanceof FactlensError && e.kind === 'argument' && /whole of its own/.test(e.message));
    assert.equal(view.length, bytes.length);
  }
  // Damaged bytes are refused as without transfer (and are taken all the same).
  const flipped = bytes.slice();
  flipped[Math.floor(bytes.length / 2)] ^= 0x40;
  assert.throws(() => restored.loadCompiled(flipped, { allowUnsigned: true, transfer: true }),
    (e) => e instanceof FactlensError && e.kind === 'format' && /checksum/.test(e.message));
  assert.equal(flipped.length, 0);
  assert.equal(restored.memoryStats().keptFormBytes, bytes.length, 'a refused form is not kept');
  // A load of the same list without transfer replaces it and lets go of the bytes.
  restored.loadCompiled(bytes, { allowUnsigned: true });
  assert.equal(restored.memoryStats().keptFormBytes, 0);
  restored.loadCompiled(bytes.slice(), { allowUnsigned: true, transfer: true });
  assert.equal(restored.memoryStats().keptFormBytes, bytes.length);
  // Unloading the list lets go of its bytes; the engine goes on without them.
  restored.unloadList(info.id);
  assert.equal(restored.memoryStats().keptFormBytes, 0);
  assert.deepEqual(restored.lists(), []);
  assert.deepEqual(restored.check(w.posts[0]).matches, []);
  engine.dispose();
  restored.dispose();
});

// A load from text compiles each rule as it is read, so the rules are never all
// in memory as Rule objects beside the text: malloc's peak (heapReserved) stays
// within the text, what the list then holds, and a quarter of the text for the
// similarity index's build scratch. When a load parsed every rule first, the
// peak was 10 MB over the text and the list at 30k rules (42.3 MB for 11.6 MB of
// text and 19.7 MB held; now 31.5 MB), and at 100k wasm memory stayed at 136 MB.
test('a load from text keeps the text and the compiled list, not the parsed rules too', async () => {
  const w = workload30k();
  const stats = await inFreshModule(
    `engine.loadList(data, { allowUnsigned: true }); return engine.memoryStats();`, w.listText);
  const text = Buffer.byteLength(w.listText);
  assert.ok(stats.heapReserved <= text + stats.bytesInUse + text / 4,
    `heap ${stats.heapReserved} B (wasm memory ${stats.heapSize} B) for ${text} B of text, ` +
    `${stats.bytesInUse} B in use after the load`);
});

// The records are reserved for the rules expected at the mean size so far; a list
// whose first rule is the largest its phrasings allow (256 of 1000 bytes) and the
// rest tiny would stretch that to 5 GB, but the reservation stays within the text.
test('a load from text whose first rule dwarfs the rest stays within its text', async () => {
  const word = (i) => `w${(i * 7919) % 100000}`;
  const phrase = (p) => Array.from({ length: 160 }, (_, i) => word(p * 160 + i)).join(' ').slice(0, 1000);
  const rule = (id, match) => ({
    id, claim: `Claim ${id}.`, rating: 'false', severity: 'low', match,
    review: { url: `https://r.example/${id}`, title: 'T', publisher: 'P', date: '2025-01-01' },
  });
  const rules = [rule('big', { similar: Array.from({ length: 256 }, (_, p) => phrase(p)) })];
  for (let i = 0; i < 20000; i++) rules.push(rule(`r${i}`, { urls: [`https://u.example/${i}`] }));
  const text = JSON.stringify({
    format: 'factlens/1',
    list: { id: 'skewed', name: 'S', publisher: { name: 'P', url: 'https://p.example/' }, version: 1,
      issued: '2026-01-01T00:00:00Z', expires: '2099-01-01T00:00:00Z' },
    rules,
  });
  const got = await inFreshModule(`
    const info = engine.loadList(data, { allowUnsigned: true });
    return { rules: info.ruleCount, stats: engine.memoryStats(),
      matched: engine.check('see https://u.example/19999 now').matches.map((m) => m.ruleId) };`,
  text);
  assert.equal(got.rules, 20001);
  assert.deepEqual(got.matched, ['r19999']);
  const bytes = Buffer.byteLength(text);
  assert.ok(got.stats.heapSize < 4 * bytes + (16 << 20), `wasm memory ${got.stats.heapSize} B for ${bytes} B of text`);
});

test('compiled form: corrupted or foreign bytes are refused with kind format', async () => {
  const w = generateWorkload({ seed: SEED, ruleCount: 200, postCount: 1 });
  const { engine, bytes } = await exported(w);
  const other = await createEngine();
  const flipped = bytes.slice();
  flipped[Math.floor(bytes.length / 2)] ^= 0x40;
  for (const [bad, why] of [[flipped, /checksum/], [bytes.slice(0, 100), /checksum/],
    [new TextEncoder().encode(w.listText), /not a factlens compiled list/]]) {
    assert.throws(() => other.loadCompiled(bad, { allowUnsigned: true }),
      (e) => e instanceof FactlensError && e.kind === 'format' && why.test(e.message));
  }
  assert.deepEqual(other.lists(), []);
  assert.throws(() => engine.exportCompiled('nope'), (e) => e.kind === 'not_found');
  assert.throws(() => other.loadCompiled('text'), (e) => e.kind === 'argument');
});
