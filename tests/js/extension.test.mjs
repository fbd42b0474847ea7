// The extension's pure parts in Node: message validation (what a content script in a
// hostile page may ask the background) and the locales (every locale has every message,
// and the overlay's keys all exist).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { validateMessage, parsePortMessage, LIMITS } from '../../extension/messages.js';
import { STRINGS_EN } from '../../web/ui/overlay.js';
import { parseArgs, keyLine } from '../../scripts/package-extension.mjs';
import { Subscriptions } from '../../extension/subscriptions.js';
import { createEngine } from 'factlens';

const self = { id: 'abc', extensionOrigin: 'chrome-extension://abc/' };
const tab = { id: 'abc', tab: { id: 7 }, url: 'https://x.com/home' };
const page = { id: 'abc', url: 'chrome-extension://abc/pages/options.html' };

test('check messages: accepted from content scripts only, shape-checked', () => {
  assert.equal(validateMessage({ type: 'check', texts: ['a', 'b'] }, tab, self), null);
  assert.equal(validateMessage({ type: 'check', texts: [], context: { region: 'DE' } }, tab, self), null);
  assert.match(validateMessage({ type: 'check', texts: ['a'] }, { ...tab, id: 'other' }, self),
               /another extension/);
  assert.match(validateMessage({ type: 'check', texts: ['a'] }, page, self), /only content scripts/);
  assert.match(validateMessage({ type: 'check', texts: 'a' }, tab, self), /array/);
  assert.match(validateMessage({ type: 'check', texts: ['a', 3] }, tab, self), /texts\[1\] is not a string/);
  assert.match(validateMessage({ type: 'check', texts: ['x'.repeat(LIMITS.textChars + 1)] }, tab, self),
               /texts\[0\] has 100001 characters/);
  assert.match(validateMessage({ type: 'check', texts: Array(LIMITS.batch + 1).fill('a') }, tab, self),
               /at most 500/);
  assert.match(validateMessage({ type: 'check', texts: [], extra: 1 }, tab, self), /unexpected field "extra"/);
  assert.match(validateMessage({ type: 'check', texts: [], context: { region: {} } }, tab, self),
               /context.region/);
  assert.match(validateMessage(null, tab, self), /object with a string "type"/);
  assert.match(validateMessage({ type: 'eval' }, tab, self), /unknown message type "eval"/);
});

test('port checks: one JSON string, parsed with a size limit, then validated as any message', () => {
  const message = parsePortMessage(JSON.stringify({ type: 'check', texts: ['a "quoted" post\u0001'] }));
  assert.deepEqual(message, { type: 'check', texts: ['a "quoted" post\u0001'] });
  assert.equal(validateMessage(message, tab, self), null);
  assert.throws(() => parsePortMessage({ type: 'check', texts: [] }), /json must be a string/);
  assert.throws(() => parsePortMessage('{"type": "check", '), /port message: not JSON/);
  assert.throws(() => parsePortMessage(' '.repeat(6 * LIMITS.totalChars + 65_537)), /characters of JSON \(at most/);
  // Parsed is not accepted: the shape checks still apply.
  assert.match(validateMessage(parsePortMessage('{"type": "check", "texts": [1]}'), tab, self),
               /texts\[0\] is not a string/);
});

test('settings messages: accepted from the extension pages only', () => {
  assert.equal(validateMessage({ type: 'status' }, page, self), null);
  assert.equal(validateMessage({ type: 'subscribe', url: 'https://l.example/l.json', publicKey: 'RW' }, page, self), null);
  assert.match(validateMessage({ type: 'subscribe', url: 'https://l', publicKey: 'RW' }, tab, self),
               /only the extension's own pages/);
  assert.match(validateMessage({ type: 'subscribe', url: 5, publicKey: 'RW' }, page, self), /must be strings/);
  assert.match(validateMessage({ type: 'found', count: -1 }, tab, self), /non-negative/);
});

test('test messages: only in e2e builds (testHooks), only from the extension pages', () => {
  const msg = { type: 'test', op: 'advance-clock', ms: 60000 };
  assert.match(validateMessage(msg, page, self), /unknown message type "test"/);
  const hooks = { ...self, testHooks: true };
  assert.equal(validateMessage(msg, page, hooks), null);
  assert.equal(validateMessage({ type: 'test', op: 'exhaust-memory' }, page, hooks), null);
  assert.match(validateMessage(msg, tab, hooks), /only the extension's own pages/);
  assert.match(validateMessage({ type: 'test', op: 'eval' }, page, hooks), /unknown op/);
  assert.match(validateMessage({ type: 'test', op: 'advance-clock', ms: -1 }, page, hooks), /ms must be/);
  assert.equal(validateMessage({ type: 'test', op: 'compact-slack', bytes: 0 }, page, hooks), null);
  assert.match(validateMessage({ type: 'test', op: 'compact-slack', bytes: '0' }, page, hooks), /bytes must be/);
  assert.match(validateMessage({ type: 'test', op: 'compact-slack' }, page, hooks), /bytes must be/);
  assert.equal(validateMessage({ type: 'test', op: 'memory' }, page, hooks), null);
});

test('every locale has every message, and the overlay strings exist in English', () => {
  const root = new URL('../../extension/_locales/', import.meta.url);
  const en = JSON.parse(readFileSync(new URL('en/messages.json', root)));
  for (const key of Object.keys(STRINGS_EN)) {
    assert.equal(en[`overlay_${key}`]?.message, STRINGS_EN[key], `en overlay_${key}`);
  }
  const locales = readdirSync(root);
  assert.ok(locales.length >= 3, `${locales.join(', ')}: English and at least two others`);
  for (const locale of locales) {
    const messages = JSON.parse(readFileSync(new URL(`${locale}/messages.json`, root)));
    assert.deepEqual(Object.keys(messages).sort(), Object.keys(en).sort(), locale);
    for (const [key, { message }] of Object.entries(messages)) {
      // The {name} slots the overlay fills in must survive translation.
      const slots = (s) => (s.match(/\{\w+\}|\$\d/g) ?? []).sort();
      assert.deepEqual(slots(message), slots(en[key].message), `${locale} ${key}`);
    }
  }
});

test('package-extension: arguments and pinned keys are checked', () => {
  assert.throws(() => parseArgs(['--default-list', 'https://l.example/l.json']), /go together/);
  assert.throws(() => parseArgs(['--bogus']), /unknown argument --bogus/);
  const demoKey = readFileSync(new URL('../../rules/keys/demo.pub', import.meta.url), 'utf8');
  assert.equal(keyLine(demoKey, 'demo.pub'), demoKey.trim().split('\n')[1]);
  assert.throws(() => keyLine('untrusted comment: x\nnot a key\n', 'k.pub'), /k.pub: not a minisign public key/);
});

test('rotation statements are found under the old key id, 16 upper-case hex digits', async () => {
  const { keyedRotationUrl } = await import('../../extension/subscriptions.js');
  const [comment, key] = readFileSync(new URL('../../rules/keys/demo.pub', import.meta.url), 'utf8')
    .trim().split('\n');
  const id = comment.split(' ').pop();  // "untrusted comment: minisign public key <ID>"
  assert.match(id, /^[0-9A-F]{16}$/);
  assert.equal(keyedRotationUrl('https://lists.example/demo.json', key),
               `https://lists.example/demo.json.rotation.${id}`);
  // Not a minisign public key: nowhere to look.
  assert.equal(keyedRotationUrl('https://lists.example/demo.json', 'not a key'), null);
  assert.equal(keyedRotationUrl('https://lists.example/demo.json', 'A'.repeat(56)), null);
  assert.equal(keyedRotationUrl('https://lists.example/demo.json', `${key}x`), null);
});

test('the options page lists the sites the content script knows', async () => {
  // adapters.js is a classic content script; its list is read from the source text.
  const source = readFileSync(new URL('../../extension/content/adapters.js', import.meta.url), 'utf8');
  const listed = source.match(/const FACTLENS_SITES = Object\.freeze\(\[([^\]]*)\]\)/)?.[1];
  assert.ok(listed, 'FACTLENS_SITES in adapters.js');
  const sites = [...listed.matchAll(/'([a-z]+)'/g)].map((m) => m[1]);
  globalThis.chrome ??= { i18n: { getMessage: () => '' } };
  const { SITES } = await import('../../extension/pages/pages.js');
  assert.deepEqual([...SITES], sites);
  const en = JSON.parse(readFileSync(new URL('../../extension/_locales/en/messages.json', import.meta.url)));
  for (const site of sites) assert.ok(en[`site_${site}`], `site_${site} message`);
});

// chrome.storage.local's calls (get of one key, set, remove) over a Map, and the list
// texts' store (list-texts.js) over another: the browser APIs are not in Node. The
// engine is the real one.
function memoryStorage() {
  const items = new Map();
  return {
    failGets: false,
    async get(key) {
      if (this.failGets) throw new Error('storage unavailable');
      return items.has(key) ? { [key]: structuredClone(items.get(key)) } : {};
    },
    async set(object) { for (const [k, v] of Object.entries(object)) items.set(k, structuredClone(v)); },
    async remove(key) { items.delete(key); },
  };
}
function memoryTexts() {
  const texts = new Map();
  return {
    async put(url, digest, text) { texts.set(`${url} ${digest}`, text); },
    async get(url, digest) { return texts.get(`${url} ${digest}`) ?? null; },
    async prune(url, digest) { for (const k of texts.keys()) if (k.startsWith(`${url} `) && k !== `${url} ${digest}`) texts.delete(k); },
    async delete(url) { for (const k of texts.keys()) if (k.startsWith(`${url} `)) texts.delete(k); },
  };
}

test('Subscriptions.attach: a restore that throws leaves the engine before in use, with its lists', async () => {
  const examples = new URL('../../rules/examples/', import.meta.url);
  const served = {
    'https://lists.example/demo.json': readFileSync(new URL('demo.json', examples), 'utf8'),
    'https://lists.example/demo.json.minisig': readFileSync(new URL('demo.json.minisig', examples), 'utf8'),
  };
  const publicKey = readFileSync(new URL('../../rules/keys/demo.pub', import.meta.url), 'utf8')
    .trim().split('\n')[1];
  const storage = memoryStorage();
  const before = await createEngine({ isolated: true });
  const subscriptions = new Subscriptions({
    engine: before, storage, config: {}, onChange: async () => {}, texts: memoryTexts(),
    fetch: async (url) => (served[url] !== undefined
      ? new Response(served[url], { headers: { 'content-type': 'application/json' } })
      : new Response('', { status: 404 })),
  });
  const url = 'https://lists.example/demo.json';
  assert.equal((await subscriptions.add(url, publicKey)).state, 'ok');
  assert.deepEqual(before.lists().map((l) => l.id), ['factlens-demo']);

  // A fresh engine whose restore fails midway (storage unreadable): refused, and the
  // subscriptions keep the engine they had, with the list loaded there.
  const fresh = await createEngine({ isolated: true });
  storage.failGets = true;
  await assert.rejects(subscriptions.attach(fresh), /storage unavailable/);
  storage.failGets = false;
  assert.deepEqual(fresh.lists(), []);
  await subscriptions.remove(url);
  assert.deepEqual(before.lists(), [], 'unsubscribing unloads the list from the engine in use');

  // And a restore that succeeds moves them to the new engine.
  assert.equal((await subscriptions.add(url, publicKey)).state, 'ok');
  await subscriptions.attach(fresh);
  assert.deepEqual(fresh.lists().map((l) => l.id), ['factlens-demo']);
  assert.deepEqual(subscriptions.restored().map((r) => r.from), ['text']);
  await subscriptions.remove(url);
  assert.deepEqual(fresh.lists(), []);
  before.dispose();
  fresh.dispose();
});
