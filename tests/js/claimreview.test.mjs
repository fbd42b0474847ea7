// The ClaimReview importer in the wasm build (importClaimReview, the code `factlens
// import` runs): every input shape the playground takes, reports with positions in
// the pasted text, nothing guessed, and the same list as the native CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createEngine, importClaimReview, FactlensError } from 'factlens';

const root = new URL('../../', import.meta.url);
const read = (path) => readFileSync(new URL(path, root), 'utf8');
const factlens = new URL('build/bin/factlens', root).pathname;
const NOW = '2025-05-01T00:00:00Z';
const now = Date.parse(NOW);

// The text at a message's position (line and UTF-16 column, both 1-based).
const at = (text, m) => text.split('\n')[m.line - 1].slice(m.column - 1);

async function rejectsKind(promise, kind, messagePart) {
  let caught;
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof FactlensError, `not a FactlensError: ${error}`);
    assert.equal(error.kind, kind, error.message);
    if (messagePart) assert.ok(error.message.includes(messagePart), error.message);
    caught = error;
    return true;
  });
  return caught;
}

test('JSON-LD: one ClaimReview becomes a similar rule that loads and matches', async () => {
  const text = read('tests/fixtures/claimreview/single.json');
  const r = await importClaimReview(text, { now, listId: 'desk-draft' });
  assert.equal(r.shape, 'json-ld');
  assert.equal(r.reviews, 1);
  assert.deepEqual([r.added, r.skipped], [1, 0]);
  assert.deepEqual(r.messages, []);
  const list = JSON.parse(r.list);
  assert.equal(list.list.id, 'desk-draft');
  assert.equal(list.list.publisher.name, 'Desk');
  assert.equal(list.list.issued, NOW);
  const [rule] = list.rules;
  assert.equal(rule.id, r.changes[0].ruleId);
  assert.equal(rule.rating, 'false');  // "Falso", through the built-in ratings table
  assert.deepEqual(rule.match.similar, ['Vaccines make your arm magnetic.']);
  assert.equal(rule.review.url, 'https://desk.example/checks/vaccine-magnets');

  const engine = await createEngine();
  try {
    engine.loadList(r.list, { allowUnsigned: true, now });
    const v = engine.check('the vaccine made my arm magnetic', {});
    assert.equal(v.matches[0]?.ruleId, rule.id, JSON.stringify(v));
    assert.equal(v.matches[0].kind, 'similar');
    assert.equal(engine.check('Lovely sunset over the harbour tonight').action, 'none');
  } finally {
    engine.dispose();
  }
});

test('HTML with ld+json blocks: the same list as `factlens import`, relative links resolved', async () => {
  const path = 'rules/examples/claimreview-sample.html';
  const text = read(path);
  const r = await importClaimReview(text, { now });
  assert.equal(r.shape, 'html');
  assert.equal(r.reviews, 3);
  assert.equal(r.added, 3);
  // The relative review URL is resolved against <link rel="canonical">, with a warning
  // pointing at its review in the page.
  const warning = r.messages.find((m) => m.message.includes('is relative'));
  assert.equal(warning?.severity, 'warning');
  assert.match(at(text, warning), /^\{\s*$/);
  assert.equal(text.split('\n').slice(warning.line).join('\n').match(/"url": "([^"]+)"/)[1],
    '/fact-checks/bridge-closure-permanent');
  const ids = JSON.parse(r.list).rules.map((rule) => rule.review.url);
  assert.ok(ids.includes('https://verify.harbour-street.example/fact-checks/bridge-closure-permanent'));
  // One code path: the native CLI writes the very same list.
  const cli = execFileSync(factlens, ['import', '--now', NOW, path],
    { cwd: new URL('.', root), stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  assert.equal(r.list, cli);
  const keywords = await importClaimReview(text, { now, keywords: true });
  const cliKeywords = execFileSync(factlens, ['import', '--keywords', '--now', NOW, path],
    { cwd: new URL('.', root), stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  assert.equal(keywords.list, cliKeywords);
  assert.ok(JSON.parse(keywords.list).rules.every((rule) => rule.match.keywords?.length === 1));
});

test('an unknown rating, a missing rating and an http link are reported where they are, not guessed', async () => {
  const text = read('tests/fixtures/claimreview/feed.json');
  const r = await importClaimReview(text, { now });
  assert.equal(r.shape, 'json-ld DataFeed');
  assert.equal(r.added, 1);  // only "Faux", which the table knows
  assert.equal(JSON.parse(r.list).rules.length, 1);
  const unknown = r.messages.find((m) => m.message.includes('"Wobbly"'));
  assert.equal(unknown?.severity, 'error');
  assert.match(unknown.message, /^unknown rating "Wobbly" .*skipped$/);
  assert.match(at(text, unknown), /^\{/);
  assert.match(text.split('\n').slice(unknown.line - 1, unknown.line + 3).join('\n'),
    /checks\/unknown/);
  const http = r.messages.find((m) => m.message.includes('is not https'));
  assert.equal(http?.severity, 'error');
  assert.match(text.split('\n').slice(http.line - 1, http.line + 3).join('\n'), /plain-http/);
  assert.ok(r.messages.some((m) => m.severity === 'error' && m.line > 0 &&
    text.split('\n').slice(m.line - 1, m.line + 3).join('\n').includes('no-rating')));
  assert.ok(JSON.parse(r.list).rules.every((rule) => !rule.review.url.startsWith('http:')));
});

test('columns count UTF-16 code units, as JavaScript strings do', async () => {
  const text = '{"note": "Übersicht — ééé", "review": {"@type": "ClaimReview", ' +
    '"url": "https://desk.example/c/x", "claimReviewed": "The tide is made of glass.", ' +
    '"datePublished": "2025-01-01", "reviewRating": {"alternateName": "Wobbly"}}}';
  const error = await rejectsKind(importClaimReview(text, { now }), 'format', 'no rule');
  const [m] = error.messages;
  assert.equal(m.line, 1);
  assert.equal(m.column, text.indexOf('{"@type"') + 1);
  // A custom ratings table knows the rating: the rule is imported.
  const ratings = JSON.stringify({ format: 'factlens-ratings/1', ratings: { false: ['Wobbly'] } });
  const r = await importClaimReview(text, { now, ratings });
  assert.equal(JSON.parse(r.list).rules[0].rating, 'false');
});

test('a relative link is reported without a page URL and resolved with one', async () => {
  const text = read('tests/fixtures/claimreview/broken.html');
  const error = await rejectsKind(importClaimReview(text, { now }), 'format', 'no rule could be imported');
  const relative = error.messages.find((m) => m.message.includes('relative'));
  assert.deepEqual([relative.severity, relative.line, relative.column], ['error', 5, 1]);
  assert.match(relative.message, /"checks\/relative-no-base" is relative and the page URL is unknown/);
  const syntax = error.messages.find((m) => m.message.includes('not valid JSON'));
  assert.equal(syntax.line, 2);

  const r = await importClaimReview(text, { now, pageUrl: 'https://desk.example/a/b.html' });
  assert.equal(JSON.parse(r.list).rules[0].review.url, 'https://desk.example/a/checks/relative-no-base');
  assert.ok(r.messages.some((m) => m.severity === 'warning' && m.message.includes('resolved')));
  // Only https: an http page URL does not make an https link.
  const http = await rejectsKind(importClaimReview(text, { now, pageUrl: 'http://desk.example/a/' }), 'format');
  assert.ok(http.messages.some((m) => /not https/.test(m.message)), JSON.stringify(http.messages));
});

test('merge: rules are added to a list, ids stay, nothing is dropped, the version grows once', async () => {
  const demo = read('rules/examples/demo.json');
  const before = JSON.parse(demo);
  const snippet = read('tests/fixtures/claimreview/single.json');
  const r = await importClaimReview(snippet, { now, merge: demo });
  assert.deepEqual([r.added, r.kept, r.versionBumped, r.version], [1, before.rules.length, true, before.list.version + 1]);
  const merged = JSON.parse(r.list);
  assert.deepEqual(merged.rules.slice(0, before.rules.length), before.rules);
  assert.equal(merged.list.id, before.list.id);
  const again = await importClaimReview(snippet, { now, merge: r.list });
  assert.deepEqual([again.added, again.unchanged, again.versionBumped], [0, 1, false]);
  assert.equal(again.list, r.list);
  // A broken list to merge into is an error, never replaced by a new list.
  await rejectsKind(importClaimReview(snippet, { now, merge: '{"format": ' }), 'format',
    'the list to merge into');
});

test('bad input and bad options are errors that say what is wrong', async () => {
  await rejectsKind(importClaimReview('just some words', { now }), 'format', 'neither JSON nor an HTML page');
  await rejectsKind(importClaimReview('{"@type": "Thing"}', { now }), 'format', 'no ClaimReview');
  await rejectsKind(importClaimReview(42), 'argument');
  await rejectsKind(importClaimReview('{}', { pageUrl: 7 }), 'argument', 'pageUrl');
  await rejectsKind(importClaimReview('{}', { keywords: 'yes' }), 'argument', 'keywords');
  await rejectsKind(importClaimReview(read('tests/fixtures/claimreview/single.json'),
    { severity: 'huge' }), 'format', 'not a severity');
});
