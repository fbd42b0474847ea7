// `npm run bench`: the scale figures of issue 5, measured in one run and printed
// side by side (wasm in this Node, the native build via `factlens bench`, and a
// naive JavaScript baseline), as ratios, since these machines are shared and noisy.
// Numbers are printed, never asserted. Usage: node scripts/bench.mjs [sizes...]
import { execFileSync } from 'node:child_process';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createEngine } from '../web/index.js';
import { BENCH_SEED as SEED, generateWorkload } from './bench/generate.mjs';

const root = new URL('..', import.meta.url).pathname;
const sizes = process.argv.slice(2).map(Number).filter(Boolean);
const SIZES = sizes.length ? sizes : [1000, 10000, 100000];
const cli = join(root, 'build/bin/factlens');
const BATCH = 200;  // posts per checkBatch, as extension/content/content.js sends them
// A first load's time varies by 10-25% from one run to the next on these shared
// 2-core machines (V8 compiles optimised code on the other cores meanwhile: at 10k
// rules the load's thread waited 60-70 ms of a 280 ms load for a core), so each
// load is timed in this many fresh modules, each in a worker of its own: the median
// is printed, with the range. (With 5, two runs of one build gave 270 and 340 ms.)
const LOAD_RUNS = 9;

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const mb = (n) => (n / 1048576).toFixed(1);
const fmt = (x, d = 1) => Number(x).toFixed(d);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
// "280 ms (median of 5 fresh modules: 253-319)", or "280 ms" for one.
const fmtRuns = (xs) => xs.length === 1 ? `${fmt(xs[0], 0)} ms`
  : `${fmt(median(xs), 0)} ms (median of ${xs.length} fresh modules: ` +
    `${fmt(Math.min(...xs), 0)}-${fmt(Math.max(...xs), 0)})`;

// The naive baseline: one RegExp per pattern rule, tried in a loop on the raw post
// (no normalisation: it is what a page script would do).
function naiveBaseline(list, posts) {
  const regexps = [];
  for (const rule of list.rules) {
    for (const p of rule.match.patterns ?? []) regexps.push(new RegExp(p, 'iu'));
  }
  const t0 = performance.now();
  let hits = 0;
  for (const post of posts) {
    for (const re of regexps) if (re.test(post)) hits++;
  }
  return { ms: performance.now() - t0, hits, regexps: regexps.length };
}

// Returns `list` without similarity matching: match.similar dropped from each rule,
// and the rules left with no matcher dropped.
function withoutSimilarity(list) {
  const rules = [];
  for (const rule of list.rules) {
    const { similar, ...match } = rule.match ?? {};
    if (Object.keys(match).length) rules.push({ ...rule, match });
  }
  return { ...list, rules };
}

// Returns `list` with only what the naive baseline runs: each rule's match.patterns,
// the rules without patterns dropped. The engine on this list and the naive loop do
// the same work (one verdict per post from the same patterns), so their ratio is
// like for like; the full list's ratio also counts keyword, URL and similarity rules
// the naive loop never runs.
function patternsOnly(list) {
  const rules = [];
  for (const rule of list.rules) {
    if (rule.match?.patterns?.length) rules.push({ ...rule, match: { patterns: rule.match.patterns } });
  }
  return { ...list, rules };
}

function sizeOfModule() {
  const wasm = readFileSync(join(root, 'web/dist/factlens-core.wasm'));
  const glue = Buffer.concat([readFileSync(join(root, 'web/dist/factlens-core.mjs')),
    readFileSync(join(root, 'web/index.js'))]);
  return { wasm: wasm.length, glue: glue.length,
    gzip: gzipSync(wasm, { level: 9 }).length + gzipSync(glue, { level: 9 }).length };
}

// What first writes to fresh memory cost on this machine, in ms a MB: a fresh
// module's load and restore pay it for every MB of wasm memory they touch, and it
// differs widely between machines (4.6 ms a MB on these VMs, where a load's own
// work is a few ms a MB). Fills a fresh 32 MB WebAssembly.Memory twice, three times
// over: the median of the first fills and of the second.
function freshMemoryCost() {
  const mb = 32, first = [], again = [];
  for (let k = 0; k < 3; k++) {
    const bytes = new Uint8Array(new WebAssembly.Memory({ initial: mb * 16 }).buffer);
    let t = performance.now();
    bytes.fill(1);
    first.push((performance.now() - t) / mb);
    t = performance.now();
    bytes.fill(2);
    again.push((performance.now() - t) / mb);
  }
  return { first: median(first), again: median(again) };
}

// Runs one phase of the wasm measurement in a worker thread and returns its result.
function inWorker(data) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: data });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

// The phases, inside a worker: load from text (then, with `exportBlob`, export the
// compiled form), load from the compiled form ('restore'), or load from the compiled
// form and check every post (and, with `batched`, check them once more in batches).
async function phase({ phase: name, listPath, blobPath, partSizes, postsPath, batched,
  exportBlob, copied = false }) {
  const engine = await createEngine();
  if (name === 'text') {
    const listText = readFileSync(listPath, 'utf8');
    let t0 = performance.now();
    const info = engine.loadList(listText, { allowUnsigned: true });
    const loadText = performance.now() - t0;
    const memAfterText = engine.memoryStats();
    if (!exportBlob) return { loadText, memAfterText };
    // In parts, as the extension keeps it (the rule records in one of their own).
    t0 = performance.now();
    const parts = engine.exportCompiled(info.id, { parts: true });
    const exportMs = performance.now() - t0;
    return { loadText, memAfterText, exportMs, memAfterExport: engine.memoryStats(), parts };
  }
  // The form's parts, each read into a buffer of its own, as IndexedDB gives the
  // extension the parts it stored.
  const parts = [];
  const file = openSync(blobPath, 'r');
  for (let at = 0, i = 0; i < partSizes.length; at += partSizes[i++]) {
    parts.push(new Uint8Array(partSizes[i]));
    readSync(file, parts[i], 0, partSizes[i], at);
  }
  closeSync(file);
  let t0 = performance.now();
  // As the extension restores (the engine takes the parts and leaves the rule
  // records in theirs), or `copied` into wasm memory.
  engine.loadCompiled(parts, { allowUnsigned: true, transfer: !copied });
  const loadCompiled = performance.now() - t0;
  if (name === 'restore') return { loadCompiled };
  const memAfterCompiled = engine.memoryStats();
  const posts = readFileSync(postsPath, 'utf8').split('\n').map((l) => JSON.parse(l).text);
  // Two passes: the first meets a cold engine (V8 runs new wasm code in its baseline
  // tier until the optimised code is ready; RE2 programs are compiled on first need),
  // the second a warm one.
  let matched = 0;
  const pass = () => {
    const times = [];
    matched = 0;
    const start = performance.now();
    for (const post of posts) {
      const p0 = performance.now();
      const v = engine.check(post);
      times.push(performance.now() - p0);
      if (v.matches.length) matched++;
    }
    return { times, checkMs: performance.now() - start };
  };
  const cold = pass();
  const warm = pass();
  // Then warm again, in batches as the extension's content script sends them (one
  // call into wasm for many posts).
  let batchMs = null;
  if (batched) {
    const start = performance.now();
    for (let i = 0; i < posts.length; i += BATCH) engine.checkBatch(posts.slice(i, i + BATCH));
    batchMs = performance.now() - start;
  }
  return { loadCompiled, memAfterCompiled, cold, warm, batchMs, matched, memEnd: engine.memoryStats() };
}

// Runs the wasm phases for one list (`name`, its JSON text), each in a worker of its
// own so that each starts from a fresh module (wasm memory only grows: a shared
// module would carry the previous phase's peak; memory = the wasm memory's size, i.e.
// its peak): load from text and export, then restore the compiled form and check the
// posts twice (then in batches too, with `batched`); with `loadRuns` > 1, both loads
// again in more fresh modules, and as many restores with the rule records copied
// into wasm memory (loadCompiled without transfer). Returns the list's and the
// form's paths, the form's part sizes, both phases' results, the load times (ms,
// one per module), the throughputs and the sorted per-post times of each pass.
async function wasmPhases(dir, name, listText, postsPath, bytes, batched = false, loadRuns = 1) {
  const listPath = join(dir, `${name}.json`);
  writeFileSync(listPath, listText);
  const text = await inWorker({ phase: 'text', listPath, exportBlob: true });
  const blobPath = join(dir, `${name}.flcl`);
  writeFileSync(blobPath, Buffer.concat(text.parts));
  const partSizes = text.parts.map((part) => part.length);
  const run = await inWorker({ phase: 'compiled', blobPath, partSizes, postsPath, batched });
  const loadTextMs = [text.loadText], loadCompiledMs = [run.loadCompiled], loadCopiedMs = [];
  if (loadRuns > 1) {
    loadCopiedMs.push((await inWorker({ phase: 'restore', blobPath, partSizes, copied: true })).loadCompiled);
  }
  for (let i = 1; i < loadRuns; i++) {
    loadTextMs.push((await inWorker({ phase: 'text', listPath })).loadText);
    loadCompiledMs.push((await inWorker({ phase: 'restore', blobPath, partSizes })).loadCompiled);
    loadCopiedMs.push((await inWorker({ phase: 'restore', blobPath, partSizes, copied: true })).loadCompiled);
  }
  return {
    listPath, blobPath, partSizes, text, run, loadTextMs, loadCompiledMs, loadCopiedMs,
    mbps: bytes / 1e6 / (run.cold.checkMs / 1e3),
    warmMbps: bytes / 1e6 / (run.warm.checkMs / 1e3),
    batchMbps: batched ? bytes / 1e6 / (run.batchMs / 1e3) : null,
    times: run.cold.times.sort((a, b) => a - b),
    warmTimes: run.warm.times.sort((a, b) => a - b),
  };
}

// The main thread: generate each workload, run the phases, print the figures.
async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'factlens-bench-'));
  try {
    const mod = sizeOfModule();
    console.log(`factlens bench (seed ${SEED}; Node ${process.version}; wasm module ` +
      `${fmt(mod.wasm / 1024, 0)} KB + JS glue ${fmt(mod.glue / 1024, 0)} KB raw, ` +
      `${fmt(mod.gzip / 1024, 0)} KB gzip together)`);
    const touch = freshMemoryCost();
    console.log(`fresh memory: first writes ${fmt(touch.first, 2)} ms a MB, later writes ` +
      `${fmt(touch.again, 2)} ms a MB (a fresh module's loads pay the first for each MB ` +
      'of wasm memory they touch)');
    for (const size of SIZES) {
      const w = generateWorkload({ seed: SEED, ruleCount: size });
      const bytes = w.posts.reduce((n, p) => n + Buffer.byteLength(p), 0);
      const postsPath = join(dir, 'posts.jsonl');
      writeFileSync(postsPath, w.posts.map((text) => JSON.stringify({ text })).join('\n'));

      // wasm
      const full = await wasmPhases(dir, `list-${size}`, w.listText, postsPath, bytes, true, LOAD_RUNS);
      const { exportMs, memAfterText, memAfterExport, parts } = full.text;
      const formBytes = parts.reduce((n, part) => n + part.length, 0);
      const { memAfterCompiled, memEnd, matched } = full.run;
      const { times, warmTimes, mbps: wasmMbps, warmMbps, batchMbps } = full;

      // Feed-sized posts: each post's first 280 characters, cut at a word, on the list
      // restored from the same compiled form. Most posts in a feed are this short, and
      // they cost the similarity search more than their length says: a short post has
      // fewer terms than a claim, so its gate cannot end it before the postings walk.
      const shortPosts = w.posts.map((p) => {
        const cut = p.length <= 280 ? p.length : p.lastIndexOf(' ', 280);
        return p.slice(0, cut > 0 ? cut : 280);
      });
      const shortPath = join(dir, 'short.jsonl');
      writeFileSync(shortPath, shortPosts.map((text) => JSON.stringify({ text })).join('\n'));
      const short = await inWorker({ phase: 'compiled', blobPath: full.blobPath,
        partSizes: full.partSizes, postsPath: shortPath });
      const shortWarm = short.warm.times.sort((a, b) => a - b);

      // native
      const native = JSON.parse(execFileSync(cli, ['bench', '--list', full.listPath, '--posts', postsPath],
        { encoding: 'utf8', maxBuffer: 1 << 24 }));

      // The same list without its similarity rules (match.similar dropped; a rule left
      // with no matcher dropped): what the naive loop's workload has, and what the
      // similarity search costs a post.
      const plainList = withoutSimilarity(w.list);
      const plain = await wasmPhases(dir, `list-${size}-plain`, JSON.stringify(plainList), postsPath, bytes);

      // The naive baseline's own workload, on the engine.
      const patternList = patternsOnly(w.list);
      const patterns = await wasmPhases(dir, `list-${size}-patterns`, JSON.stringify(patternList), postsPath, bytes);

      // naive JS; sampled at large sizes, extrapolated to all posts.
      const sample = size >= 100000 ? 40 : size >= 10000 ? 200 : w.posts.length;
      const naive = naiveBaseline(w.list, w.posts.slice(0, sample));
      const naiveSampleBytes = w.posts.slice(0, sample).reduce((n, p) => n + Buffer.byteLength(p), 0);
      const naiveMbps = naiveSampleBytes / 1e6 / (naive.ms / 1e3);
      const naivePerPost = (naive.ms * 1000) / sample;

      console.log(`\n== ${size} rules (${mb(w.listText.length)} MB list text, ${w.posts.length} posts, ` +
        `${mb(bytes)} MB, ${w.planted.length} planted; ${matched} posts matched in wasm, ` +
        `${native.matchedPosts} natively)`);
      console.log(`  load from text       wasm ${fmtRuns(full.loadTextMs)}   native ${fmt(native.loadTextMs, 0)} ms`);
      console.log(`  load from compiled   wasm ${fmtRuns(full.loadCompiledMs)}   native ${fmt(native.loadCompiledMs, 0)} ms` +
        `   (${mb(formBytes)} MB compiled form in ${parts.length} parts, ` +
        `${mb(memAfterCompiled.keptFormBytes)} MB of it the rule records' part, which the ` +
        `engine takes and keeps, as the extension restores; export ${fmt(exportMs, 0)} ms)`);
      if (full.loadCopiedMs.length) {
        console.log(`  ... records copied   wasm ${fmtRuns(full.loadCopiedMs)}   ` +
          `(loadCompiled without transfer: the records copied into wasm memory)`);
      }
      console.log(`  throughput           wasm ${fmt(wasmMbps)} MB/s   native ${fmt(native.mbPerS)} MB/s` +
        `   naive JS ${fmt(naiveMbps, 3)} MB/s   (first pass)`);
      console.log(`  per post median      wasm ${fmt(quantile(times, 0.5) * 1000)} us   native ${fmt(native.medianUs)} us` +
        `   naive JS ${fmt(naivePerPost, 0)} us (mean)`);
      console.log(`  per post p99         wasm ${fmt(quantile(times, 0.99) * 1000)} us   native ${fmt(native.p99Us)} us`);
      console.log(`  second pass (warm)   wasm ${fmt(warmMbps)} MB/s, median ${fmt(quantile(warmTimes, 0.5) * 1000)} us, ` +
        `p99 ${fmt(quantile(warmTimes, 0.99) * 1000)} us   native ${fmt(native.warm.mbPerS)} MB/s, ` +
        `median ${fmt(native.warm.medianUs)} us, p99 ${fmt(native.warm.p99Us)} us`);
      console.log(`  short posts (warm)   wasm median ${fmt(quantile(shortWarm, 0.5) * 1000)} us, ` +
        `p99 ${fmt(quantile(shortWarm, 0.99) * 1000)} us (each post's first 280 characters; ` +
        `${short.matched} posts matched)`);
      console.log(`  batched (warm)       wasm ${fmt(batchMbps)} MB/s, ${fmt(full.run.batchMs * 1000 / w.posts.length)} us a post ` +
        `(checkBatch of ${BATCH} posts, as the extension sends them)`);
      console.log(`  wasm memory          fresh module after load from text ${mb(memAfterText.heapSize)} MB ` +
        `(heap in use ${mb(memAfterText.bytesInUse)} MB), then export ${mb(memAfterExport.heapSize)} MB; ` +
        `fresh module after load from compiled ` +
        `${mb(memAfterCompiled.heapSize)} MB (heap ${mb(memAfterCompiled.bytesInUse)} MB; ` +
        `the records' part kept in JavaScript ${mb(memAfterCompiled.keptFormBytes)} MB), ` +
        `after the posts ${mb(memEnd.heapSize)} MB (heap ${mb(memEnd.bytesInUse)} MB)`);
      console.log(`  without similarity   wasm ${fmt(plain.mbps)} MB/s (warm ${fmt(plain.warmMbps)} MB/s, ` +
        `median ${fmt(quantile(plain.warmTimes, 0.5) * 1000)} us, ` +
        `p99 ${fmt(quantile(plain.warmTimes, 0.99) * 1000)} us); ` +
        `vs naive JS ${fmt(plain.mbps / naiveMbps, 0)}x faster (${plainList.rules.length} rules, ` +
        `${plain.run.matched} posts matched)`);
      console.log(`  naive JS's workload  wasm ${fmt(patterns.mbps)} MB/s (warm ${fmt(patterns.warmMbps)} MB/s, ` +
        `median ${fmt(quantile(patterns.warmTimes, 0.5) * 1000)} us, ` +
        `p99 ${fmt(quantile(patterns.warmTimes, 0.99) * 1000)} us); ` +
        `vs naive JS ${fmt(patterns.mbps / naiveMbps, 0)}x faster (warm ${fmt(patterns.warmMbps / naiveMbps, 0)}x) ` +
        `(the ${patternList.rules.length} pattern rules alone, ${naive.regexps} patterns; ` +
        `${patterns.run.matched} posts matched, normalised)`);
      console.log(`  ratios               wasm/native throughput ${fmt(wasmMbps / native.mbPerS, 2)}x ` +
        `(warm ${fmt(warmMbps / native.warm.mbPerS, 2)}x); ` +
        `wasm vs naive JS ${fmt(wasmMbps / naiveMbps, 0)}x faster` +
        (sample < w.posts.length
          ? ` (naive JS: ${naive.regexps} RegExps timed on ${sample} posts, extrapolated)`
          : ` (naive JS: ${naive.regexps} RegExps on all posts)`));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMainThread) await main();
else parentPort.postMessage(await phase(workerData));
