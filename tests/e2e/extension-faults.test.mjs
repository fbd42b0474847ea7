// The background under network and engine faults, in Chromium and Firefox ESR: HTTP
// caching (conditional requests, 304 keeps the list); a download cut midway, served as
// HTML, redirected to another origin, answered 500 or 404: refused with its reason,
// the last good list kept and still labelling the page; 500 for days (the background's
// clock moved by the e2e-only hook, not by sleeping): the back-off honoured and shown,
// the list reported stale once past its expiry; key rotation applied on download, a
// forged one refused; and the wasm engine running out of memory for real in the middle
// of a batch: restarted from the last good list, the page labelled and unbroken, a quiet
// status shown; failing again and again: paused (badge "!"), then back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, rm, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { BROWSERS } from './browsers.mjs';
import {
  ARTIFACTS, FACTLENS, DEMO_SECRET, DEMO_PUB, FEED_EXPECTED, serve, serveFeed, demoFiles, demoList, signList,
  packageForTests, launch, options, ask, subscription, waitOverlays, overlays, styleOf, openFeed,
  assertSiteScriptWorks,
} from './extension-env.mjs';

const run = promisify(execFile);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let pages;
let lists;
let elsewhere;  // another origin, for the redirect
let dir;
let extensions;
let reply;  // (path) => the list server's reply for /demo.json and friends
let files;
const keys = {};
const keyIds = {};  // 16 hex digits, from the (factlens) public key files

// The list server serving `list` (text and signature) and the `more` paths; anything
// else is 404.
const serving = (list, more = {}) => (path) => ({
  '/demo.json': { type: 'application/json', body: list.text },
  '/demo.json.minisig': { type: 'text/plain', body: list.signature },
  ...more }[path] ?? { status: 404 });
const good = (path) => serving(files.good)(path);

before(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  dir = await mkdtemp(join(tmpdir(), 'factlens-faults-'));
  // The publisher's next key, the one after it, and an attacker's.
  for (const name of ['next', 'third', 'attacker']) {
    await run(FACTLENS, ['keygen', '-W', '-p', join(dir, `${name}.pub`), '-s', join(dir, `${name}.key`)]);
    const [comment, key] = (await readFile(join(dir, `${name}.pub`), 'utf8')).trim().split('\n');
    keys[name] = key;
    keyIds[name] = comment.split(' ').pop();
  }
  keyIds.demo = (await readFile(DEMO_PUB, 'utf8')).split('\n')[0].split(' ').pop();
  const base = await demoList();
  const v2 = structuredClone(base);
  v2.list.version = 2;
  v2.rules.push({ ...structuredClone(base.rules[0]), id: 'garden-club-test',
                  claim: 'The garden club minutes are forged.', rating: 'false', severity: 'low',
                  match: { patterns: ['\\bgarden club\\b'] }, examples: undefined });
  // The rotations the publisher signs with the old key (demo to next, then next to
  // third), and a forged one: the attacker's statement, signed by the attacker's key.
  // Each also as factlens rotate writes it under the old key's id, for readers
  // pinned further back.
  const rotation = async (name, from, next) => {
    const out = join(dir, `${name}.rotation`);
    const secret = from === 'demo' ? DEMO_SECRET : join(dir, `${from}.key`);
    await run(FACTLENS, ['rotate', '-s', secret, '-p', join(dir, `${next}.pub`), '--list', 'factlens-demo',
                         '-o', out]);
    const keyed = `${out}.${keyIds[from]}`;
    return { text: await readFile(out, 'utf8'), signature: await readFile(`${out}.minisig`, 'utf8'),
             keyedText: await readFile(keyed, 'utf8'), keyedSignature: await readFile(`${keyed}.minisig`, 'utf8') };
  };
  files = {
    good: await demoFiles(),
    v2: await signList(dir, 'v2', v2),
    v2next: await signList(join(dir, 'next'), 'v2', v2, join(dir, 'next.key')),
    v2attacker: await signList(join(dir, 'attacker'), 'v2', v2, join(dir, 'attacker.key')),
    v2third: await signList(join(dir, 'third'), 'v2', v2, join(dir, 'third.key')),
    rotation: await rotation('good', 'demo', 'next'),
    nextRotation: await rotation('chain', 'next', 'third'),
    forgedRotation: await rotation('forged', 'attacker', 'attacker'),
  };
  pages = await serveFeed();
  elsewhere = await serve({ '/demo.json': async () => ({ type: 'application/json', body: files.good.text }) });
  const route = (path) => async (req) => reply(path, req);
  const served = ['/demo.json', '/demo.json.minisig', '/demo.json.rotation', '/demo.json.rotation.minisig'];
  for (const name of ['demo', 'next', 'attacker']) {
    served.push(`/demo.json.rotation.${keyIds[name]}`, `/demo.json.rotation.${keyIds[name]}.minisig`);
  }
  lists = await serve(Object.fromEntries(served.map((path) => [path, route(path)])));
  extensions = await packageForTests(dir, `${lists.url}/demo.json`);
});
after(async () => {
  await pages?.close();
  await lists?.close();
  await elsewhere?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const downloads = () => lists.log.filter((e) => e.url === '/demo.json').length;

// The list server publishing `list` (text and signature) with the `latest` rotation
// statement beside it, and the `more` paths; anything else is 404.
const publishing = (list, latest, more = {}) => serving(list, {
  '/demo.json.rotation': { type: 'application/json', body: latest.text },
  '/demo.json.rotation.minisig': { type: 'text/plain', body: latest.signature },
  ...more });

// A download refused with kind `key`: the pin and the list (version 1) stay.
function assertKeyRefused(sub, pinned) {
  assert.equal(sub.state, 'update-failed');
  assert.equal(sub.error.kind, 'key');
  assert.equal(sub.publicKey, pinned, 'the pin did not move');
  assert.equal(sub.list.version, 1);
}

// A download accepted through rotation from `pinned` to `key`, now pinned: version 2.
function assertRotated(sub, pinned, key, message) {
  assert.equal(sub.state, 'ok', JSON.stringify(sub.error));
  assert.equal(sub.publicKey, key, message);
  assert.equal(sub.list.version, 2);
  assert.deepEqual(sub.keyRotations.map((r) => [r.from, r.to]), [[pinned, key]]);
}

// Forces an update from the options page; returns the subscription's state after it.
async function updateNow(settings) {
  const answer = await ask(settings, { type: 'update' });
  assert.ok(answer.ok, JSON.stringify(answer));
  return answer.subscriptions[0];
}

// The page still shows the demo list's labels, also for a post drawn anew.
async function stillLabelled(page, expected = FEED_EXPECTED) {
  await page.evaluate(() => window.rerenderCell('cell-4'));
  await waitOverlays(page, expected);
}

for (const browser of BROWSERS) {
  test(`${browser}: conditional updates; cut, HTML, redirected, 500 and 404 downloads keep the last good list`, async () => {
    const etag = '"demo-v1"';
    const modified = 'Mon, 01 Jun 2026 00:00:00 GMT';
    let mode = 'good';
    reply = (path, req) => {
      const base = good(path);
      if (mode === 'good') return { ...base, headers: { etag: `${etag}${path.length}`, 'last-modified': modified } };
      if (mode === 'conditional') {
        return req.headers['if-none-match'] === `${etag}${path.length}` ? { status: 304 } : base;
      }
      if (path !== '/demo.json') return base;
      return {
        cut: { cut: true, type: 'application/json', body: files.v2.text },
        html: { type: 'text/html; charset=utf-8', body: '<html><body>Please log in</body></html>' },
        redirect: { status: 302, headers: { location: `${elsewhere.url}/demo.json` } },
        500: { status: 500, body: 'oops' },
        404: { status: 404, body: 'gone' },
      }[mode];
    };
    lists.log.length = 0;
    const session = await launch(browser, extensions, dir, 'network');
    try {
      const settings = await options(session, 'ok');
      const page = await openFeed(session, pages);

      // Conditional request with the last good download's validators; 304 keeps the list.
      mode = 'conditional';
      const before304 = lists.log.length;
      let sub = await updateNow(settings);
      const conditional = lists.log.slice(before304);
      assert.equal(conditional.length, 2);
      for (const entry of conditional) {
        assert.equal(entry.headers['if-none-match'], `${etag}${entry.url.length}`, entry.url);
        assert.equal(entry.headers['if-modified-since'], modified, entry.url);
      }
      assert.equal(sub.state, 'ok');
      assert.equal(sub.list.version, 1);
      assert.equal(sub.error, null);
      await stillLabelled(page);

      const failures = [
        ['cut', /cut off/],
        ['html', /served as text\/html/],
        ['redirect', /redirected elsewhere/],
        [500, /HTTP 500/],
        [404, /HTTP 404/],
      ];
      for (const [i, [failure, reason]] of failures.entries()) {
        mode = failure;
        sub = await updateNow(settings);
        assert.equal(sub.state, 'update-failed', `${failure}: ${JSON.stringify(sub)}`);
        assert.match(sub.error.message, reason, String(failure));
        assert.equal(sub.failures, i + 1);
        assert.equal(sub.list.version, 1, 'the last good list is still in use');
        await settings.waitForSelector('#subs li[data-state="update-failed"] .retry');
        assert.match(await settings.textContent('#subs li .error'), reason);
        await stillLabelled(page);
      }
      await settings.screenshot(join(ARTIFACTS, `extension-${browser}-options-failing.png`));
      assert.equal(elsewhere.log.length, 0, 'nothing was fetched from the other origin');

      mode = 'good';
      sub = await updateNow(settings);
      assert.equal(sub.state, 'ok');
      assert.equal(sub.failures, 0);
      await assertSiteScriptWorks(page);
      assert.deepEqual(page.errors, []);
    } finally {
      await session.close();
    }
  });

  test(`${browser}: 500 for days: the back-off is honoured and shown, the list goes stale but stays`, async () => {
    let failing = false;
    reply = (path) => (failing ? { status: 500 } : good(path));
    lists.log.length = 0;
    const session = await launch(browser, extensions, dir, 'days');
    try {
      const settings = await options(session, 'ok');
      const page = await openFeed(session, pages);
      const tick = async (ms) => {
        const moved = await ask(settings, { type: 'test', op: 'advance-clock', ms });
        assert.ok(moved.ok, JSON.stringify(moved));
        const answer = await ask(settings, { type: 'test', op: 'alarm' });
        assert.ok(answer.ok, JSON.stringify(answer));
        return { now: answer.now, sub: answer.subscriptions[0] };
      };
      // Nothing is due before the update period is over.
      let state = await tick(HOUR);
      assert.equal(downloads(), 1);
      failing = true;
      state = await tick(6 * HOUR);
      assert.equal(downloads(), 2, 'the periodic update is due');
      assert.equal(state.sub.state, 'update-failed');
      const delays = [state.sub.nextAttemptAt - state.now];
      let due = state.sub.nextAttemptAt;
      // Three days in steps of 30 minutes, as the alarm fires.
      for (let step = 0; step < 3 * 48; step++) {
        const seen = downloads();
        state = await tick(30 * MINUTE);
        const attempted = downloads() > seen;
        assert.equal(attempted, state.now >= due, `at +${step * 30} min: attempt ${attempted}, due ${due}`);
        if (attempted) {
          delays.push(state.sub.nextAttemptAt - state.now);
          due = state.sub.nextAttemptAt;
        }
        assert.equal(state.sub.state, 'update-failed');
        assert.equal(state.sub.list.version, 1);
      }
      // 5 minutes, doubling, at most a day.
      // (real milliseconds pass between the attempt and the status read after it)
      const minutes = delays.map((d) => Math.round(d / MINUTE));
      assert.deepEqual(minutes.slice(0, 10), [5, 10, 20, 40, 80, 160, 320, 640, 1280, 1440]);
      assert.ok(minutes.slice(10).every((m) => m === 1440), minutes.join(' '));
      assert.equal(state.sub.failures, delays.length);
      assert.ok(delays.length < 16, `${delays.length} attempts in three days`);
      await settings.waitForSelector('#subs li[data-state="update-failed"] .retry');
      assert.match(await settings.textContent('#subs li .error'), /HTTP 500/);
      // The popup shows the same: the reason, since when, and the next attempt.
      const popup = await session.openExtensionPage('pages/popup.html');
      await popup.waitForSelector('#subs li[data-state="update-failed"] .retry');
      assert.match(await popup.textContent('#subs li .error'), /HTTP 500/);
      assert.match(await popup.textContent('#subs li .retry'), /next attempt/i);
      await popup.screenshot(join(ARTIFACTS, `extension-${browser}-popup-failing.png`));
      await popup.close();
      await stillLabelled(page);

      // Past the list's expiry (2030): stale, still the last good list, still used.
      await ask(settings, { type: 'test', op: 'advance-clock', ms: Date.parse('2030-02-01') - state.now });
      await settings.click('#update');
      await settings.waitForSelector('#subs li[data-state="stale"]');
      await settings.screenshot(join(ARTIFACTS, `extension-${browser}-options-stale.png`));
      await stillLabelled(page);
      assert.deepEqual(page.errors, []);
    } finally {
      await session.close();
    }
  });

  test(`${browser}: a key rotation signed by the pinned key is applied on download, a forged one refused`, async () => {
    let serving = 'good';
    reply = (path) => {
      if (serving === 'good') return good(path);
      return serving === 'forged' ? publishing(files.v2attacker, files.forgedRotation)(path)
        : publishing(files.v2next, files.rotation)(path);
    };
    const session = await launch(browser, extensions, dir, 'rotation');
    try {
      const settings = await options(session, 'ok');
      const pinned = (await subscription(settings)).publicKey;
      const page = await openFeed(session, pages);

      serving = 'forged';
      let sub = await updateNow(settings);
      assertKeyRefused(sub, pinned);

      serving = 'rotated';
      sub = await updateNow(settings);
      assertRotated(sub, pinned, keys.next, 'the new key is pinned');
      await waitOverlays(page, [...FEED_EXPECTED, ['f2', 'demoted']]);
      // From now on the new key alone: the old key's own list is refused.
      serving = 'good';
      sub = await updateNow(settings);
      assert.match(sub.error.kind, /^(key|rollback)$/);
      assert.equal(sub.publicKey, keys.next);
      assert.equal(sub.list.version, 2);
    } finally {
      await session.close();
    }
  });

  test(`${browser}: a reader pinned two keys back follows the chain of rotation statements; a forged link is refused`, async () => {
    // The publisher moved from the demo key to next, then to third: the latest
    // statement (next to third) beside the list, and each statement under its old
    // key's id. A reader still pinned to the demo key walks demo -> next -> third.
    let links = null;  // null: the demo list as first published
    reply = (path) => (links ? publishing(files.v2third, files.nextRotation, links)(path)
      : good(path));
    const link = (id, statement) => ({
      [`/demo.json.rotation.${id}`]: { type: 'application/json', body: statement.keyedText },
      [`/demo.json.rotation.${id}.minisig`]: { type: 'text/plain', body: statement.keyedSignature } });
    const session = await launch(browser, extensions, dir, 'rotation-chain');
    try {
      const settings = await options(session, 'ok');
      const pinned = (await subscription(settings)).publicKey;
      const page = await openFeed(session, pages);

      // The link away from next is the attacker's statement: the chain breaks there.
      links = { ...link(keyIds.demo, files.rotation), ...link(keyIds.next, files.forgedRotation) };
      let sub = await updateNow(settings);
      assertKeyRefused(sub, pinned);

      links = { ...link(keyIds.demo, files.rotation), ...link(keyIds.next, files.nextRotation) };
      sub = await updateNow(settings);
      assertRotated(sub, pinned, keys.third, 'the last key of the chain is pinned');
      await waitOverlays(page, [...FEED_EXPECTED, ['f2', 'demoted']]);
      const fetched = lists.log.map((e) => e.url);
      assert.ok(fetched.includes(`/demo.json.rotation.${keyIds.next}`), 'the chain was walked');
    } finally {
      await session.close();
    }
  });

  test(`${browser}: a worker start restores the list from its compiled copy, in parts or (as written before) whole; a damaged copy falls back to the verified text`, async () => {
    reply = good;
    const session = await launch(browser, extensions, dir, 'compiled');
    try {
      const settings = await options(session, 'ok');
      const restart = async () => {
        const answer = await ask(settings, { type: 'test', op: 'restart-engine' });
        assert.ok(answer.ok, JSON.stringify(answer));
        assert.equal(answer.subscriptions[0].state, 'ok');
        return answer.engine.restored;
      };
      // The accepted list's compiled form was kept in IndexedDB on download.
      const cached = () => settings.evaluate(() => new Promise((resolve, reject) => {
        const open = indexedDB.open('factlens-compiled');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const get = open.result.transaction('lists').objectStore('lists').getAll();
          get.onsuccess = () => {
            resolve(get.result.map((e) => ({ digest: e.digest, legacy: 'bytes' in e,
              blobs: (e.parts ?? []).every((part) => part instanceof Blob),
              parts: (e.parts ?? [e.bytes]).map((part) => part.size ?? part.length) })));
            open.result.close();
          };
          get.onerror = () => reject(get.error);
        };
      }));
      const entries = await cached();
      assert.equal(entries.length, 1);
      const { digest } = entries[0];
      assert.match(digest, /^[0-9a-f]{64}$/);
      // In parts (as Blobs): before the rule records, the records, after them.
      assert.equal(entries[0].legacy, false);
      assert.equal(entries[0].blobs, true);
      assert.equal(entries[0].parts.length, 3, JSON.stringify(entries[0]));
      assert.ok(entries[0].parts[1] > 1000, `${entries[0].parts} bytes`);
      const [first] = await restart();
      assert.equal(first.from, 'compiled', JSON.stringify(first));
      const page = await openFeed(session, pages);
      await stillLabelled(page);

      // The list's text is kept in IndexedDB under its URL and digest, as a Blob, apart
      // from the subscription's state (a worker start from the compiled copy never
      // reads it). Entries written before, the text in the state or in `text:<url>`
      // (chrome.storage.local), are restored and their text then moved there.
      const stored = () => settings.evaluate(async () => {
        const all = await chrome.storage.local.get(null);
        const [url] = all.subscriptions;
        const sub = all[`sub:${url}`];
        const done = (request) => new Promise((resolve, reject) => {
          request.onsuccess = () => resolve(request.result);
          request.onerror = () => reject(request.error);
        });
        const db = await done(indexedDB.open('factlens-lists'));
        const store = db.transaction('texts').objectStore('texts');
        const keys = await done(store.getAllKeys());
        const values = await done(store.getAll());
        db.close();
        return { url, digest: sub.good?.digest, textStore: sub.good?.textStore ?? null,
                 textInSub: typeof sub.good?.text === 'string',
                 inStorage: all[`text:${url}`] ? { digest: all[`text:${url}`].digest,
                                                   length: all[`text:${url}`].text.length } : null,
                 inIndexedDB: keys.map((key, k) => ({ key, blob: values[k].text instanceof Blob,
                                                      size: values[k].text.size })) };
      });
      const layout = await stored();
      assert.deepEqual({ ...layout, inIndexedDB: layout.inIndexedDB.map(({ key, blob }) => ({ key, blob })) },
        { url: layout.url, digest, textStore: 'indexeddb', textInSub: false, inStorage: null,
          inIndexedDB: [{ key: [layout.url, digest], blob: true }] });
      assert.ok(layout.inIndexedDB[0].size > 1000, JSON.stringify(layout));
      // Rewrites the entry as an earlier release wrote it: the text `where` ('sub':
      // in the state, 'apart': in `text:<url>`), none in IndexedDB.
      const writeAsBefore = (where) => settings.evaluate(async ([url, where]) => {
        const done = (request) => new Promise((resolve, reject) => {
          request.onsuccess = () => resolve(request.result);
          request.onerror = () => reject(request.error);
        });
        const key = `sub:${url}`;
        const sub = (await chrome.storage.local.get(key))[key];
        const db = await done(indexedDB.open('factlens-lists'));
        const entry = await done(db.transaction('texts').objectStore('texts').get([url, sub.good.digest]));
        const text = new TextDecoder().decode(await entry.text.arrayBuffer());
        const write = db.transaction('texts', 'readwrite');
        write.objectStore('texts').clear();
        await new Promise((resolve, reject) => {
          write.oncomplete = resolve;
          write.onerror = () => reject(write.error);
        });
        db.close();
        const { textStore, ...good } = sub.good;
        await chrome.storage.local.set(where === 'sub'
          ? { [key]: { ...sub, good: { ...good, text } } }
          : { [key]: { ...sub, good }, [`text:${url}`]: { digest: good.digest, text } });
      }, [layout.url, where]);
      for (const where of ['apart', 'sub']) {
        await writeAsBefore(where);
        const before = await stored();
        assert.deepEqual([before.textStore, before.textInSub, before.inStorage?.digest ?? null,
                          before.inIndexedDB.length],
                         [null, where === 'sub', where === 'apart' ? digest : null, 0], where);
        const [fromOld] = await restart();
        assert.equal(fromOld.from, 'compiled', JSON.stringify(fromOld));
        assert.deepEqual(await stored(), layout, `the text kept ${where} was moved`);
        await stillLabelled(page);
      }

      // Writes the entry again as one written before the form was kept in parts
      // (the form whole, as `bytes`), with a byte in its middle flipped if `damage`.
      const rewriteWhole = (damage) => settings.evaluate(async (flip) => {
        const done = (request) => new Promise((resolve, reject) => {
          request.onsuccess = () => resolve(request.result);
          request.onerror = () => reject(request.error);
        });
        const db = await done(indexedDB.open('factlens-compiled'));
        const [key] = await done(db.transaction('lists').objectStore('lists').getAllKeys());
        const value = await done(db.transaction('lists').objectStore('lists').get(key));
        const parts = value.bytes ? [value.bytes]
          : await Promise.all(value.parts.map(async (part) => new Uint8Array(await part.arrayBuffer())));
        const bytes = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
        let at = 0;
        for (const part of parts) {
          bytes.set(part, at);
          at += part.length;
        }
        if (flip) bytes[bytes.length >> 1] ^= 0xff;
        const write = db.transaction('lists', 'readwrite');
        write.objectStore('lists').put({ digest: value.digest, bytes }, key);
        await new Promise((resolve, reject) => {
          write.oncomplete = resolve;
          write.onerror = () => reject(write.error);
        });
        db.close();
      }, damage);

      // An entry written whole is restored all the same.
      await rewriteWhole(false);
      assert.equal((await cached())[0].legacy, true);
      const [whole] = await restart();
      assert.equal(whole.from, 'compiled', JSON.stringify(whole));
      await stillLabelled(page);

      // Damaged bytes under the right digest: refused by the engine's checksum, the
      // list loaded from its verified text instead, and the copy written again.
      await rewriteWhole(true);
      const [fallback] = await restart();
      assert.equal(fallback.from, 'text', JSON.stringify(fallback));
      await stillLabelled(page);
      const [again] = await restart();
      assert.equal(again.from, 'compiled', 'the copy was written again after the fallback');
      assert.equal((await cached())[0].digest, digest);
      assert.equal((await cached())[0].legacy, false);
      await stillLabelled(page);
      await assertSiteScriptWorks(page);
      assert.deepEqual(page.errors, []);

      // The text gone from IndexedDB, and the copy damaged: the list is dropped as
      // tampered storage (a `storage` error), and the next update downloads it again.
      await settings.evaluate(() => new Promise((resolve, reject) => {
        const open = indexedDB.open('factlens-lists');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction('texts', 'readwrite');
          tx.objectStore('texts').clear();
          tx.oncomplete = () => { open.result.close(); resolve(); };
          tx.onerror = () => reject(tx.error);
        };
      }));
      await rewriteWhole(true);
      const lost = await ask(settings, { type: 'test', op: 'restart-engine' });
      assert.ok(lost.ok, JSON.stringify(lost));
      assert.deepEqual(lost.engine.restored, []);
      assert.equal(lost.subscriptions[0].list, null);
      assert.equal(lost.subscriptions[0].error.kind, 'storage', JSON.stringify(lost.subscriptions[0]));
      assert.match(lost.subscriptions[0].error.message, /text is missing/);
      // Due now: the next update run (the alarm's) downloads it.
      assert.ok(lost.subscriptions[0].nextAttemptAt <= lost.now, JSON.stringify(lost));
      const rerun = await ask(settings, { type: 'test', op: 'alarm' });
      assert.ok(rerun.ok, JSON.stringify(rerun));
      assert.equal(rerun.subscriptions[0].state, 'ok', JSON.stringify(rerun.subscriptions[0]));
      assert.deepEqual(await stored(), layout);
      await stillLabelled(page);

      // Unsubscribing drops the copy and the text too.
      assert.ok((await ask(settings, { type: 'unsubscribe', url: `${lists.url}/demo.json` })).ok);
      assert.deepEqual(await cached(), []);
      assert.equal(await settings.evaluate(() => new Promise((resolve, reject) => {
        const open = indexedDB.open('factlens-lists');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const count = open.result.transaction('texts').objectStore('texts').count();
          count.onsuccess = () => { open.result.close(); resolve(count.result); };
          count.onerror = () => reject(count.error);
        };
      })), 0);
    } finally {
      await session.close();
    }
  });

  test(`${browser}: the engine runs out of memory mid-batch: restarted with the last good list, page unbroken`, async () => {
    reply = good;
    const session = await launch(browser, extensions, dir, 'oom');
    try {
      const settings = await options(session, 'ok');
      const page = await openFeed(session, pages);
      const exhausted = await ask(settings, { type: 'test', op: 'exhaust-memory' });
      assert.ok(exhausted.ok && exhausted.taken > 2 ** 30, JSON.stringify(exhausted));
      // New texts: the next batch goes to the exhausted engine and traps there.
      await page.evaluate(() => {
        window.recycleCell('cell-1', { text: 'A picnic in the park with friends', status: 3001, author: 'erin' });
        window.recycleCell('cell-2', { text: 'Ampara restaurant putting sterilisation pills in the food',
                                       status: 3002, author: 'finn' });
      });
      await waitOverlays(page, [['x3002', 'hidden'], ['x3', 'hidden'], ['x4', 'label'], ['g1', 'label'],
                                ['f1', 'demoted']]);
      const status = await ask(settings, { type: 'status' });
      assert.equal(status.engine.state, 'restarted');
      assert.equal(status.engine.faults, 1);
      assert.match(status.engine.lastFault.message, /Aborted/);
      assert.equal(status.subscriptions[0].state, 'ok', 'the last good list, loaded into the new engine');
      await settings.waitForSelector('#engine[data-state="restarted"]');
      assert.match(await settings.textContent('#engine'), /restarted/);
      await settings.screenshot(join(ARTIFACTS, `extension-${browser}-options-engine-restarted.png`));
      await assertSiteScriptWorks(page);
      assert.deepEqual(page.errors, []);
    } finally {
      await session.close();
    }
  });

  test(`${browser}: list work that leaves wasm memory unused is followed by a fresh engine, restored from the compiled copy`, async () => {
    reply = good;
    const session = await launch(browser, extensions, dir, 'compact');
    try {
      const settings = await options(session, 'ok');
      const page = await openFeed(session, pages);
      // The demo list leaves the memory as a fresh engine has it: nothing swapped.
      let memory = await ask(settings, { type: 'test', op: 'memory' });
      assert.equal(memory.compactions, 0, JSON.stringify(memory));
      // With no threshold, every list work swaps one in.
      assert.ok((await ask(settings, { type: 'test', op: 'compact-slack', bytes: 0 })).ok);
      reply = serving(files.v2);
      const sub = await updateNow(settings);
      assert.equal(sub.state, 'ok', JSON.stringify(sub.error));
      assert.equal(sub.list.version, 2);
      memory = await ask(settings, { type: 'test', op: 'memory' });
      assert.equal(memory.compactions, 1, JSON.stringify(memory));
      const status = await ask(settings, { type: 'status' });
      assert.equal(status.engine.state, 'ok', 'giving memory back is not a restart after a fault');
      assert.deepEqual(status.engine.restored.map((r) => r.from), ['compiled'],
                       'the fresh engine restored version 2 from the copy the update wrote');
      // Version 2's labels (the garden club post), from the fresh engine, on the open page.
      await stillLabelled(page, [...FEED_EXPECTED, ['f2', 'demoted']]);
      // Unsubscribing is list work too: the fresh engine has no list, the page no labels.
      assert.ok((await ask(settings, { type: 'unsubscribe', url: `${lists.url}/demo.json` })).ok);
      memory = await ask(settings, { type: 'test', op: 'memory' });
      assert.equal(memory.compactions, 2, JSON.stringify(memory));
      assert.deepEqual((await ask(settings, { type: 'status' })).engine.restored, []);
      await page.evaluate(() => window.rerenderCell('cell-4'));
      await waitOverlays(page, []);
      assert.deepEqual(page.errors, []);
    } finally {
      await session.close();
    }
  });

  test(`${browser}: an engine failing again and again is paused, shown with a badge, and comes back`, async () => {
    reply = good;
    const session = await launch(browser, extensions, dir, 'failing');
    try {
      const settings = await options(session, 'ok');
      const page = await openFeed(session, pages);
      const badge = () => settings.evaluate(() => chrome.action.getBadgeText({}));
      const postAgain = (i) => page.evaluate((n) => window.recycleCell('cell-2', {
        text: `Ampara restaurant putting sterilisation pills in the food (${n})`, status: 4000 + n,
        author: 'finn' }), i);
      const labelled = (n) => page.evaluate((post) => document.querySelector(`[data-post="${post}"]`)
        ?.previousElementSibling?.dataset.state ?? null, `x${4000 + n}`);
      const engineLine = () => settings.evaluate(() => document.getElementById('engine')?.dataset.state ?? null);
      // Faults, each answered by a restart (the post still labelled), until more than
      // three restarts fall within a minute: then the engine is paused. (A page re-check
      // after a restart may meet the exhausted engine before the new post does, so the
      // count of faults per cycle is not fixed; the bound is.)
      let cycles = 0;
      for (;;) {
        cycles++;
        assert.ok(cycles <= 6, 'the engine was never paused');
        assert.ok((await ask(settings, { type: 'test', op: 'exhaust-memory' })).ok);
        await postAgain(cycles);
        let outcome = null;
        for (let waited = 0; !outcome && waited < 10000; waited += 100) {
          await new Promise((done) => setTimeout(done, 100));
          if (await engineLine() === 'failed') outcome = 'paused';
          else if (await labelled(cycles) === 'hidden') outcome = 'labelled';
        }
        assert.ok(outcome, `cycle ${cycles}: neither labelled nor paused`);
        if (outcome === 'paused') break;
      }
      const paused = await ask(settings, { type: 'status' });
      assert.equal(paused.engine.state, 'failed');
      // Paused by the fourth restart within a minute, or by a batch that failed on a
      // just-restarted engine too (the re-check race above): either way after 3 or more.
      assert.ok(paused.engine.faults >= 3, `${paused.engine.faults} faults`);
      assert.equal(await badge(), '!');
      const popup = await session.openExtensionPage('pages/popup.html');
      await popup.waitForSelector('#engine[data-state="failed"]');
      assert.match(await popup.textContent('#engine'), /failing/);
      await popup.close();
      // While paused, a new post is left as it is, and the page works.
      await page.evaluate(() => {
        const cell = document.getElementById('cell-3').cloneNode(true);
        cell.id = 'cell-50';
        cell.querySelector('[data-factlens-overlay]')?.remove();  // a clone: not ours any more
        cell.querySelector('article').removeAttribute('style');
        document.getElementById('timeline').append(cell);
        window.recycleCell('cell-50', { text: 'Ampara restaurant putting sterilisation pills in the food (50)',
                                        status: 4050, author: 'gil' });
      });
      await new Promise((done) => setTimeout(done, 1000));
      assert.equal(await labelled(50), null, 'nothing drawn while paused');
      assert.equal(await styleOf(page, 'x4050'), null);
      // A labelled node recycled for another post while paused loses the old post's
      // label (and its collapse): the failed check leaves no label on the wrong post.
      const before = await page.evaluate(() => document.querySelector('#cell-4 article')?.dataset.post);
      assert.equal(await page.evaluate((post) => document.querySelector(`[data-post="${post}"]`)
        ?.previousElementSibling?.dataset.state ?? null, before), 'label', `${before} labelled before`);
      await page.evaluate(() => window.recycleCell('cell-4', { text: 'A picnic in the park (60)',
                                                               status: 4060, author: 'hal' }));
      await page.waitForFunction(() => !document.querySelector('#cell-4 [data-factlens-overlay]'));
      assert.equal(await labelled(60), null);
      assert.equal(await styleOf(page, 'x4060'), null);
      await settings.screenshot(join(ARTIFACTS, `extension-${browser}-options-engine-failing.png`));
      await assertSiteScriptWorks(page);
      // Five minutes later the next batch starts a new engine, and every page is checked again.
      await ask(settings, { type: 'test', op: 'advance-clock', ms: 5 * MINUTE + 1000 });
      await postAgain(51);
      await page.waitForFunction(() => document.querySelector('[data-post="x4050"]')
        ?.previousElementSibling?.dataset.state === 'hidden');
      assert.equal(await labelled(51), 'hidden');
      await settings.waitForSelector('#engine[data-state="restarted"]');
      assert.equal(await badge(), '');
      assert.deepEqual(page.errors, []);
    } finally {
      await session.close();
    }
  });
}
