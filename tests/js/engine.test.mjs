// Tests of the wasm engine through the package's public API (imported by name, as
// users do). The shared cases are the same file the C++ tests run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createEngine, FactlensError } from 'factlens';

const root = new URL('../../', import.meta.url);
const read = (path) => readFileSync(new URL(path, root), 'utf8');
const coreList = read('tests/fixtures/cases/list.json');
const cases = JSON.parse(read('tests/fixtures/cases/cases.json'));

function throwsKind(fn, kind, messagePart) {
  assert.throws(fn, (error) => {
    assert.ok(error instanceof FactlensError, `not a FactlensError: ${error}`);
    assert.equal(error.kind, kind, error.message);
    if (messagePart) assert.ok(error.message.includes(messagePart), error.message);
    return true;
  });
}

test('the shared cases give the expected verdicts (same as the native build)', async (t) => {
  const engine = await createEngine();
  engine.loadList(coreList, { allowUnsigned: true });
  for (const c of cases) {
    await t.test(c.name, () => {
      engine.setPolicy(c.policy ?? {});
      const got = engine.check(c.text, c.context);
      const want = c.expect;
      assert.equal(got.action, want.action);
      if ('rating' in want) assert.equal(got.rating, want.rating);
      if ('severity' in want) assert.equal(got.severity, want.severity);
      if ('stance' in want) assert.equal(got.stance, want.stance);
      assert.deepEqual(got.matches.map((m) => m.ruleId), want.ruleIds);
      if (want.kinds) assert.deepEqual(got.matches.map((m) => m.kind), want.kinds);
      for (const m of got.matches) {
        if (want.spans?.[m.ruleId]) assert.deepEqual(m.spans, want.spans[m.ruleId]);
      }
    });
  }
  engine.dispose();
});

test('spans index the JavaScript string, so slicing gives the matched words', async () => {
  const engine = await createEngine();
  engine.loadList(coreList, { allowUnsigned: true });
  const text = '\u{1F9D0}\u{1F9D0} Ｔhe HOLOCAUST is a h0ax \u{1F602}';
  const [match] = engine.check(text).matches;
  assert.deepEqual(match.spans.map(([s, e]) => text.slice(s, e)), ['HOLOCAUST', 'h0ax']);
  // A lone surrogate (possible in page text) counts as one unit, like in the string.
  const lone = '\uD800 the holocaust is a hoax';
  const [m2] = engine.check(lone).matches;
  assert.deepEqual(m2.spans.map(([s, e]) => lone.slice(s, e)), ['holocaust', 'hoax']);
  engine.dispose();
});

test('checkBatch gives the same verdicts as check, in order', async () => {
  const engine = await createEngine();
  engine.loadList(coreList, { allowUnsigned: true });
  const texts = cases.filter((c) => !c.policy && !c.context).map((c) => c.text);
  assert.deepEqual(engine.checkBatch(texts), texts.map((t) => engine.check(t)));
  assert.deepEqual(engine.checkBatch([]), []);
  // Posts go into wasm memory back to back, at a byte per UTF-16 unit until one
  // needs more: posts of up to four bytes a character among ASCII ones keep their
  // bounds, and their spans index their own strings.
  const mixed = ['the holocaust is a hoax', '\u{1F9D0}\u{1F9D0} Ｔhe HOLOCAUST is a h0ax \u{1F602}',
    'Привет, мир', '', 'the holocaust is a hoax \u4E2D\u6587', 'plain words'];
  const verdicts = engine.checkBatch(mixed);
  assert.deepEqual(verdicts, mixed.map((t) => engine.check(t)));
  assert.deepEqual(verdicts[1].matches[0].spans.map(([s, e]) => mixed[1].slice(s, e)),
    ['HOLOCAUST', 'h0ax']);
  assert.deepEqual(verdicts[4].matches[0].spans.map(([s, e]) => mixed[4].slice(s, e)),
    ['holocaust', 'hoax']);
  engine.dispose();
});

test('loadList returns the list info', async () => {
  const engine = await createEngine();
  const info = engine.loadList(coreList, { allowUnsigned: true });
  assert.equal(info.id, 'test-core');
  assert.equal(info.version, 3);
  assert.equal(info.ruleCount, 10);
  assert.equal(info.signed, false);
  assert.deepEqual(engine.lists().map((l) => l.id), ['test-core']);
  engine.unloadList('test-core');
  assert.deepEqual(engine.lists(), []);
  throwsKind(() => engine.unloadList('test-core'), 'not_found');
  engine.dispose();
});

test('a list in any script reaches the engine byte for byte (encoded straight into wasm memory)', async () => {
  // loadList encodes the text into a buffer of a byte per UTF-16 unit, then what did
  // not fit into one of the exact size (utf8Size). The cases put non-ASCII only
  // before that split, and after it (900 three-byte units in the first claims push
  // the split back 1800 units, before the last claim) in every UTF-8 length, with a lone
  // surrogate (TextEncoder writes U+FFFD). No trailing newline: a byte short would
  // then drop the final '}', not a space.
  const list = coreList.trimEnd();
  const rawString = (s) => JSON.stringify(s).replace('\\ud800', '\uD800');
  const name = 'Liste ü 日本 \u{1F600} \uD800 fin';
  const padded = (text) => text.replace(/"claim": "(5G networks|The Holocaust|Birds)[^"]*/g,
    (claim) => `${claim} ${'日本'.repeat(150)}`);
  const claim = 'Die Corona-Impfung macht unfruchtbar. Grüße aus Köln, 日本 \u{1F9D0} \uD800';
  const oldClaim = '"Die Corona-Impfung macht unfruchtbar."';
  const lists = {
    ascii: { text: list },
    before: { text: list.replace('"Core test list"', rawString(name)), name },
    after: {
      text: padded(list).replace(oldClaim, rawString(claim)),
      claim,
    },
    bom: { text: '\uFEFF' + list.replace('"Core test list"', rawString(name)), name },
  };
  const after = lists.after.text;
  assert.ok(new TextEncoder().encode(after).length - after.length > after.length - after.indexOf('Grüße'));
  for (const [label, c] of Object.entries(lists)) {
    const engine = await createEngine();
    const info = engine.loadList(c.text, { allowUnsigned: true });
    assert.equal(info.ruleCount, 10, label);
    assert.equal(info.name, (c.name ?? 'Core test list').replace('\uD800', '\uFFFD'), label);
    const [found] = engine.search('Grüße aus Köln, die Corona-Impfung macht unfruchtbar', 1);
    assert.equal(found.ruleId, 'impfung-unfruchtbar', label);
    assert.equal(found.claim, (c.claim ?? JSON.parse(oldClaim)).replace('\uD800', '\uFFFD'), label);
    assert.deepEqual(engine.check('Vaccines cause autism, they say').matches.map((m) => m.ruleId),
      ['vaccines-autism'], label);
    engine.dispose();
  }
});

test('errors are FactlensError with a kind and a located message', async () => {
  const engine = await createEngine();
  throwsKind(() => engine.loadList(coreList), 'signature', 'allowUnsigned');
  throwsKind(() => engine.loadList(coreList, { signature: 'x', publicKey: 'y' }), 'key', 'public key');
  throwsKind(() => engine.loadList(coreList, { signature: 'x', publicKey: read('rules/keys/demo.pub') }),
    'signature', 'expected 4 lines');
  throwsKind(() => engine.loadList('{\n  "format": "factlens/1",\n  "list": {,\n}', { allowUnsigned: true }),
    'format', 'line 3, column 12');
  const bad = read('tests/fixtures/lists/semantic-invalid/pattern-re2-syntax.json');
  throwsKind(() => engine.loadList(bad, { allowUnsigned: true }), 'format',
    'rules[0] (id "re"): match.patterns[1]: missing )');
  throwsKind(() => engine.loadList('['.repeat(100000), { allowUnsigned: true }), 'limit');
  throwsKind(() => engine.loadList(42, { allowUnsigned: true }), 'argument');
  throwsKind(() => engine.loadList(coreList, { allowUnsigned: true, lastVersion: -1 }), 'argument');
  throwsKind(() => engine.setPolicy({ ratings: { false: 'burn' } }), 'format', 'policy.ratings.false');
  throwsKind(() => engine.check(42), 'argument');
  assert.deepEqual(engine.search('x', 5), []);  // no lists loaded: nothing to rank
  assert.deepEqual(engine.lists(), []);
  engine.dispose();
});

test('a failed load keeps the lists the engine had; rollback is refused', async () => {
  const engine = await createEngine();
  engine.loadList(coreList, { allowUnsigned: true });
  const older = coreList.replace('"version": 3', '"version": 2');
  throwsKind(() => engine.loadList(older, { allowUnsigned: true, lastVersion: 3 }), 'rollback');
  const broken = coreList.replace('"version": 3', '"version": 4').replace('"rating": "satire"', '"rating": "funny"');
  throwsKind(() => engine.loadList(broken, { allowUnsigned: true }), 'format', 'rules[3] (id "birds-satire"): rating');
  assert.equal(engine.lists()[0].version, 3);
  assert.equal(engine.check('5G spreads the virus').action, 'demote');
  engine.dispose();
});

test('the policy is data the reader can change and read back', async () => {
  const engine = await createEngine();
  engine.loadList(coreList, { allowUnsigned: true });
  assert.equal(engine.getPolicy().ratings.false, 'demote');
  engine.setPolicy({ ratings: { false: 'label' }, severities: { critical: 'demote' } });
  assert.equal(engine.check('5G spreads the virus').action, 'label');
  assert.equal(engine.check('a gang is kidnapping children').action, 'demote');
  engine.setPolicy();
  assert.equal(engine.check('5G spreads the virus').action, 'demote');
  engine.dispose();
});

test('a disposed engine refuses further calls', async () => {
  const engine = await createEngine();
  engine.dispose();
  engine.dispose();  // idempotent
  throwsKind(() => engine.check('x'), 'disposed');
});

test('every example of the demo list behaves as written (same as the native build)', async () => {
  const engine = await createEngine();
  const text = read('rules/examples/demo.json');
  engine.loadList(text, { allowUnsigned: true });
  let checked = 0;
  for (const rule of JSON.parse(text).rules) {
    const { patterns, keywords, urls } = rule.match;
    if (!patterns && !keywords && !urls) continue;  // similarity rules: not built yet
    const hits = (t) => engine.check(t).matches.some((m) => m.ruleId === rule.id);
    for (const t of rule.examples.match) { assert.ok(hits(t), `${rule.id} should match: ${t}`); checked++; }
    for (const t of rule.examples.no_match) { assert.ok(!hits(t), `${rule.id} should not match: ${t}`); checked++; }
  }
  assert.ok(checked >= 40, `only ${checked} examples`);
  engine.dispose();
});

test('search ranks the loaded claims by similarity, best first, near the check score', async () => {
  const engine = await createEngine();
  engine.loadList(coreList, { allowUnsigned: true });
  const text = 'BREAKING: vaccines cause autism in children!!';
  const results = engine.search(text, 3);
  assert.ok(results.length >= 1 && results.length <= 3);
  assert.equal(results[0].ruleId, 'vaccines-autism');
  assert.equal(results[0].listId, 'test-core');
  assert.equal(results[0].claim, 'Vaccines cause autism.');
  assert.equal(results[0].review.url, 'https://factcheck.example/autism');
  for (let i = 1; i < results.length; i++) assert.ok(results[i - 1].score >= results[i].score);
  // check() matches the same claim. Its score comes from the index of the rules with
  // match.similar (search's covers every claim), so word weights differ a little.
  const [match] = engine.check(text).matches;
  assert.equal(match.ruleId, 'vaccines-autism');
  assert.equal(match.kind, 'similar');
  assert.ok(Math.abs(match.score - results[0].score) < 0.001, `${match.score} vs ${results[0].score}`);
  // Rules without match.similar are found by search too (fact-checkers look for any
  // claim), though check() only matches them through their own matchers.
  assert.equal(engine.search('5G networks spread COVID-19', 1)[0].ruleId, '5g-covid');
  engine.dispose();
});

test('search finds German claims and bounds k; bad k is an argument error', async () => {
  const engine = await createEngine();
  engine.loadList(coreList, { allowUnsigned: true });
  assert.equal(engine.search('Machen Corona-Impfstoffe Frauen unfruchtbar?', 1)[0].ruleId,
    'impfung-unfruchtbar');
  assert.deepEqual(engine.search('vaccines autism', 0), []);
  assert.deepEqual(engine.search('zzzz qqqq', 5), []);
  assert.ok(engine.search('the virus and vaccines and 5G').length <= 10);  // default k
  throwsKind(() => engine.search('x', -1), 'argument');
  throwsKind(() => engine.search('x', 1.5), 'argument');
  throwsKind(() => engine.search(42, 1), 'argument');
  engine.dispose();
  throwsKind(() => engine.search('x', 1), 'disposed');
});

test('the policy carries the stance caps', async () => {
  const engine = await createEngine();
  assert.deepEqual(engine.getPolicy().stances, { debunks: 'none', repeats: 'hide', unclear: 'label' });
  engine.setPolicy({ stances: { debunks: 'label' } });
  assert.equal(engine.getPolicy().stances.debunks, 'label');
  throwsKind(() => engine.setPolicy({ stances: { agrees: 'none' } }), 'format', 'policy.stances.agrees');
  engine.dispose();
});

test('a 10 MB post is cut to the MiB the engine reads before it enters wasm memory', async () => {
  const engine = await createEngine();
  engine.loadList(coreList, { allowUnsigned: true });
  const head = 'BREAKING: vaccines cause autism in children!! ';
  const post = head + 'la '.repeat(3_500_000);  // 10.5 MB
  const before = engine.memoryStats().heapSize;
  const verdict = engine.check(post);
  const grown = engine.memoryStats().heapSize - before;
  // The same verdict as for the first MiB, which is all the engine reads.
  assert.deepEqual(verdict, engine.check(post.slice(0, 1 << 20)));
  assert.ok(verdict.matches.some((m) => m.ruleId === 'vaccines-autism'));
  // Copying the whole post in would grow wasm memory by tens of MB, for good.
  assert.ok(grown < 16 * 1048576, `wasm memory grew by ${grown} bytes`);
  engine.dispose();
});
