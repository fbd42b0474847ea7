// Subscriptions: lists subscribed by URL with a pinned minisign public key.
//
// Each subscription is a chrome.storage.local entry `sub:<url>`: its state, and its
// last good list's signature, version, digest and info. The list's text is kept in
// IndexedDB under its URL and digest (list-texts.js says why and in what order the two
// are written), and read only when the list must be loaded from it: a worker start
// restores the list from its compiled copy. Entries written before are read as they
// are, the text in `good` or in `text:<url>` (`{ digest, text }`, chrome.storage.local),
// and the text is moved on the next start.
//
// A download is used only after the engine verified it (signature against the pinned
// key, expiry, version and digest against the last good one); otherwise the last good
// list stays in use and the failure is kept as the subscription's state.
//
// Downloads are strict: https only, the subscribed URL itself (any redirect is refused,
// so nothing is fetched from another origin), a JSON/text/octet-stream content type (an
// HTML error page, login wall or captive portal is refused with that reason), at most
// the format's size limits, valid UTF-8, and complete (a response cut midway fails).
// Updates are conditional (If-None-Match / If-Modified-Since from the last good
// download): a 304 keeps the list. After a failure the next attempt waits
// BACKOFF_FIRST, doubling up to BACKOFF_MAX; the last good list stays in use, and is
// reported stale once past its expiry.
//
// Key rotation (rules/FORMAT.md): a list that the pinned key does not verify (kind
// "key") is tried once more with the latest rotation statement published beside it,
// `<list>.rotation` and its `.minisig`; a reader pinned further back then follows the
// chain from its pin, `<list>.rotation.<key id>` naming each next key, at most
// MAX_ROTATIONS links. If the engine accepts the list with the statements, the new key
// becomes the pin. Nothing else ever changes a pin: a statement's next key is only
// where to look next, and the engine checks every link's signature.
//
// Only https URLs are fetched. The one exception is a build-time option for the e2e
// tests (package-extension.mjs --test-allow-http-default-list): the packaged default
// list URL itself (and its .minisig and .rotation files, keyed ones too), on
// 127.0.0.1, may be http.
// Nothing at runtime can widen that.

const MINUTE = 60_000;
// `good.textStore` of a state whose text is in list-texts.js.
const TEXT_STORE = 'indexeddb';
export const UPDATE_EVERY = 6 * 60 * MINUTE;
export const BACKOFF_FIRST = 5 * MINUTE;
export const BACKOFF_MAX = 24 * 60 * MINUTE;

// rules/FORMAT.md's limits (list 64 MiB, signature file 16 KiB); a rotation
// statement is a few hundred bytes.
const MAX_BYTES = { list: 64 * 2 ** 20, signature: 16 * 2 ** 10, rotation: 64 * 2 ** 10 };
const ACCEPTED_TYPES = /^(application\/([\w.+-]+\+)?json|text\/json|text\/plain|application\/octet-stream)$/;

/** Returns the back-off after `failures` consecutive failed attempts. */
export const backoff = (failures) => Math.min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (failures - 1));

export class SubscriptionError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

/** Returns the signature URL published beside a list (FORMAT.md: `<list>.minisig`). */
export const signatureUrl = (url) => `${url}.minisig`;
/** Returns the URL of the key rotation statement published beside a list. */
export const rotationUrl = (url) => `${url}.rotation`;
/** Returns the URL of the statement moving a list away from `key` (a base64 minisign
 *  public key), `<list>.rotation.<key id>` with the id in 16 upper-case hex digits;
 *  null if `key` is not a minisign public key. */
export const keyedRotationUrl = (url, key) => {
  const id = keyId(key);
  return id && `${rotationUrl(url)}.${id}`;
};
/** Links of a rotation chain followed from one pin (rules/FORMAT.md). */
export const MAX_ROTATIONS = 8;

// Returns the key id of a base64 minisign public key ("Ed", 8 id bytes, 32 key
// bytes) as factlens's key files print it: the little-endian id in 16 upper-case hex
// digits (minisign drops leading zeros); or null.
function keyId(key) {
  if (typeof key !== 'string' || !/^[A-Za-z0-9+/]{56}$/.test(key)) return null;
  const bytes = atob(key);
  if (bytes.slice(0, 2) !== 'Ed') return null;
  let hex = '';
  for (let i = 9; i >= 2; i--) hex += bytes.charCodeAt(i).toString(16).padStart(2, '0');
  return hex.toUpperCase();
}

// Returns the `new_key` a rotation statement names, or null: where the chain goes
// next (the engine verifies the statement; this reads it only to find the next one).
function nextKeyOf(statement) {
  try {
    const key = JSON.parse(statement)?.new_key;
    return typeof key === 'string' ? key : null;
  } catch {
    return null;
  }
}

// The files published beside the default list (the e2e-only http exception).
const isDefaultListFile = (listUrl, url) =>
  [listUrl, signatureUrl(listUrl), rotationUrl(listUrl), signatureUrl(rotationUrl(listUrl))]
    .includes(url) ||
  (url.startsWith(rotationUrl(listUrl)) &&
   /^\.[0-9A-F]{16}(\.minisig)?$/.test(url.slice(rotationUrl(listUrl).length)));

const validators = (response) => {
  const out = {};
  const etag = response.headers.get('etag');
  const lastModified = response.headers.get('last-modified');
  if (etag) out.etag = etag;
  if (lastModified) out.lastModified = lastModified;
  return out;
};

export class Subscriptions {
  #engine;
  #storage;
  #config;
  #onChange;
  #now;
  #fetch;
  #compiled;
  #texts;
  #listIds = new Map();  // subscription url -> list id loaded in the engine
  #restored = [];  // how the last restore() loaded each list: { url, from, ms }

  /** `now()` is the clock (e2e builds move it forward); `fetch` the network;
   *  `compiled` the cache of compiled lists (compiled-cache.js), or null; `texts` the
   *  lists' texts (list-texts.js). */
  constructor({ engine, storage, config, onChange, now, fetch: fetchFn, compiled = null, texts }) {
    this.#compiled = compiled;
    this.#texts = texts;
    this.#engine = engine;
    this.#storage = storage;
    this.#config = config;
    this.#onChange = onChange ?? (() => {});
    this.#now = now ?? Date.now;
    this.#fetch = fetchFn ?? ((...args) => fetch(...args));
  }

  /** Uses `engine` from now on (a restarted or fresh one) and loads the last good lists
   *  into it. If that throws, the engine before stays in use, with its lists. */
  async attach(engine) {
    const previous = { engine: this.#engine, listIds: this.#listIds, restored: this.#restored };
    this.#engine = engine;
    this.#listIds = new Map();
    try {
      await this.restore();
    } catch (error) {
      ({ engine: this.#engine, listIds: this.#listIds, restored: this.#restored } = previous);
      throw error;
    }
  }

  /** Returns a reason if `url` may not be fetched, else null. */
  urlProblem(url) {
    let parsed;
    try {
      parsed = new URL(url);
    } catch {
      return `not a URL: ${url}`;
    }
    if (parsed.protocol === 'https:') return null;
    const d = this.#config.defaultList;
    if (this.#config.testAllowHttpDefaultList && d && isDefaultListFile(d.url, url) &&
        parsed.protocol === 'http:' && parsed.hostname === '127.0.0.1') {
      return null;
    }
    return `only https lists can be subscribed to (got ${parsed.protocol}//)`;
  }

  async #urls() {
    const { subscriptions } = await this.#storage.get('subscriptions');
    return Array.isArray(subscriptions) ? subscriptions : [];
  }

  async #get(url) {
    const key = `sub:${url}`;
    return (await this.#storage.get(key))[key] ?? null;
  }

  async #put(sub) {
    await this.#storage.set({ [`sub:${sub.url}`]: sub });
  }

  // Writes `sub`, whose last good list is `text`: the text first, then the state
  // naming it, then the subscription's other texts go (list-texts.js), and one kept
  // in chrome.storage.local before.
  async #putWithText(sub, text) {
    try {
      await this.#texts.put(sub.url, sub.good.digest, text);
    } catch (error) {
      throw new SubscriptionError('storage', `the list's text could not be stored: ${error?.message ?? error}`);
    }
    const { text: _, ...good } = sub.good;
    await this.#put({ ...sub, good: { ...good, textStore: TEXT_STORE } });
    await this.#storage.remove(`text:${sub.url}`);
    await this.#texts.prune(sub.url, sub.good.digest)
      .catch((error) => console.warn('factlens: older list texts not deleted:', error?.message ?? error));
  }

  // Deletes every stored text of `url`'s lists, in list-texts.js and where an earlier
  // release kept it (`text:<url>`). A text left in IndexedDB costs space, never a list:
  // nothing reads a text its state does not name.
  async #deleteTexts(url) {
    await this.#storage.remove(`text:${url}`);
    await this.#texts.delete(url)
      .catch((error) => console.warn('factlens: list text not deleted:', error?.message ?? error));
  }

  // The text of `sub`'s last good list: in list-texts.js, or where an entry written
  // before keeps it (in `good`, or in `text:<url>` under the same digest).
  async #goodText(sub) {
    if (typeof sub.good.text === 'string') return sub.good.text;
    let text = null;
    if (sub.good.textStore === TEXT_STORE) {
      try {
        text = await this.#texts.get(sub.url, sub.good.digest);
      } catch (error) {
        throw new SubscriptionError('storage', `the last good list's text could not be read: ${error?.message ?? error}`);
      }
    } else {
      const key = `text:${sub.url}`;
      const stored = (await this.#storage.get(key))[key];
      if (typeof stored?.text === 'string' && stored.digest === sub.good.digest) text = stored.text;
    }
    if (text === null) {
      throw new SubscriptionError('storage', 'the last good list\'s text is missing from storage');
    }
    return text;
  }

  /** Loads every stored last good list into the engine (worker start): from its
   *  compiled form where the cache holds the right one, else from its text. */
  async restore() {
    this.#restored = [];
    for (const url of await this.#urls()) {
      const sub = await this.#get(url);
      if (!sub?.good) continue;
      const started = performance.now();
      // The bytes were verified when accepted; `now` is that moment, so a list that
      // expired since is still restored, and reported stale by engine.lists().
      const lifecycle = { lastVersion: sub.good.version, lastDigest: sub.good.digest,
                          now: sub.good.acceptedAt };
      const info = await this.#restoreCompiled(url, sub, lifecycle);
      if (info) {
        this.#listIds.set(url, info.id);
        this.#restored.push({ url, from: 'compiled', ms: performance.now() - started });
        await this.#moveText(sub);
        continue;
      }
      try {
        const text = await this.#goodText(sub);
        const info = this.#engine.loadList(text, {
          signature: sub.good.signature, publicKey: sub.publicKey, ...lifecycle,
        });
        this.#listIds.set(url, info.id);
        this.#restored.push({ url, from: 'text', ms: performance.now() - started });
        await this.#saveCompiled(url, info);
        await this.#moveText(sub, text);
      } catch (error) {
        if (error.kind === 'fault') throw error;  // the engine, not the copy: background.js
        // Storage was tampered with or corrupted: drop the copy, keep the subscription,
        // and download the list again at the next update run, not hours from now.
        await this.#put({ ...sub, good: null, nextAttemptAt: this.#now(),
                          error: { kind: error.kind ?? 'internal', message: error.message,
                                   at: this.#now() } });
        await this.#deleteTexts(url);
      }
    }
  }

  // Moves the text of an entry written before list-texts.js (`text`, if already read)
  // there, once its list is loaded. The entry is read again, so that nothing written
  // since is undone. A failure leaves the entry as it was, for the next start.
  async #moveText(sub, text = null) {
    if (sub.good.textStore === TEXT_STORE) return;
    try {
      text ??= await this.#goodText(sub);
      const current = await this.#get(sub.url);
      if (current?.good?.digest !== sub.good.digest || current.good.textStore === TEXT_STORE) return;
      await this.#putWithText(current, text);
    } catch (error) {
      console.warn(`factlens: the text of ${sub.url} stays where it was: ${error?.message ?? error}`);
    }
  }

  // Loads the cached compiled form of `sub`'s last good list, if the cache holds the
  // one with its digest and pinned key. Returns the ListInfo, or null (no entry, or
  // one the engine refuses: damaged, another format version, another list).
  async #restoreCompiled(url, sub, lifecycle) {
    const cached = await this.#compiled?.get(url);
    if (!cached || cached.digest !== sub.good.digest) return null;
    let info;
    try {
      // The engine takes the parts (read from IndexedDB for this call alone) and
      // keeps the rule records' part: a faster restore, a smaller wasm memory.
      info = this.#engine.loadCompiled(cached.parts, { ...lifecycle, transfer: true });
    } catch (error) {
      if (error.kind === 'fault') throw error;  // the engine, not the cache: background.js
      console.warn(`factlens: compiled copy of ${url} not used: ${error.message}`);
      return null;
    }
    if (info.digest === sub.good.digest && info.publicKey === sub.publicKey) return info;
    try { this.#engine.unloadList(info.id); } catch { /* not loaded */ }
    return null;
  }

  // Keeps the compiled form of the list just accepted for `url`, for the next start.
  async #saveCompiled(url, info) {
    if (!this.#compiled) return;
    let parts;
    try {
      parts = this.#engine.exportCompiled(info.id, { parts: true });
    } catch (error) {
      if (error.kind === 'fault') throw error;
      console.warn(`factlens: compiled copy of ${url} not kept: ${error.message}`);
      return;
    }
    await this.#compiled.put(url, info.digest, parts);
  }

  /** How the last restore() loaded each list: `[{ url, from: 'compiled'|'text', ms }]`. */
  restored() {
    return this.#restored.map((r) => ({ ...r }));
  }

  /** Subscribes to the build-time default list, once (on install). */
  async installDefault() {
    const d = this.#config.defaultList;
    if (!d || (await this.#urls()).includes(d.url)) return;
    try {
      await this.add(d.url, d.publicKey);
    } catch (error) {
      console.error('factlens: default list:', error.message);
    }
  }

  /** Adds a subscription and downloads its list now. Returns its state. */
  async add(url, publicKey) {
    const problem = this.urlProblem(url);
    if (problem) throw new SubscriptionError('url', problem);
    const key = String(publicKey).trim();
    if (!key) throw new SubscriptionError('key', 'a public key must be pinned for every list');
    const urls = await this.#urls();
    const existing = await this.#get(url);
    if (existing && existing.publicKey !== key) {
      throw new SubscriptionError('key', `${url} is already subscribed with another key; a key ` +
        'changes only through a rotation statement signed by the pinned key');
    }
    if (!existing) {
      await this.#put({ url, publicKey: key, addedAt: this.#now(), good: null, error: null,
                        failures: 0, nextAttemptAt: 0 });
      if (!urls.includes(url)) await this.#storage.set({ subscriptions: [...urls, url] });
    }
    await this.update(url);
    return this.#describe(await this.#get(url));
  }

  async remove(url) {
    const urls = await this.#urls();
    const listId = this.#listIds.get(url);
    if (listId) {
      try { this.#engine.unloadList(listId); } catch { /* not loaded */ }
      this.#listIds.delete(url);
    }
    await this.#storage.set({ subscriptions: urls.filter((u) => u !== url) });
    await this.#storage.remove(`sub:${url}`);
    await this.#deleteTexts(url);
    await this.#compiled?.delete(url);
    await this.#onChange();
  }

  // Downloads `url` as text; `cached` holds the last good download's validators, sent
  // as a conditional request. Returns { text, validators } or { notModified: true }.
  async #download(url, what, cached) {
    const problem = this.urlProblem(url);
    if (problem) throw new SubscriptionError('url', problem);
    const headers = {};
    if (cached?.etag) headers['If-None-Match'] = cached.etag;
    if (cached?.lastModified) headers['If-Modified-Since'] = cached.lastModified;
    // No cookies, no referrer: a list download says nothing about the reader. The
    // browser's own cache is bypassed: the conditional headers are ours, and so is
    // the decision what a 304 means. A redirect is not followed (`manual`), so no
    // request goes anywhere but the subscribed URL.
    const response = await this.#fetch(url, {
      credentials: 'omit', referrerPolicy: 'no-referrer', cache: 'no-store',
      redirect: 'manual', headers,
    }).catch((error) => { throw new SubscriptionError('network', `${url}: ${error.message}`); });
    if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400 &&
                                               response.status !== 304)) {
      throw new SubscriptionError('redirect', `${url}: redirected elsewhere; lists are only ` +
        'downloaded from the subscribed URL itself');
    }
    if (response.status === 304) {
      if (!cached) throw new SubscriptionError('http', `${url}: HTTP 304 to an unconditional request`);
      return { notModified: true };
    }
    if (!response.ok) throw new SubscriptionError('http', `${url}: HTTP ${response.status}`);
    const type = (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (type && !ACCEPTED_TYPES.test(type)) {
      throw new SubscriptionError('content_type', `${url}: served as ${type.slice(0, 80)}, ` +
        `not as a ${what} (JSON, text/plain or application/octet-stream)`);
    }
    const limit = MAX_BYTES[what];
    const declared = Number(response.headers.get('content-length'));
    if (declared > limit) {
      throw new SubscriptionError('limit', `${url}: ${declared} bytes, more than a ${what} may have (${limit})`);
    }
    const chunks = [];
    let size = 0;
    try {
      const reader = response.body?.getReader();
      for (; reader;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > limit) {
          await reader.cancel();
          throw new SubscriptionError('limit', `${url}: more than the ${limit} bytes a ${what} may have`);
        }
        chunks.push(value);
      }
    } catch (error) {
      if (error instanceof SubscriptionError) throw error;
      throw new SubscriptionError('network', `${url}: download cut off after ${size} bytes (${error.message})`);
    }
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    let text;
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      throw new SubscriptionError('format', `${url}: not UTF-8 text`);
    }
    return { text, validators: validators(response) };
  }

  // Loads a downloaded list; a list the pinned key does not verify is tried again with
  // the rotation statements published beside it: the latest, then the chain from the
  // pin. Returns the engine's ListInfo.
  async #load(url, sub, text, signature, now) {
    const options = { signature, publicKey: sub.publicKey, lastVersion: sub.good?.version,
                      lastDigest: sub.good?.digest, now };
    try {
      return this.#engine.loadList(text, options);
    } catch (error) {
      if (error.kind !== 'key') throw error;
      // Why no statement helped, for the subscription's error.
      const tried = [];
      const attempt = (rotations) => {
        try {
          return this.#engine.loadList(text, { ...options, rotations });
        } catch (rotationError) {
          if (rotationError.kind !== 'key') throw rotationError;  // e.g. a rollback
          tried.push(rotationError.message);
          return null;
        }
      };
      // One rotation behind: the latest statement.
      try {
        const info = attempt([await this.#statement(rotationUrl(url))]);
        if (info) return info;
      } catch (downloadError) {
        if (!(downloadError instanceof SubscriptionError)) throw downloadError;
        tried.push(downloadError.message);
      }
      // Further behind: each statement moving the list away from the key reached so far.
      const chain = [];
      const seen = new Set();
      for (let key = sub.publicKey; chain.length < MAX_ROTATIONS && !seen.has(key);) {
        seen.add(key);
        const linkUrl = keyedRotationUrl(url, key);
        if (!linkUrl) break;
        let link;
        try {
          link = await this.#statement(linkUrl);
        } catch (downloadError) {
          if (!(downloadError instanceof SubscriptionError)) throw downloadError;
          if (chain.length > 0) tried.push(downloadError.message);
          break;
        }
        chain.push(link);
        const info = attempt(chain);
        if (info) return info;
        key = nextKeyOf(link.statement);
      }
      throw new SubscriptionError('key', `${error.message} (key rotation: ${tried.join('; ')})`);
    }
  }

  // Downloads a rotation statement and its signature.
  async #statement(url) {
    const [statement, signature] = await Promise.all([
      this.#download(url, 'rotation'), this.#download(signatureUrl(url), 'signature')]);
    return { statement: statement.text, signature: signature.text };
  }

  /** Downloads, verifies and applies one subscription's list. Returns true if it
   *  succeeded (a new list applied, or the server said the list is unchanged). */
  async update(url) {
    const sub = await this.#get(url);
    if (!sub) throw new SubscriptionError('not_found', `no subscription for ${url}`);
    const now = this.#now();
    try {
      const cache = sub.good?.http ?? {};
      const [list, signature] = await Promise.all([
        this.#download(url, 'list', sub.good && cache.list),
        this.#download(signatureUrl(url), 'signature', sub.good && cache.signature)]);
      if (list.notModified && signature.notModified) {
        await this.#put({ ...sub, error: null, failures: 0, failingSince: null, checkedAt: now,
                          nextAttemptAt: now + UPDATE_EVERY });
        return true;
      }
      const text = list.notModified ? await this.#goodText(sub) : list.text;
      const signatureText = signature.notModified ? sub.good.signature : signature.text;
      const info = await this.#load(url, sub, text, signatureText, now);
      const previousId = this.#listIds.get(url);
      if (previousId && previousId !== info.id) {
        try { this.#engine.unloadList(previousId); } catch { /* gone */ }
      }
      this.#listIds.set(url, info.id);
      const http = {
        list: list.notModified ? cache.list : list.validators,
        signature: signature.notModified ? cache.signature : signature.validators,
      };
      const rotated = info.keyRotated ? { publicKey: info.publicKey,
        rotations: [...(sub.rotations ?? []), { from: sub.publicKey, to: info.publicKey, at: now }] } : {};
      await this.#putWithText({ ...sub, ...rotated,
                                good: { signature: signatureText, version: info.version,
                                        digest: info.digest, acceptedAt: now, info, http },
                                error: null, failures: 0, failingSince: null, checkedAt: now,
                                nextAttemptAt: now + UPDATE_EVERY }, text);
      await this.#saveCompiled(url, info);
      await this.#onChange();
      return true;
    } catch (error) {
      if (error.kind === 'fault') throw error;  // the engine, not the list: background.js
      const failures = (sub.failures ?? 0) + 1;
      await this.#put({ ...sub, checkedAt: now, failures, failingSince: sub.failingSince ?? now,
                        error: { kind: error.kind ?? 'internal', message: String(error.message), at: now },
                        nextAttemptAt: now + backoff(failures) });
      return false;
    }
  }

  /** Updates the subscriptions that are due (or all, with force). */
  async updateAll({ force }) {
    const now = this.#now();
    for (const url of await this.#urls()) {
      const sub = await this.#get(url);
      if (sub && (force || now >= (sub.nextAttemptAt ?? 0))) await this.update(url);
    }
  }

  // A subscription's state from storage alone (what restore() and update() keep there
  // is what the engine holds), so that the reader sees it even while the engine is down.
  #describe(sub) {
    const info = sub.good?.info ?? null;
    const stale = info ? Date.parse(info.expires) <= this.#now() : false;
    let state = 'pending';
    if (info) state = stale ? 'stale' : sub.error ? 'update-failed' : 'ok';
    else if (sub.error) state = 'refused';
    return {
      url: sub.url, publicKey: sub.publicKey, state,
      list: info ? { id: info.id, name: info.name, version: info.version,
                     ruleCount: info.ruleCount, expires: info.expires } : null,
      error: sub.error, checkedAt: sub.checkedAt ?? null, nextAttemptAt: sub.nextAttemptAt ?? null,
      failures: sub.failures ?? 0, failingSince: sub.failingSince ?? null,
      lastGoodAt: sub.good?.acceptedAt ?? null, keyRotations: sub.rotations ?? [],
    };
  }

  /** Returns every subscription's state for the popup and options page. */
  async status() {
    const out = [];
    for (const url of await this.#urls()) {
      const sub = await this.#get(url);
      if (sub) out.push(this.#describe(sub));
    }
    return { subscriptions: out };
  }
}
