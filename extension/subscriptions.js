// Subscriptions: lists subscribed by URL with a pinned minisign public key.
//
// Each subscription is one chrome.storage.local entry `sub:<url>` written with one set()
// call, so a list, its signature, version and digest are replaced together or not at
// all. A download is used only after the engine verified it (signature against the
// pinned key, expiry, version and digest against the last good one); otherwise the
// last good list stays in use and the failure is kept as the subscription's state.
//
// Only https URLs are fetched. The one exception is a build-time option for the e2e
// tests (package-extension.mjs --test-allow-http-default-list): the packaged default
// list URL itself (and its .minisig), on 127.0.0.1, may be http. Nothing at runtime can widen that.

const MINUTE = 60_000;
const UPDATE_EVERY = 6 * 60 * MINUTE;
const BACKOFF_FIRST = 5 * MINUTE;
const BACKOFF_MAX = 24 * 60 * MINUTE;

export class SubscriptionError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

/** Returns the signature URL published beside a list (FORMAT.md: `<list>.minisig`). */
export const signatureUrl = (url) => `${url}.minisig`;

export class Subscriptions {
  #engine;
  #storage;
  #config;
  #onChange;
  #listIds = new Map();  // subscription url -> list id loaded in the engine

  constructor({ engine, storage, config, onChange }) {
    this.#engine = engine;
    this.#storage = storage;
    this.#config = config;
    this.#onChange = onChange ?? (() => {});
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
    if (this.#config.testAllowHttpDefaultList && d &&
        (url === d.url || url === signatureUrl(d.url)) &&
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

  /** Loads every stored last good list into the engine (worker start). */
  async restore() {
    for (const url of await this.#urls()) {
      const sub = await this.#get(url);
      if (!sub?.good) continue;
      try {
        // The bytes were verified when accepted; `now` is that moment, so a list that
        // expired since is still restored, and reported stale by engine.lists().
        const info = this.#engine.loadList(sub.good.text, {
          signature: sub.good.signature, publicKey: sub.publicKey,
          lastVersion: sub.good.version, lastDigest: sub.good.digest, now: sub.good.acceptedAt,
        });
        this.#listIds.set(url, info.id);
      } catch (error) {
        // Storage was tampered with or corrupted: drop the copy, keep the subscription.
        await this.#put({ ...sub, good: null,
                          error: { kind: error.kind ?? 'internal', message: error.message, at: Date.now() } });
      }
    }
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
      await this.#put({ url, publicKey: key, addedAt: Date.now(), good: null, error: null,
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
    await this.#onChange();
  }

  async #download(url) {
    const problem = this.urlProblem(url);
    if (problem) throw new SubscriptionError('url', problem);
    // No cookies, no referrer: a list download says nothing about the reader.
    const response = await fetch(url, { credentials: 'omit', referrerPolicy: 'no-referrer',
                                        cache: 'no-cache', redirect: 'error' })
      .catch((error) => { throw new SubscriptionError('network', `${url}: ${error.message}`); });
    if (!response.ok) throw new SubscriptionError('http', `${url}: HTTP ${response.status}`);
    return response.text();
  }

  /** Downloads, verifies and applies one subscription's list. Returns true if applied. */
  async update(url) {
    const sub = await this.#get(url);
    if (!sub) throw new SubscriptionError('not_found', `no subscription for ${url}`);
    const now = Date.now();
    try {
      const [text, signature] = await Promise.all([this.#download(url),
                                                   this.#download(signatureUrl(url))]);
      const info = this.#engine.loadList(text, {
        signature, publicKey: sub.publicKey,
        lastVersion: sub.good?.version, lastDigest: sub.good?.digest, now,
      });
      const previousId = this.#listIds.get(url);
      if (previousId && previousId !== info.id) {
        try { this.#engine.unloadList(previousId); } catch { /* gone */ }
      }
      this.#listIds.set(url, info.id);
      await this.#put({ ...sub, good: { text, signature, version: info.version, digest: info.digest,
                                        acceptedAt: now, info },
                        error: null, failures: 0, checkedAt: now,
                        nextAttemptAt: now + UPDATE_EVERY });
      await this.#onChange();
      return true;
    } catch (error) {
      const failures = (sub.failures ?? 0) + 1;
      await this.#put({ ...sub, checkedAt: now, failures,
                        error: { kind: error.kind ?? 'internal', message: String(error.message), at: now },
                        nextAttemptAt: now + Math.min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (failures - 1)) });
      return false;
    }
  }

  /** Updates the subscriptions that are due (or all, with force). */
  async updateAll({ force }) {
    const now = Date.now();
    for (const url of await this.#urls()) {
      const sub = await this.#get(url);
      if (sub && (force || now >= (sub.nextAttemptAt ?? 0))) await this.update(url);
    }
  }

  #describe(sub) {
    const engineLists = new Map(this.#engine.lists().map((l) => [l.id, l]));
    const loaded = engineLists.get(this.#listIds.get(sub.url));
    let state = 'pending';
    if (loaded) state = loaded.stale ? 'stale' : sub.error ? 'update-failed' : 'ok';
    else if (sub.error) state = 'refused';
    return {
      url: sub.url, publicKey: sub.publicKey, state,
      list: loaded ? { id: loaded.id, name: loaded.name, version: loaded.version,
                       ruleCount: loaded.ruleCount, expires: loaded.expires } : null,
      error: sub.error, checkedAt: sub.checkedAt ?? null, nextAttemptAt: sub.nextAttemptAt ?? null,
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
