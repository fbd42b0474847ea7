#!/usr/bin/env node
// The hostile-input table (issue 9, SECURITY.md): writes each hostile input into a
// temporary folder, runs it through the native CLI (`factlens check` and `factlens
// lint`, build/bin/factlens) and through the wasm engine in a child Node process
// (the package API, as the extension uses it), and prints one row per input and
// runner: what came out (the error message, or a summary of the verdicts), the wall
// time and the peak memory. It asserts nothing: the behaviours are asserted by
// tests/cpp/hostile_test.cpp; this is the figure sheet, and the way to see that
// every cost is bounded.
//
//   npm run hostile                       every input (needs `npm run build`)
//   node scripts/hostile-table.mjs nested-json post-10mb    only these inputs
//   node scripts/hostile-table.mjs --list                   the inputs' names
//
// Peak memory: native, the child's maximum resident set (GNU time's %M); wasm, the
// engine's wasm heap afterwards (it only grows, so it is the peak) and the child
// Node process's maximum resident set (process.resourceUsage().maxRSS), of which
// about 45 MB is Node itself (see the baseline row). Each child runs under a time
// limit (--timeout SECONDS, default 120) and a 4 GiB address-space limit for the
// native CLI, so an unbounded cost shows as a row, not a stuck machine.
// FACTLENS_WASM_DIST (web/index.js) runs the wasm rows on another build.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'build/bin/factlens');

// ---- the child: one input through the wasm engine ----------------------------------

if (process.argv[2] === '--wasm-child') {
  const [listFile, postsFile] = process.argv.slice(3);
  const { createEngine } = await import('../web/index.js');
  const engine = await createEngine();
  const t0 = performance.now();
  let result;
  try {
    // As the extension does: the download decoded as UTF-8 text (invalid bytes
    // become U+FFFD, as Response.text() makes them).
    const info = engine.loadList(readFileSync(listFile, 'utf8'), { allowUnsigned: true });
    const posts = readFileSync(postsFile, 'utf8').split('\n').filter((p) => p.trim() !== '');
    const counts = { none: 0, label: 0, demote: 0, hide: 0 };
    for (const v of engine.checkBatch(posts)) counts[v.action]++;
    result = `loaded ${info.ruleCount} rules; ${posts.length} posts: ${counts.label} labelled, ` +
      `${counts.demote} demoted, ${counts.hide} hidden`;
  } catch (e) {
    result = e.name === 'FactlensError' ? `${e.kind}: ${e.message}` : `CRASH ${e.stack}`;
  }
  const ms = performance.now() - t0;
  const { heapSize } = engine.memoryStats();
  process.stdout.write(JSON.stringify({ result, ms, heapSize,
    maxRss: process.resourceUsage().maxRSS * 1024 }));
  process.exit(0);
}

// ---- the inputs -------------------------------------------------------------------

const MiB = 1 << 20;
const head = (version = 1) =>
  '{"format":"factlens/1","list":{"id":"hostile","name":"Hostile","publisher":{"name":"P",' +
  `"url":"https://p.example/"},"version":${version},"issued":"2026-01-01T00:00:00Z",` +
  '"expires":"2099-01-01T00:00:00Z"},"rules":';
const listWith = (rulesJson, version) => `${head(version)}${rulesJson}}`;
const rule = (id, match, extra = '') =>
  `{"id":"${id}","claim":"A claim.","rating":"false","severity":"high","match":${match},` +
  '"review":{"url":"https://r.example/x","title":"T","publisher":"P","date":"2025-01-01"}' +
  `${extra}}`;
const oneRule = (match, extra) => listWith(`[${rule('r', match, extra)}]`);
const demoList = () => readFileSync(path.join(root, 'rules/examples/demo.json'));
const demoPosts = () => readFileSync(path.join(root, 'rules/examples/demo-posts.txt'));
// Builds a string of about `bytes` bytes from `piece(i)` without quadratic copying.
function repeatTo(bytes, piece) {
  const parts = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const p = piece(i);
    parts.push(p);
    size += Buffer.byteLength(p);
  }
  return parts.join('');
}

// Each input: a list and posts (bytes or text). Names are the table's first column.
const INPUTS = [
  {
    name: 'baseline',
    what: 'the demo list and its 20-odd posts (the cost of starting)',
    list: demoList, posts: demoPosts,
  },
  {
    name: 'nested-json',
    what: '[[[...]]] nested 100k levels, closed (200 KB)',
    list: () => '['.repeat(100000) + ']'.repeat(100000), posts: demoPosts,
  },
  {
    name: 'nested-in-rule',
    what: 'a valid list whose rule has an x- field of {"a":{"a":... 100k levels',
    list: () => oneRule('{"patterns":["hoax"]}',
      `,"x-deep":${'{"a":'.repeat(100000)}1${'}'.repeat(100000)}`),
    posts: demoPosts,
  },
  {
    name: 'list-50mb-rules',
    what: '50 MB of real rules (keywords, claims of 950 bytes): 45k rules',
    list: () => {
      const claim = 'This claim is repeated to make the rule large. '.repeat(20);
      const rules = [];
      let size = 0;
      for (let i = 0; size < 50 * MiB; i++) {
        const r = `{"id":"r${i}","claim":"${claim}","rating":"false","severity":"high",` +
          `"match":{"keywords":[{"all":["alpha${i}","beta${i % 977}"],"within":8}]},` +
          `"review":{"url":"https://r.example/${i}","title":"T","publisher":"P",` +
          '"date":"2025-01-01"}}';
        rules.push(r);
        size += r.length + 1;
      }
      return listWith(`[${rules.join(',')}]`);
    },
    posts: () => 'alpha17 and beta17 together\nnothing to see\n',
  },
  {
    name: 'list-50mb-x-array',
    what: '50 MB list: a valid rule plus an x- array of 25M zeros',
    list: () => oneRule('{"patterns":["hoax"]}',
      `,"x-big":[0${',0'.repeat(25 * MiB - 1)}]`),
    posts: demoPosts,
  },
  {
    name: 'list-50mb-x-strings',
    what: '50 MB list: x- arrays of 256 empty strings in each of 60k rules',
    list: () => {
      const xs = `,"x-s":[${Array(256).fill('""').join(',')}]`;
      const rules = [];
      let size = 0;
      for (let i = 0; size < 50 * MiB; i++) {
        const r = rule(`r${i}`, `{"patterns":["hoax${i}"]}`, xs);
        rules.push(r);
        size += r.length + 1;
      }
      return listWith(`[${rules.join(',')}]`);
    },
    posts: demoPosts,
  },
  {
    name: 'list-65mb',
    what: '65 MiB of spaces (over the 64 MiB list limit)',
    list: () => Buffer.alloc(65 * MiB, ' '), posts: demoPosts,
  },
  {
    name: 'rules-1m',
    what: 'a million rules (tiny {} objects, 3 MB)',
    list: () => listWith(`[{}${',{}'.repeat(999999)}]`), posts: demoPosts,
  },
  {
    name: 'rules-200k-valid',
    what: '200,000 distinct pattern rules: the most the limit allows',
    list: () => listWith(`[${Array.from({ length: 200000 },
      (_, i) => rule(`r${i}`, `{"patterns":["\\\\bchip${i}x\\\\b"]}`)).join(',')}]`),
    posts: () => 'a chip17x here\nnothing\n',
  },
  {
    name: 'pattern-100k',
    what: 'one pattern of 100,000 characters',
    list: () => oneRule(`{"patterns":["${'a'.repeat(100000)}"]}`), posts: demoPosts,
  },
  {
    name: 're2-counted-class',
    what: 'pattern \\pL{1000} (a huge RE2 program from 8 bytes)',
    list: () => oneRule('{"patterns":["\\\\pL{1000}"]}'), posts: demoPosts,
  },
  {
    name: 're2-nested-repeat',
    what: 'pattern ((((a{10}){10}){10}){10}) (10^4 copies)',
    list: () => oneRule('{"patterns":["((((a{10}){10}){10}){10})"]}'), posts: demoPosts,
  },
  {
    name: 're2-many-large',
    what: '12,000 rules of 256 distinct patterns, each a large RE2 program',
    list: () => listWith(`[${Array.from({ length: 12000 }, (_, i) => rule(`r${i}`,
      `{"patterns":[${Array.from({ length: 256 },
        (_, k) => `"\\\\pL{60}${i}x${k}"`).join(',')}]}`)).join(',')}]`),
    posts: () => `${'word '.repeat(2000)}\n${'x'.repeat(5000)}\n`,
  },
  {
    name: 're2-lazy-no-atoms',
    what: '10,240 distinct patterns without literals ([a-z]{k}[0-9]{j}): run on every post',
    list: () => listWith(`[${Array.from({ length: 40 }, (_, i) => rule(`r${i}`,
      `{"patterns":[${Array.from({ length: 256 },
        (_, k) => `"[a-z]{${1 + ((i * 256 + k) % 100)}}[0-9]{${1 + Math.floor((i * 256 + k) / 100)}}"`)
        .join(',')}]}`)).join(',')}]`),
    posts: () => Array.from({ length: 20 }, (_, i) => `${'word '.repeat(200)} abc${i}`).join('\n'),
  },
  {
    name: 're2-dfa-blowup',
    what: 'pattern (a|b)*a(a|b){20} (exponential DFA) on 100 KB posts',
    list: () => oneRule('{"patterns":["(a|b)*a(a|b){20}c"]}'),
    posts: () => Array.from({ length: 5 }, (_, i) =>
      Array.from({ length: 100000 }, (_, k) => ((k * 7919 + i) % 3 ? 'a' : 'b')).join('')).join('\n'),
  },
  {
    name: 'utf8-in-list',
    what: 'invalid UTF-8 bytes (FF, C0 80, ED A0 80) in a claim',
    list: () => Buffer.concat([Buffer.from(head() + '[{"id":"r","claim":"A '),
      Buffer.from([0xff, 0xc0, 0x80, 0xed, 0xa0, 0x80]),
      Buffer.from('","rating":"false","severity":"low","match":{"patterns":["hoax"]},' +
        '"review":{"url":"https://r.example/x","title":"T","publisher":"P","date":"2025-01-01"}}]}')]),
    posts: demoPosts,
  },
  {
    name: 'utf8-in-key',
    what: 'invalid UTF-8 in an object key',
    list: () => Buffer.concat([Buffer.from('{"format":"factlens/1","'), Buffer.from([0xfe, 0xff]),
      Buffer.from('":1}')]),
    posts: demoPosts,
  },
  {
    name: 'utf8-in-posts',
    what: 'posts of invalid UTF-8 around a match, surrogates, overlongs, F4 90',
    list: () => oneRule('{"patterns":["microchip"]}'),
    posts: () => Buffer.concat(Array.from({ length: 200 }, (_, i) => Buffer.concat([
      Buffer.from([0xff, 0xfe]), Buffer.from(`microchip${i}`), Buffer.from([0xc0, 0x80, 0xed, 0xa0, 0x80]),
      Buffer.from(' microchip '), Buffer.from([0xf4, 0x90, 0x80, 0x80, 0xe2, 0x82, 0x0a])]))),
  },
  {
    name: 'nul-raw-in-list',
    what: 'a raw NUL byte inside the list JSON',
    list: () => Buffer.concat([Buffer.from(head() + '[{"id":"r\0"}]}')]), posts: demoPosts,
  },
  {
    name: 'nul-escaped-in-list',
    what: '\\u0000 in a claim, a pattern and a keyword',
    list: () => oneRule('{"patterns":["hoax\\u0000"],"keywords":[{"all":["a\\u0000b"]}]}')
      .replace('A claim.', 'A\\u0000claim'),
    posts: () => 'hoax\0 and a\0b\nplain hoax\n',
  },
  {
    name: 'nul-in-posts',
    what: 'posts full of NUL bytes around a match',
    list: () => oneRule('{"patterns":["microchip"]}'),
    posts: () => Array.from({ length: 100 }, () => '\0'.repeat(1000) + 'microchip\0microchip' + '\0'.repeat(1000))
      .join('\n'),
  },
  {
    name: 'duplicate-keys',
    what: 'a key twice in a rule ("rating" false, then satire)',
    list: () => oneRule('{"patterns":["hoax"]}', ',"rating":"satire"'), posts: demoPosts,
  },
  {
    name: 'duplicate-keys-top',
    what: '"rules" twice at the top level',
    list: () => listWith(`[${rule('r', '{"patterns":["hoax"]}')}],"rules":[]`), posts: demoPosts,
  },
  {
    name: 'number-1e400',
    what: 'list.version 1e400',
    list: () => listWith('[]', '1e400'), posts: demoPosts,
  },
  {
    name: 'number-2^64',
    what: 'list.version 18446744073709551616',
    list: () => listWith('[]', '18446744073709551616'), posts: demoPosts,
  },
  {
    name: 'number-2^53',
    what: 'list.version 9007199254740992 (not exact in JavaScript)',
    list: () => listWith('[]', '9007199254740992'), posts: demoPosts,
  },
  {
    name: 'number-within',
    what: 'keywords within 1e308',
    list: () => oneRule('{"keywords":[{"all":["a","b"],"within":1e308}]}'), posts: demoPosts,
  },
  {
    name: 'post-10mb',
    what: 'one post of 10 MB (words, a match at the end)',
    list: demoList,
    posts: () => repeatTo(10 * MiB, () => 'lorem ipsum dolor sit amet ') +
      ' the vaccine contains a microchip\n',
  },
  {
    name: 'post-10mb-one-word',
    what: 'one post of 10 MB without a space',
    list: demoList, posts: () => 'x'.repeat(10 * MiB) + '\n',
  },
  {
    name: 'post-1m-marks',
    what: 'a post of 1M combining marks (U+0301) on one letter',
    list: demoList, posts: () => `cafe${'\u0301'.repeat(1000000)} microchip\n`,
  },
  {
    name: 'posts-100k-marks',
    what: '20 posts of 100k combining marks each, then a match',
    list: demoList,
    posts: () => Array.from({ length: 20 },
      () => `a${'\u0301\u0308'.repeat(50000)} the vaccine contains a microchip`).join('\n'),
  },
  {
    name: 'html-payloads',
    what: 'HTML/script payloads in every string of the list',
    list: () => {
      const x = '<img src=x onerror=alert(1)><script>alert(2)</script>"\'><svg/onload=alert(3)>';
      const list = JSON.parse(oneRule('{"patterns":["alert"]}'));
      Object.assign(list.list, { name: x, description: x });
      list.list.publisher.name = x;
      Object.assign(list.rules[0], { claim: x, 'x-note': x });
      Object.assign(list.rules[0].review, { title: x, publisher: x,
        url: 'https://r.example/"><script>alert(4)</script>' });
      list.rules[0].match.keywords = [{ all: [x] }];
      return JSON.stringify(list);
    },
    posts: () => '<script>alert(2)</script>\nplain text\n',
  },
  {
    name: 'javascript-link',
    what: 'a review link javascript:alert(1)',
    list: () => oneRule('{"patterns":["hoax"]}').replace('https://r.example/x', 'javascript:alert(1)'),
    posts: demoPosts,
  },
];

// ---- running --------------------------------------------------------------------

const args = process.argv.slice(2);
if (args.includes('--list')) {
  for (const i of INPUTS) console.log(`${i.name.padEnd(22)} ${i.what}`);
  process.exit(0);
}
let timeout = 120;
const names = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--timeout') timeout = Number(args[++i]);
  else names.push(args[i]);
}
const unknown = names.filter((n) => !INPUTS.some((i) => i.name === n));
if (unknown.length) {
  console.error(`hostile-table: unknown input ${unknown.join(', ')} (--list shows them)`);
  process.exit(2);
}
if (!existsSync(cli)) {
  console.error('hostile-table: build/bin/factlens is missing: run npm run build first');
  process.exit(2);
}
const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
if (!timeBin) console.error('hostile-table: no /usr/bin/time (Debian: time): native memory not measured');

const dir = mkdtempSync(path.join(tmpdir(), 'factlens-hostile-'));
const MB = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const oneLine = (text, max = 110) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
};

// Runs the native CLI with a time and address-space limit; returns the row.
function runNative(argv) {
  const quoted = argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  const marker = 'FACTLENS_HOSTILE_TIME';
  const cmd = `ulimit -v ${4 * 1024 * 1024}; exec ${timeBin ? `${timeBin} -f '${marker} %e %M' ` : ''}` +
    `timeout ${timeout} ${quoted}`;
  const t0 = performance.now();
  const r = spawnSync('bash', ['-c', cmd], { maxBuffer: 256 * MiB });
  const wall = (performance.now() - t0) / 1000;
  const stderr = r.stderr.toString('utf8');
  const timed = stderr.match(new RegExp(`${marker} ([\\d.]+) (\\d+)`));
  const errText = stderr.replace(new RegExp(`(Command exited with non-zero status \\d+\\n)?${marker}.*`, 's'), '');
  const status = timed ? Number(stderr.match(/non-zero status (\d+)/)?.[1] ?? 0) : r.status;
  let result;
  if (status === 124) result = `TIMEOUT after ${timeout} s`;
  else if (status > 128 || r.signal) result = `CRASH (status ${status} ${r.signal ?? ''}) ${oneLine(errText)}`;
  else if (argv[1] === 'lint') {
    // "N error(s), M warning(s)", the codes of the errors, and the message of the
    // first error that is not only a consequence (never-matches) of another.
    const lines = `${r.stdout.toString('utf8')}\n${errText}`.split(`${dir}/`).join('').split('\n');
    const errors = lines.map((l) => l.match(/^[^:]*(?::\d+:\d+)?: error: (.*) \[([a-z0-9-]+)\]$/))
      .filter(Boolean);
    const counts = lines.find((l) => /error\(s\)/.test(l))?.replace(/^[^:]*: /, '') ?? '';
    const main = errors.find((e) => e[2] !== 'never-matches') ?? errors[0];
    result = `exit ${status}: ${counts}${errors.length ? ` [${[...new Set(errors.map((e) => e[2]))].join(', ')}]` : ''}` +
      `${main ? `: ${oneLine(main[1], 90)}` : ''}`;
  } else {
    const lines = errText.split(`${dir}/`).join('').split('\n').filter(Boolean);
    const summary = lines.find((l) => /posts: /.test(l)) ?? lines.find((l) => /error/.test(l)) ??
      lines[0] ?? '';
    result = `exit ${status}: ${oneLine(summary.replace(/^factlens check: |^[^ :]*\.json(:\d+:\d+)?: error: /, ''))}`;
  }
  return { result, seconds: timed ? Number(timed[1]) : wall, memory: timed ? MB(Number(timed[2]) * 1024) : '-' };
}

function runWasm(listFile, postsFile) {
  const t0 = performance.now();
  const r = spawnSync('bash', ['-c', `exec timeout ${timeout} "$0" "$@"`, process.execPath,
    fileURLToPath(import.meta.url), '--wasm-child', listFile, postsFile],
  { maxBuffer: 64 * MiB, env: process.env });
  const wall = (performance.now() - t0) / 1000;
  if (r.status === 124) return { result: `TIMEOUT after ${timeout} s`, seconds: wall, memory: '-' };
  try {
    const out = JSON.parse(r.stdout.toString('utf8'));
    return { result: oneLine(out.result), seconds: out.ms / 1000,
      memory: `heap ${MB(out.heapSize)}, RSS ${MB(out.maxRss)}` };
  } catch {
    return { result: `CRASH (status ${r.status}) ${oneLine(r.stderr.toString('utf8'), 300)}`,
      seconds: wall, memory: '-' };
  }
}

const rows = [];
const selected = names.length ? INPUTS.filter((i) => names.includes(i.name)) : INPUTS;
try {
  for (const input of selected) {
    const listFile = path.join(dir, `${input.name}.json`);
    const postsFile = path.join(dir, `${input.name}.posts`);
    writeFileSync(listFile, input.list());
    writeFileSync(postsFile, input.posts());
    const size = MB(readFileSync(listFile).length);
    console.error(`hostile-table: ${input.name} (list ${size})`);
    const runs = [
      ['check', runNative([cli, 'check', '--list', listFile, '--allow-unsigned', postsFile])],
      ['lint', runNative([cli, 'lint', listFile, '--now', '2026-06-01T00:00:00Z'])],
      ['wasm', runWasm(listFile, postsFile)],
    ];
    for (const [runner, r] of runs) rows.push({ input: input.name, what: input.what, runner, ...r });
    rmSync(listFile);
    rmSync(postsFile);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// Markdown, so the table pastes into SECURITY.md and reports as it is.
const time = (s) => (s < 1 ? `${(s * 1000).toFixed(0)} ms` : `${s.toFixed(2)} s`);
console.log('| input | runner | result | time | peak memory |');
console.log('|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.runner === 'check' ? `\`${r.input}\`: ${r.what}` : ''} | ${r.runner} | ` +
    `${r.result.replace(/\|/g, '\\|')} | ${time(r.seconds)} | ${r.memory} |`);
}
console.log(`\nnative: ${cli} (check --allow-unsigned, lint); wasm: ` +
  `${process.env.FACTLENS_WASM_DIST ?? 'web/dist'} in Node ${process.version}; ` +
  'time: native whole process, wasm loadList + checkBatch.');
