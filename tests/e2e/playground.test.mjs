// The demo page (served as `npm start` serves it) in headless Chromium: the feed shows
// all three states; the playground's verdicts follow the list as it is edited; a
// broken list shows its error with its position; a list failing its signature is
// refused and never used.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serveRepo, launchChromium, watchErrors } from './helpers.mjs';

let server;
let browser;
let page;
let errors;
before(async () => {
  server = await serveRepo();
  browser = await launchChromium();
  page = await browser.newPage();
  errors = watchErrors(page);
  await page.goto(`${server.url}/demo/`);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true' ||
    document.documentElement.dataset.error, null, { timeout: 15000 });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const firstAction = () => page.$eval('#results li', (li) => li.dataset.action);
const listText = () => page.$eval('#list-editor', (t) => t.value);
const status = () => page.$eval('#list-status', (s) => s.textContent);

test('the demo feed has labelled, demoted and hidden posts, and labels a new post', async () => {
  assert.deepEqual(errors, []);
  const states = await page.$$eval('#feed [data-factlens-overlay]', (hosts) =>
    hosts.map((h) => h.dataset.state));
  assert.deepEqual(
    Object.fromEntries(['label', 'demoted', 'hidden'].map((s) => [s, states.filter((x) => x === s).length])),
    { label: 2, demoted: 6, hidden: 1 });
  await page.fill('#compose-text', 'Chemtrails everywhere today, they are poisoning us');
  await page.click('#compose button');
  await page.waitForFunction(() =>
    document.querySelector('#feed li:first-child [data-factlens-overlay]')?.dataset.state === 'demoted');
});

test('editing a rule changes the verdict live', async () => {
  assert.equal(await firstAction(), 'demote');  // "The earth is flat...": false/low
  const text = await listText();
  const edited = text.replace(/("id": "flat-earth",\s*"claim": "[^"]*",\s*"rating": )"false"/, '$1"satire"');
  assert.notEqual(edited, text);
  await page.fill('#list-editor', edited);  // an input event, as typing gives
  await page.waitForFunction(() => document.querySelector('#results li').dataset.action === 'label');
  // The similarity match (0.9998, shown as 1.00) now leads the pattern match (0.90).
  assert.match(await page.$eval('#results li', (li) => li.textContent), /satire, low · score 1\.00/);
  // Highlighted spans are the matched words of the post: those of the leading
  // (similarity) match, the words it shares with the claim's phrasings.
  assert.deepEqual(await page.$$eval('#results li:first-child mark', (m) => m.map((x) => x.textContent)),
    ['The earth is flat and NASA']);
  // A new post typed into the posts box is checked too.
  await page.fill('#posts-editor', 'Those are contrails, not chemtrails\nchemtrails over London again');
  await page.waitForFunction(() => document.querySelectorAll('#results li').length === 2 &&
    document.querySelector('#results li:nth-child(2)').dataset.action === 'demote');
  assert.equal(await firstAction(), 'none');
});

test('a broken list shows its error with its position, and the last good verdicts as stale', async () => {
  const good = await listText();
  // Syntax: a missing comma. The engine says "line L, column C"; L is where it is.
  const lines = good.split('\n');
  const at = lines.findIndex((l) => l.includes('"id": "5g-covid",'));
  lines[at] = lines[at].replace('"5g-covid",', '"5g-covid"');
  await page.fill('#list-editor', lines.join('\n'));
  await page.waitForFunction(() => /line \d+, column \d+/.test(document.querySelector('#list-status').textContent));
  const [, line] = /line (\d+), column (\d+)/.exec(await status());
  assert.equal(Number(line), at + 2);  // the parser stops at the next line's key
  const excerpt = await page.$eval('#list-excerpt', (e) => e.textContent);
  assert.match(excerpt, new RegExp(`^${at + 2} \\| +"claim"`));
  assert.match(excerpt, /\n +\^$/);
  assert.ok(await page.$eval('#results li', (li) => li.classList.contains('stale')));
  // "Show in editor" puts the caret on the error.
  await page.click('#goto-error');
  const caret = await page.$eval('#list-editor', (t) => t.value.slice(0, t.selectionStart).split('\n').length);
  assert.equal(caret, at + 2);

  // Semantic: a rating that is not one of the six, named by rule index, id and field.
  await page.fill('#list-editor', good.replace(/("id": "chemtrails",\s*"claim": "[^"]*",\s*"rating": )"false"/, '$1"fals"'));
  await page.waitForFunction(() => document.querySelector('#list-status').textContent.includes('rules[5]'));
  assert.match(await status(), /^format error: rules\[5\] \(id "chemtrails"\): rating: "fals" is not one of/);
  assert.match(await page.$eval('#list-excerpt', (e) => e.textContent), /"rating": "fals"/);

  // Fixed again: fresh verdicts.
  await page.fill('#list-editor', good);
  await page.waitForFunction(() => document.querySelector('#list-status').classList.contains('ok'));
  assert.ok(!(await page.$eval('#results li', (li) => li.classList.contains('stale'))));
  assert.deepEqual(errors, []);
});

test('a signed list loads by URL with its key; a wrong key or signature is refused and not used', async () => {
  await page.click('#signed summary');
  await page.waitForFunction(() => document.querySelector('#signed-key').value.startsWith('untrusted comment'));
  const demoKey = await page.$eval('#signed-key', (t) => t.value);
  const submit = async (url, sig, key) => {
    await page.fill('#signed-url', url);
    await page.fill('#signed-sig', sig);
    await page.fill('#signed-key', key);
    await page.$eval('#signed-status', (s) => { s.textContent = ''; });
    await page.click('#signed-form button');
    await page.waitForFunction(() => /Refused|Failed|Verified/.test(document.querySelector('#signed-status').textContent));
    return page.$eval('#signed-status', (s) => s.textContent);
  };
  // The draft in the editor differs from the signed file, so "not used" is visible.
  await page.fill('#list-editor', (await listText()).replace('"version": 1', '"version": 7'));
  await page.waitForFunction(() => document.querySelector('#list-status').textContent.includes(' v7:'));
  const draft = await listText();

  // Signed by the demo key, checked against another publisher's key.
  assert.match(await submit('/signed/demo.json', '', 'RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3'),
    /^Refused \((key|signature)\): /);
  assert.equal(await listText(), draft);
  assert.match(await status(), / v7: /);
  // A signature that is not the list's.
  assert.match(await submit('/signed/demo.json', '/fixtures/wrong-key.minisig', demoKey),
    /^Refused \((key|signature)\): /);
  assert.equal(await listText(), draft);
  // Only https (or the page's own server) is fetched.
  assert.match(await submit('http://example.invalid/list.json', '', demoKey), /only https/);

  // The real thing: verified, loaded, and shown in the editor.
  assert.match(await submit('/signed/demo.json', '', demoKey),
    /^Verified and loaded factlens demo list v1 \(11 rules\)/);
  assert.match(await status(), /v1: signed and verified$/);
  assert.notEqual(await listText(), draft);
  assert.equal(await firstAction(), 'none');  // the posts from the earlier test, checked anew
  assert.deepEqual(errors, []);
});

test('a pasted ClaimReview snippet adds its rule to the list, labels a post, and reports what it left out', async () => {
  await page.click('#import summary');
  const before = JSON.parse(await listText());
  // Two reviews: one to import, one whose rating no table knows (and which tries
  // to smuggle markup into the page through the importer's message).
  const snippet = JSON.stringify([
    { '@context': 'https://schema.org', '@type': 'ClaimReview',
      url: 'https://desk.example/checks/seawater-cures-flu',
      claimReviewed: 'Drinking seawater cures the flu.',
      headline: 'Seawater does not cure the flu', datePublished: '2025-03-01',
      author: { '@type': 'Organization', name: 'Desk' },
      reviewRating: { '@type': 'Rating', alternateName: 'False' } },
    { '@context': 'https://schema.org', '@type': 'ClaimReview',
      url: 'https://desk.example/checks/odd',
      claimReviewed: 'An odd claim.', headline: 'Odd', datePublished: '2025-03-02',
      reviewRating: { '@type': 'Rating', alternateName: '<img src=x onerror=alert(1)>Wobbly' } },
  ], null, 2);
  await page.fill('#posts-editor', 'drinking seawater really cures the flu, try it\nLovely sunset tonight');
  await page.fill('#import-text', snippet);
  await page.click('#import-form button[type=submit]');
  await page.waitForFunction(() => /added/.test(document.querySelector('#import-status').textContent));
  const importStatus = await page.$eval('#import-status', (s) => s.textContent);
  assert.match(importStatus, /^json-ld array: 2 review\(s\) read; 1 added \(([\w-]+)\), 0 updated, 0 unchanged, 11 kept, 1 left out; version 2; 1 problem\(s\) below$/);
  const [, ruleId] = /added \(([\w-]+)\)/.exec(importStatus);

  // The rule is in the edited list, beside every rule it had (same ids, same content).
  await page.waitForFunction(() => / v2: 12 rules/.test(document.querySelector('#list-status').textContent));
  const after = JSON.parse(await listText());
  assert.deepEqual(after.rules.slice(0, before.rules.length), before.rules);
  const rule = after.rules.find((r) => r.id === ruleId);
  assert.deepEqual(rule.match.similar, ['Drinking seawater cures the flu.']);
  assert.equal(rule.rating, 'false');

  // A post close to the claim is matched by the new rule (claim similarity).
  await page.waitForFunction((id) => document.querySelector('#results li .meta')?.textContent.startsWith(id),
    ruleId);
  assert.notEqual(await firstAction(), 'none');
  assert.match(await page.$eval('#results li .meta', (m) => m.textContent), new RegExp(`^${ruleId} \\(similar, `));
  assert.equal(await page.$eval('#results li:nth-child(2)', (li) => li.dataset.action), 'none');

  // The review left out is reported at its position in the pasted text, as text.
  const messages = await page.$$eval('#import-messages li', (items) =>
    items.map((li) => ({ cls: li.className, text: li.textContent, line: li.dataset.line })));
  assert.equal(messages.length, 1);
  const lines = snippet.split('\n');
  const reviewLine = lines.findIndex((l, i) => i > 1 && l === '  {') + 1;  // the second review
  assert.equal(messages[0].cls, 'error');
  assert.equal(messages[0].text, `line ${reviewLine}, column 3: error: unknown rating ` +
    '"<img src=x onerror=alert(1)>Wobbly" (review https://desk.example/checks/odd): add it to the ' +
    'ratings table (rules/ratings.json, or your own: --ratings FILE, the ratings option in ' +
    'JavaScript); skipped');
  assert.equal(await page.$$eval('#import-messages img, #import-status img', (n) => n.length), 0);
  // Clicking the message puts the caret on the review in the pasted text.
  await page.click('#import-messages li');
  const caret = await page.$eval('#import-text', (t) => {
    const before = t.value.slice(0, t.selectionStart).split('\n');
    return [before.length, before[before.length - 1].length + 1];
  });
  assert.deepEqual(caret, [reviewLine, 3]);

  // Importing the same snippet again changes nothing (the rule is found by its URL).
  await page.click('#import-form button[type=submit]');
  await page.waitForFunction(() => /1 unchanged/.test(document.querySelector('#import-status').textContent));
  assert.equal(JSON.parse(await listText()).list.version, 2);

  // Text that is no ClaimReview at all: nothing imported, the list untouched.
  const kept = await listText();
  await page.fill('#import-text', 'not a fact-check');
  await page.click('#import-form button[type=submit]');
  await page.waitForFunction(() => /^Nothing imported/.test(document.querySelector('#import-status').textContent));
  assert.match(await page.$eval('#import-status', (s) => s.textContent),
    /^Nothing imported \(format\): neither JSON nor an HTML page/);
  assert.equal(await listText(), kept);
  assert.deepEqual(errors, []);
});
