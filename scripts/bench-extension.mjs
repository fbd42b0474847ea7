// End-to-end benchmark of the extension in real headless Chromium (figures printed,
// never asserted): a feed of 500 X-like posts appended 10 at a time, the packaged
// extension subscribed to a signed 10k-rule list (scripts/bench/generate.mjs), and
//   - long tasks (> 50 ms) on the page's main thread, and those with extension code in
//     them, against the same feed without the extension (a baseline in the same run);
//   - main-thread time spent in the extension's content scripts per 10 posts (V8 CPU
//     profile samples whose nearest script frame is a chrome-extension:// URL; native
//     calls they make count as theirs; layout and paint the page does later do not),
//     as the samples' wall time and as sample count x interval: on a busy machine a
//     sample's wall time includes the wait of a descheduled thread (after a message
//     post wakes another process, say), which the count does not;
//   --lines adds the extension's self-time samples by source line;
//   - first-label latency: from a post's insertion to its overlay's insertion (p50, p95);
//   - memory of the background engine: the size of the service worker's wasm memory
//     (a hook added to the bench's own copy of the package notes the instances);
//   - a worker start's list restore, from the compiled copy and from the text (the
//     e2e-only restart-engine hook, which the bench's package has), whole cold
//     starts (the worker stopped through the DevTools protocol, woken by a message),
//     and a feed's first label after one.
//
//   node scripts/bench-extension.mjs [--posts N] [--rules N] [--runs N] [--lines] [--sample-us N]   (npm run bench:extension)
// Needs build/bin/factlens (npm run build) for keygen and signing.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir, loadavg, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { generateWorkload } from './bench/generate.mjs';
import { packageExtension } from './package-extension.mjs';
import { CHROMIUM_PATH, CHROMIUM_ARGS } from './chromium.mjs';
import { startSiteServer, startListServer, launchWithExtension,
         waitSubscription } from '../tests/e2e/sites.mjs';

const repo = fileURLToPath(new URL('../', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const POSTS = arg('--posts', 500);
const RUNS = arg('--runs', 3);
const RULES = arg('--rules', 10000);
const SEED = 7;
const PER_APPEND = 10;
const APPEND_EVERY_MS = 100;
const HOST = 'feed.factlens.test';
// Profiler sampling interval. At 100 us the profiler's own interruptions doubled the
// extension's measured time (3.1-4.3 ms per 10 posts against 1.4-1.9 at 1 ms, same
// machine, same hour); 1 ms (V8's default) gives about 100 samples of extension work
// per run, which is enough for the figure and the breakdown.
const SAMPLE_US = arg('--sample-us', 1000);

const fmt = (n, d = 1) => n.toFixed(d);
const pct = (sorted, p) => sorted.length
  ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;

// The feed page: X markup (the X adapter reads it), appended in batches by the page's
// own script; it notes when each post went in and when an overlay appeared before it.
const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>bench feed</title>
<link rel="icon" href="data:,"><script src="/feed.js" defer></script></head>
<body><main><div data-testid="primaryColumn"><section><h1>Home</h1>
<div aria-label="Timeline"><div id="timeline"></div></div></section></div></main></body></html>`;
const FEED_JS = `
const timeline = document.getElementById('timeline');
window.__inserted = new Map();
window.__labelled = new Map();
window.__longTasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
  .observe({ type: 'longtask', buffered: true });
new MutationObserver((records) => {
  const now = performance.now();
  for (const r of records) for (const n of r.addedNodes) {
    if (n.nodeType === 1 && n.hasAttribute('data-factlens-overlay')) {
      const id = n.nextElementSibling && n.nextElementSibling.dataset.id;
      if (id && !window.__labelled.has(id)) window.__labelled.set(id, now);
    }
  }
}).observe(timeline, { childList: true, subtree: true });
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const k in attrs) el.setAttribute(k, attrs[k]);
  el.append(...children);
  return el;
}
window.startFeed = async (perAppend, every) => {
  const posts = await (await fetch('/posts.json')).json();
  // One 60 ms task on purpose: proof that the long-task recording works in this run.
  const end = performance.now() + 60;
  while (performance.now() < end);
  for (let i = 0; i < posts.length; i += perAppend) {
    const batch = posts.slice(i, i + perAppend).map((text, k) => {
      const id = String(100000 + i + k);
      return h('div', { 'data-testid': 'cellInnerDiv' }, h('div', {},
        h('article', { 'data-testid': 'tweet', 'data-id': id },
          h('div', { 'data-testid': 'User-Name' }, h('a', { href: '/user' + (i + k) }, 'User ' + (i + k))),
          h('div', { 'data-testid': 'tweetText', lang: 'en' }, h('span', {}, text)),
          h('a', { href: '/user' + (i + k) + '/status/' + id }, h('time', {}, '1h')))));
    });
    const now = performance.now();
    timeline.append(...batch);
    for (const cell of batch) window.__inserted.set(cell.querySelector('article').dataset.id, now);
    await new Promise((done) => setTimeout(done, every));
  }
};`;

// Samples of a V8 CPU profile attributed to the nearest frame with a script URL.
function analyseProfile(profile, extensionOrigin) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const owner = new Map();
  const ownerOf = (id) => {
    if (owner.has(id)) return owner.get(id);
    const node = byId.get(id);
    let result;
    if (node.callFrame.url) result = node.callFrame.url.startsWith(extensionOrigin) ? 'ext' : 'page';
    else if (node.callFrame.functionName === '(idle)') result = 'idle';
    else if (!parent.has(id) || byId.get(parent.get(id)).callFrame.functionName === '(root)') {
      result = 'other';  // (program), (garbage collector): browser work, not script
    } else result = ownerOf(parent.get(id));
    owner.set(id, result);
    return result;
  };
  const { samples, timeDeltas } = profile;
  let extUs = 0;
  const byFunction = new Map();  // extension time by the nearest extension frame
  const frameOf = (id) => {
    let node = byId.get(id);
    while (node && !node.callFrame.url) node = byId.get(parent.get(node.id));
    const leaf = byId.get(id).callFrame.functionName || '(anonymous)';
    if (!node) return leaf;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = `${functionName || '(anonymous)'} ${url.split('/').pop()}:${lineNumber + 1}`;
    return node.id === id ? where : `${where} > ${leaf}`;
  };
  // Busy spans: consecutive non-idle samples, roughly one task each.
  const spans = [];
  let span = null;
  let extSamples = 0;
  for (let i = 0; i < samples.length; i++) {
    const dt = timeDeltas[i + 1] ?? 0;
    const who = ownerOf(samples[i]);
    if (who === 'ext') extSamples++;
    if (who === 'ext') {
      extUs += dt;
      const key = frameOf(samples[i]);
      byFunction.set(key, (byFunction.get(key) ?? 0) + dt);
    }
    if (who === 'idle') {
      if (span) spans.push(span);
      span = null;
    } else {
      span ??= { us: 0, extUs: 0 };
      span.us += dt;
      if (who === 'ext') span.extUs += dt;
    }
  }
  if (span) spans.push(span);
  // Self time by source line (V8's positionTicks) of extension frames, for --lines.
  const byLine = new Map();
  for (const node of profile.nodes) {
    if (!node.positionTicks || ownerOf(node.id) !== 'ext' || !node.callFrame.url) continue;
    const file = node.callFrame.url.split('/').pop();
    for (const { line, ticks } of node.positionTicks) {
      const key = `${file}:${line} (${node.callFrame.functionName || '(anonymous)'})`;
      byLine.set(key, (byLine.get(key) ?? 0) + ticks);
    }
  }
  const lines = [...byLine].sort((a, b) => b[1] - a[1]).slice(0, 15);
  const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 8)
    .map(([where, us]) => ({ where, ms: us / 1000 }));
  return { extMs: extUs / 1000, extSamples, spans, top, lines };
}

// The background engine's memory: the bench's own copy of the package gets a first
// import in background.js that notes every wasm instance's memory (the source tree and
// real packages have no such hook), by WeakRef: the background swaps in fresh engines,
// each in an instance of its own, and an old one's memory must be free to go.
const MEMORY_HOOK = `
const memories = globalThis.__factlensBenchMemories = [];
for (const name of ['instantiate', 'instantiateStreaming']) {
  const original = WebAssembly[name];
  WebAssembly[name] = async function (...args) {
    const result = await original.apply(this, args);
    const instance = result.instance ?? result;
    for (const value of Object.values(instance.exports ?? {})) {
      if (value instanceof WebAssembly.Memory) memories.push(new WeakRef(value));
    }
    return result;
  };
}
`;
// The wasm memories of the worker's live instances, after a full collection (the bench
// starts Chromium with --expose-gc).
const liveWasmMemories = (worker) => worker.evaluate(async () => {
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await new Promise((done) => setTimeout(done, 50));
  }
  return globalThis.__factlensBenchMemories.map((ref) => ref.deref()).filter(Boolean)
    .map((memory) => memory.buffer.byteLength);
});

async function addMemoryHook(extensionDir) {
  await writeFile(join(extensionDir, 'bench-memory-hook.js'), MEMORY_HOOK);
  const background = join(extensionDir, 'background.js');
  await writeFile(background, `import './bench-memory-hook.js';\n${await readFile(background, 'utf8')}`);
}

async function runFeed(page, cdp, extensionOrigin) {
  await page.waitForTimeout(500);  // content scripts injected, page idle
  if (cdp) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: SAMPLE_US });
    await cdp.send('Profiler.start');
  }
  await page.evaluate(([n, every]) => window.startFeed(n, every), [PER_APPEND, APPEND_EVERY_MS]);
  // Let the last labels arrive: quiet for a second.
  let last = -1;
  for (;;) {
    await page.waitForTimeout(1000);
    const count = await page.evaluate(() => window.__labelled.size);
    if (count === last) break;
    last = count;
  }
  const profile = cdp ? (await cdp.send('Profiler.stop')).profile : null;
  const result = await page.evaluate(() => ({
    inserted: Object.fromEntries(window.__inserted), labelled: Object.fromEntries(window.__labelled),
    longTasks: window.__longTasks,
  }));
  return { ...result, profile: profile && analyseProfile(profile, extensionOrigin),
};
}

const dir = await mkdtemp(join(tmpdir(), 'factlens-bench-ext-'));
const cleanup = [];
try {
  const factlens = join(repo, 'build/bin/factlens');
  const workload = generateWorkload({ seed: SEED, ruleCount: RULES, postCount: POSTS, plantRate: 0.2 });
  const listPath = join(dir, 'bench.json');
  await writeFile(listPath, workload.listText);
  execFileSync(factlens, ['keygen', '-W', '-p', join(dir, 'bench.pub'), '-s', join(dir, 'bench.key')],
               { stdio: 'ignore' });
  execFileSync(factlens, ['sign', '-s', join(dir, 'bench.key'), '-m', listPath], { stdio: 'ignore' });

  const lists = await startListServer({
    '/bench.json': async () => ({ type: 'application/json', data: await readFile(listPath) }),
    '/bench.json.minisig': async () => ({ type: 'text/plain', data: await readFile(`${listPath}.minisig`) }),
  });
  cleanup.push(() => lists.close());
  const sites = await startSiteServer({
    extra: (host, path) => {
      if (host !== HOST) return null;
      if (path === '/') return { type: 'text/html; charset=utf-8', data: PAGE };
      if (path === '/feed.js') return { type: 'text/javascript; charset=utf-8', data: FEED_JS };
      if (path === '/posts.json') return { type: 'application/json', data: JSON.stringify(workload.posts) };
      return null;
    },
  });
  cleanup.push(() => sites.close());
  const packaged = await packageExtension({ out: join(dir, 'dist'), defaultList: `${lists.url}/bench.json`,
                                            trustedKey: join(dir, 'bench.pub'), allowHttp: true,
                                            testHooks: true });  // restart-engine, below
  await addMemoryHook(packaged.chromium);

  console.log(`factlens extension bench: ${POSTS} X-like posts appended ${PER_APPEND} every ` +
    `${APPEND_EVERY_MS} ms, ${RULES}-rule signed list (seed ${SEED}), Chromium headless, ` +
    `${workload.planted.length} posts with a planted match; load average ${loadavg()[0].toFixed(1)} ` +
    `on ${cpus().length} cores`);

  // Baseline: the same feed without the extension.
  const plain = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true,
    args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP ${HOST} 127.0.0.1, MAP * ~NOTFOUND`] });
  const plainPage = await (await plain.newContext({ ignoreHTTPSErrors: true })).newPage();
  await plainPage.goto(sites.url(HOST));
  const plainCdp = await plainPage.context().newCDPSession(plainPage);
  const t = performance.now();
  const base = await runFeed(plainPage, plainCdp, 'chrome-extension://');
  const baseMs = performance.now() - t;
  await plain.close();

  const profileDir = join(dir, 'profile');
  const { context, worker, id } = await launchWithExtension(packaged.chromium, profileDir,
                                                            ['--js-flags=--expose-gc']);
  cleanup.push(() => context.close());
  const t0 = performance.now();
  // The options page, from which the bench sends its test messages.
  const settings = await waitSubscription(context, id, 'ok', 120000);
  const subscribeMs = performance.now() - t0;
  const mb = (b) => fmt(b / 1048576, 1);
  const longest = (tasks) => fmt(Math.max(0, ...tasks), 0);
  console.log(`list download, verify and compile in the worker (install to "up to date"): ${fmt(subscribeMs, 0)} ms`);
  {
    const { memory, compactions } = await settings.evaluate(() =>
      chrome.runtime.sendMessage({ type: 'test', op: 'memory' }));
    const live = await liveWasmMemories(worker);
    console.log(`after the install: the engine's wasm memory ${mb(memory.heapSize)} MB (heap in use ` +
      `${mb(memory.bytesInUse)} MB; ${compactions} fresh engine(s) swapped in to give the load's ` +
      `memory back); live wasm instances ${live.length}, ${mb(live.reduce((a, b) => a + b, 0))} MB`);
  }
  console.log(`without the extension: ${base.longTasks.length} long tasks (> 50 ms; each run has one ` +
    `60 ms task of the page on purpose), longest ${longest(base.longTasks)} ms; feed ${fmt(baseMs / 1000, 1)} s`);

  // Each run is a fresh page (a fresh content script) in the same browser: the first
  // meets a cold engine (its lazy compilation), the others a warm one.
  const results = [];
  for (let r = 1; r <= RUNS; r++) {
    const page = await context.newPage();
    await page.goto(sites.url(HOST));
    const cdp = await context.newCDPSession(page);
    const run = await runFeed(page, cdp, `chrome-extension://${id}/`);
    await page.close();
    const latencies = Object.entries(run.labelled).map(([post, at]) => at - run.inserted[post])
      .sort((a, b) => a - b);
    const spans = run.profile.spans;
    const result = {
      labelled: latencies.length,
      longTasks: run.longTasks.length,
      longestTask: Math.max(0, ...run.longTasks),
      spans: spans.filter((x) => x.us > 50_000 && x.extUs > 0).length,
      maxExtInSpan: Math.max(0, ...spans.map((x) => x.extUs / 1000)),
      per10: run.profile.extMs / (POSTS / 10),
      samplesPer10: (run.profile.extSamples * SAMPLE_US / 1000) / (POSTS / 10),
      p50: pct(latencies, 50),
      p95: pct(latencies, 95),
      top: run.profile.top,
      lines: run.profile.lines,
    };
    results.push(result);
    console.log(`run ${r}${r === 1 ? ' (cold engine)' : ''}: ${result.labelled} of ${POSTS} posts labelled; ` +
      `long tasks ${result.longTasks} (longest ${fmt(result.longestTask, 0)} ms); CPU-profile busy spans ` +
      `> 50 ms with extension code ${result.spans}, most extension time in one span ` +
      `${fmt(result.maxExtInSpan, 1)} ms; extension main-thread time ${fmt(result.per10, 2)} ms per 10 posts ` +
      `(by sample count ${fmt(result.samplesPer10, 2)} ms); ` +
      `first label p50 ${fmt(result.p50, 1)} ms, p95 ${fmt(result.p95, 1)} ms`);
  }
  const median = (key) => {
    const v = results.map((x) => x[key]).sort((a, b) => a - b);
    return v[Math.floor((v.length - 1) / 2)];
  };
  console.log(`median of ${RUNS} runs: long tasks ${median('longTasks')} (1 is the page's own), ` +
    `most extension time in one busy span ${fmt(median('maxExtInSpan'), 1)} ms, extension main-thread ` +
    `time ${fmt(median('per10'), 2)} ms per 10 posts (by sample count ${fmt(median('samplesPer10'), 2)} ms), first label p50 ${fmt(median('p50'), 1)} ms, ` +
    `p95 ${fmt(median('p95'), 1)} ms`);
  console.log(`where the extension's time went in the last run (nearest extension frame > callee):`);
  for (const { where, ms } of results[results.length - 1].top) {
    console.log(`  ${fmt(ms, 1).padStart(7)} ms  ${where}`);
  }
  if (process.argv.includes('--lines')) {
    console.log('self-time samples by source line in the last run (--lines):');
    for (const [where, ticks] of results[results.length - 1].lines) {
      console.log(`  ${String(ticks).padStart(7)}  ${where}`);
    }
  }
  const wasmMemories = await liveWasmMemories(worker);
  const wasm = wasmMemories.reduce((a, b) => a + b, 0);
  console.log(`background engine memory (wasm memory of the service worker, after the runs): ` +
    `${mb(wasm)} MB in ${wasmMemories.length} instance(s)`);
  // (After the memory figure: a restart holds two engines' lists for a moment.)
  // A worker start: the list restored from its compiled copy (IndexedDB), then, with
  // the copy deleted, from its text (parse, verify, compile), as a start without it.
  const restart = () => settings.evaluate(() =>
    chrome.runtime.sendMessage({ type: 'test', op: 'restart-engine' }));
  // Five starts from the compiled copy: one is at the mercy of the host's load.
  const fromCompiled = [];
  for (let i = 0; i < 5; i++) fromCompiled.push((await restart()).engine.restored[0]);
  const compiledMs = fromCompiled.map((r) => r.ms).sort((a, b) => a - b);
  await settings.evaluate(() => new Promise((resolve, reject) => {
    const open = indexedDB.open('factlens-compiled');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const tx = open.result.transaction('lists', 'readwrite');
      tx.objectStore('lists').clear();
      tx.oncomplete = () => { open.result.close(); resolve(); };
      tx.onerror = () => reject(tx.error);
    };
  }));
  const fromText = (await restart()).engine.restored[0];
  console.log(`worker start, list restored: from its compiled copy (${fromCompiled[0].from}) ` +
    `${fmt(compiledMs[2], 0)} ms (median of 5: ${compiledMs.map((ms) => fmt(ms, 0)).join(', ')}; ` +
    `IndexedDB's read included); from its text (${fromText.from}) ${fmt(fromText.ms, 0)} ms`);
  // Whole cold starts: the service worker stopped (DevTools protocol), then woken by a
  // message, to its answer (the worker's start, the engine's, the list's restore from
  // its compiled copy, written again by the restart from text above).
  const cdp = await context.newCDPSession(settings);
  await cdp.send('ServiceWorker.enable');
  const stopWorker = async () => {
    await cdp.send('ServiceWorker.stopAllWorkers');
    await new Promise((resolve) => setTimeout(resolve, 500));
  };
  const coldMs = [];
  for (let i = 0; i < 5; i++) {
    await stopWorker();
    const t0 = performance.now();
    const answer = await settings.evaluate(() => chrome.runtime.sendMessage({ type: 'status' }));
    coldMs.push(performance.now() - t0);
    if (answer.engine.restored[0]?.from !== 'compiled') {
      throw new Error(`a cold start restored ${JSON.stringify(answer.engine.restored)}`);
    }
  }
  coldMs.sort((a, b) => a - b);
  console.log(`cold worker start (stopped, woken by a message, to its answer): ${fmt(coldMs[2], 0)} ms ` +
    `(median of 5: ${coldMs.map((ms) => fmt(ms, 0)).join(', ')})`);
  // What a reader sees after one: the worker stopped (as browsers stop it after 30 s
  // idle), then the feed opened; the first label's wait is the worker's start, the
  // list's restore and the first checks in code V8 has not optimised yet.
  const coldFeeds = [];
  for (let i = 0; i < 3; i++) {
    await stopWorker();
    const page = await context.newPage();
    await page.goto(sites.url(HOST));
    const run = await runFeed(page, null, `chrome-extension://${id}/`);
    await page.close();
    if (Object.keys(run.labelled).length === 0) throw new Error('a feed after a cold start got no label');
    const latencies = Object.entries(run.labelled).map(([post, at]) => at - run.inserted[post])
      .sort((a, b) => a - b);
    coldFeeds.push({ first: Math.min(...Object.values(run.labelled)) - Math.min(...Object.values(run.inserted)),
                     p50: pct(latencies, 50) });
  }
  const coldFirst = coldFeeds.map((r) => r.first).sort((a, b) => a - b);
  console.log(`after a cold worker start, a feed's first label: ${fmt(coldFirst[1], 0)} ms after its first ` +
    `posts went in (median of 3: ${coldFirst.map((ms) => fmt(ms, 0)).join(', ')}; first label p50 ` +
    `${coldFeeds.map((r) => fmt(r.p50, 0)).join(', ')} ms; the runs above, warm: p50 ${fmt(median('p50'), 1)} ms)`);
} finally {
  for (const step of cleanup.reverse()) await step().catch(() => {});
  await rm(dir, { recursive: true, force: true });
}
