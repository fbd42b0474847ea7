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
