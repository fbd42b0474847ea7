// `npm run bench:instructions -- [SIZE...] [--posts N] [--runs R] [--base-dist DIR]
// [--base-cli FILE]`: the x86 instructions a warm check takes, natively and in wasm
// over Node, counted by valgrind's callgrind on the bench's workload
// (scripts/bench/generate.mjs, the seed of `npm run bench`). Wall-clock time on these
// shared machines is no guide to a change of a few per cent (the same build's warm
// pass took 220 ms and 347 ms minutes apart); these counts repeat to 0.02% natively
// and to about 1% over Node. There only TurboFan's code runs (--no-liftoff, on one
// thread, so no tier-up lands at a different moment from run to run); what still
// moves is V8's own work, most likely (its garbage collections, its hash seeds:
// natively, where the engine's hash seed is random in each process too, the counts
// repeat), so the wasm count is the median of --runs runs (3 by default), printed
// with their range. Its part in the code V8 generated (the wasm module's and the
// glue's), on a line of its own, leaves V8's own work out: it repeats to 0.02%
// (557,369 and 557,273 at 10k rules, where the whole was 708k and 710k).
//
// A warm check's count is a difference of two runs, so that loading the list, and
// the first meeting of each post (RE2 programs compiled on first need, the word
// cache filled), drop out: natively `factlens check` over the posts once and twice,
// in wasm the posts checked once and three times, divided by the extra checks.
// With --base-dist (a copy of web/dist) and --base-cli (a copy of build/bin/factlens)
// from before a change, the same counts for that build and the ratios, in one run.
// Memory stalls are not counted: a change that trades instructions for cache misses
// needs timing as well (perf's software sampling works here, hardware counters do
// not).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BENCH_SEED as SEED, generateWorkload } from './bench/generate.mjs';

const root = new URL('..', import.meta.url).pathname;

// The wasm side's child: load the list, check the posts `passes` times.
if (process.argv[2] === '--child') {
  const [listPath, postsPath, passes] = process.argv.slice(3);
  const { createEngine } = await import('../web/index.js');
  const engine = await createEngine();
  engine.loadList(readFileSync(listPath, 'utf8'), { allowUnsigned: true });
  const posts = readFileSync(postsPath, 'utf8').split('\n').filter(Boolean)
    .map((line) => JSON.parse(line).text);
  for (let k = 0; k < Number(passes); k++) for (const post of posts) engine.check(post);
  process.exit(0);
}

function usage(message) {
  console.error(`bench-instructions: ${message}\n` +
    'usage: node scripts/bench-instructions.mjs [SIZE...] [--posts N] ' +
    '[--runs R] [--base-dist DIR] [--base-cli FILE]');
  process.exit(2);
}

const sizes = [];
let postCount = 400, runs = 3, baseDist = null, baseCli = null;
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  const value = () => process.argv[++i] ?? usage(`${a} needs a value`);
  if (a === '--posts') postCount = Number(value());
  else if (a === '--runs') runs = Number(value());
  else if (a === '--base-dist') baseDist = resolve(value());
  else if (a === '--base-cli') baseCli = resolve(value());
  else if (/^[1-9]\d*$/.test(a)) sizes.push(Number(a));
  else usage(`unknown argument ${a}`);
}
if (!(postCount >= 1 && postCount <= 2000)) usage('--posts must be 1 to 2000');
if (!(Number.isInteger(runs) && runs >= 1 && runs <= 15)) usage('--runs must be 1 to 15');
if (baseDist && !existsSync(join(baseDist, 'factlens-core.wasm')))
  usage(`${baseDist} holds no factlens-core.wasm`);
if (baseCli && !existsSync(baseCli)) usage(`${baseCli} does not exist`);
const cli = join(root, 'build/bin/factlens');
if (!existsSync(cli) || !existsSync(join(root, 'web/dist/factlens-core.wasm')))
  usage('build first (npm run build)');

// valgrind: on these machines by default; where it is not, bootstrap.sh installs it
// as it does the build's packages (only if missing, with its retries).
try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  execFileSync('bash', [join(root, 'scripts/bootstrap.sh'), 'valgrind'], { stdio: 'inherit' });
}

// The instructions of a callgrind profile that ran in generated code: the lines of
// `callgrind_annotate` whose object is unknown ("[???]"), which under Node is the
// code V8 generated (the wasm module's and the glue's optimised JavaScript), not
// V8 itself (its compilers, garbage collector and built-ins are in the node binary).
function generatedCode(profile) {
  const out = execFileSync('callgrind_annotate', ['--threshold=100', '--auto=no', profile],
    { encoding: 'utf8', maxBuffer: 256 << 20 });
  let sum = 0;
  for (const row of out.split('\n')) {
    const m = /^\s*([\d,]+)\s+\([^)]*\)\s+\S.*\[\?\?\?\]\s*$/.exec(row);
    if (m) sum += Number(m[1].replaceAll(',', ''));
  }
  return sum;
}

// Runs `command args` under callgrind and resolves to its instruction count (with
// `generated`, to { total, generated }: the count and its part in generated code).
function instructions(command, args, env, generated = false) {
  return new Promise((done, fail) => {
    const out = join(dir, `callgrind.${Math.random().toString(36).slice(2)}`);
    const childEnv = { ...process.env, ...env };
    if (!env.FACTLENS_WASM_DIST) delete childEnv.FACTLENS_WASM_DIST;  // this checkout's build
    const child = spawn('valgrind', ['--tool=callgrind', '--smc-check=all-non-file',
      '--dump-instr=no', `--callgrind-out-file=${out}`, command, ...args],
    { env: childEnv, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr.on('data', (d) => { log += d; });
    child.on('close', (code) => {
      try {
        const m = /Collected : (\d+)/.exec(log);
        if (code !== 0 || !m) fail(new Error(`${command} under callgrind failed (${code}):\n${log.slice(-2000)}`));
        else done(generated ? { total: Number(m[1]), generated: generatedCode(out) } : Number(m[1]));
      } catch (e) {
        fail(e);
      } finally {
        rmSync(out, { force: true });
      }
    });
  });
}

// Instructions a warm check, natively: `check` over the posts twice minus once.
async function nativeCount(binary, listPath, postsPath) {
  const args = (times) => ['check', '--list', listPath, '--allow-unsigned',
    ...Array(times).fill(postsPath)];
  const [once, twice] = await Promise.all([instructions(binary, args(1), {}),
    instructions(binary, args(2), {})]);
  return (twice - once) / postCount;
}

// Instructions a warm check in wasm over Node: three passes minus one, over two;
// the median of `runs` such differences, with their range. `generated`: the same
// for the part in generated code, which repeats to 0.02% from run to run where the
// whole moves by 1-3% (V8's own work, above), so it shows a change of a few
// tenths of a per cent in the wasm code.
async function wasmCount(dist, listPath, postsPath) {
  const env = dist ? { FACTLENS_WASM_DIST: dist } : {};
  const args = (passes) => ['--no-liftoff', '--single-threaded', new URL(import.meta.url).pathname,
    '--child', listPath, postsPath, String(passes)];
  const counts = [], generated = [];
  for (let r = 0; r < runs; r++) {
    const [one, three] = await Promise.all([instructions(process.execPath, args(1), env, true),
      instructions(process.execPath, args(3), env, true)]);
    counts.push((three.total - one.total) / (2 * postCount));
    generated.push((three.generated - one.generated) / (2 * postCount));
  }
  const median = (xs) => {
    xs.sort((a, b) => a - b);
    return { count: xs[(xs.length - 1) >> 1], low: xs[0], high: xs.at(-1) };
  };
  return { ...median(counts), generated: median(generated) };
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');
// `m`, `base`: a count, or a median with its range ({count, low, high}).
const range = (m) => (m.low === undefined || runs === 1 ? '' : ` [${fmt(m.low)}-${fmt(m.high)}]`);
const line = (label, m, base) => {
  const of = (x) => (typeof x === 'number' ? { count: x } : x);
  m = of(m);
  console.log(`  ${label.padEnd(22)}${fmt(m.count).padStart(11)} instructions a check${range(m)}` +
    (base ? `   (base ${fmt(of(base).count)}${range(of(base))}: ${(m.count / of(base).count).toFixed(3)}x)` : ''));
};

const dir = mkdtempSync(join(tmpdir(), 'factlens-instructions-'));
try {
  for (const size of sizes.length ? sizes : [10000]) {
    const w = generateWorkload({ seed: SEED, ruleCount: size });
    const listPath = join(dir, `list-${size}.json`);
    const postsPath = join(dir, `posts-${size}.jsonl`);
    writeFileSync(listPath, w.listText);
    writeFileSync(postsPath, w.posts.slice(0, postCount).map((text) => JSON.stringify({ text }))
      .join('\n') + '\n');
    console.log(`== ${size} rules: ${postCount} bench posts (seed ${SEED}), warm checks under ` +
      `callgrind${runs > 1 ? ` (wasm: the median of ${runs} runs [their range])` : ''}`);
    const native = await nativeCount(cli, listPath, postsPath);
    line('native', native, baseCli && await nativeCount(baseCli, listPath, postsPath));
    const wasm = await wasmCount(null, listPath, postsPath);
    const wasmBase = baseDist && await wasmCount(baseDist, listPath, postsPath);
    line('wasm over Node', wasm, wasmBase);
    line('... generated code', wasm.generated, wasmBase && wasmBase.generated);
    console.log(`  wasm/native            ${(wasm.count / native).toFixed(2)}x the instructions`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
