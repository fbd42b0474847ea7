// The wasm engine on the files `factlens eval --write-list --write-rankings` wrote:
// list preparation time, search time per post (median), and whether every ranking
// is the native build's (same claims in the same order, same scores).
// Usage: node scripts/eval-wasm.mjs LIST.json RANKINGS.jsonl
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createEngine } from '../web/index.js';

const [listPath, rankingsPath] = process.argv.slice(2);
if (!listPath || !rankingsPath) {
  console.error('usage: node scripts/eval-wasm.mjs LIST.json RANKINGS.jsonl');
  process.exit(2);
}
const listText = readFileSync(listPath, 'utf8');
const queries = readFileSync(rankingsPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

const engine = await createEngine();
const loads = [];
for (let i = 0; i < 3; i++) {
  if (i > 0) engine.unloadList(JSON.parse(listText).list.id);
  const t0 = performance.now();
  const info = engine.loadList(listText, { allowUnsigned: true });
  loads.push(performance.now() - t0);
  if (i === 0) console.log(`wasm: ${info.ruleCount} claims`);
}

// Warm up once, then time each post's search on its own.
for (const q of queries.slice(0, 20)) engine.search(q.text, 10);
const times = [];
let identical = 0;
const differences = [];
for (const q of queries) {
  const t0 = performance.now();
  const got = engine.search(q.text, 10);
  times.push(performance.now() - t0);
  // Scores cross the boundary rounded to 4 decimals; native ones are full doubles.
  const same =
    got.length === q.results.length &&
    got.every((r, i) => r.ruleId === q.results[i][0] &&
      Math.abs(r.score - Math.round(q.results[i][1] * 1e4) / 1e4) < 1e-9);
  if (same) identical++;
  else if (differences.length < 3) differences.push({ id: q.id, wasm: got.map((r) => [r.ruleId, r.score]), native: q.results });
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)];
console.log(`wasm list preparation: ${median(loads).toFixed(0)} ms (median of ${loads.length} loads)`);
console.log(`wasm search (k=10): median ${median(times).toFixed(3)} ms per post, p90 ${p90(times).toFixed(3)} ms, over ${times.length} posts`);
console.log(`wasm rankings identical to native: ${identical}/${queries.length}`);
for (const d of differences) console.log('  differs:', JSON.stringify(d));
engine.dispose();
process.exit(identical === queries.length ? 0 : 1);
