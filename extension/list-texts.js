// The verified text of each subscription's last good list, in the extension's own
// IndexedDB (database `factlens-lists`), under the key [url, digest], as a Blob.
//
// The text is the list of record: a worker start loads the list from it when the
// compiled copy (compiled-cache.js) is missing or refused, and an update re-verifies
// it when only the signature changed. It is kept here, not in chrome.storage.local
// beside the subscription's state, because it is large (39 MB at 100k rules), and
// Chromium 156 wrote such a text to chrome.storage.local in 5.1 s and read it back in
// 1.8 s; here in 0.8 s and 0.24 s.
//
// The text (here) and the state naming it (chrome.storage.local) are in two stores,
// written one after the other, so a text is keyed by its digest too: the new text is
// written first, the state naming it next, and only then are the subscription's other
// texts deleted. A start that stops midway leaves the state naming a text that is
// still there (and perhaps an unnamed one, deleted at the next write). Errors are
// thrown: a text that could not be kept must not be named by the state.

import { ObjectStore } from './idb.js';

// Every key of `url`: [url, digest] sorts after [url] and before [url, []] (an array
// sorts after every string).
const allOf = (url) => IDBKeyRange.bound([url], [url, []]);

export class ListTexts {
  #store = new ObjectStore('factlens-lists', 'texts');

  /** Returns the text stored for `url` under `digest`, or null if there is none. */
  async get(url, digest) {
    const entry = await this.#store.run('readonly', (store) => store.get([url, digest]));
    if (!(entry?.text instanceof Blob)) return null;
    // As written: a leading U+FEFF is the list's, not a byte-order mark to drop.
    return new TextDecoder('utf-8', { ignoreBOM: true }).decode(await entry.text.arrayBuffer());
  }

  /** Stores `text` for `url` under `digest` (the subscription's other texts stay). */
  async put(url, digest, text) {
    await this.#store.run('readwrite', (store) => store.put({ text: new Blob([text]) }, [url, digest]));
  }

  /** Deletes every text of `url` but the one under `digest`. */
  async prune(url, digest) {
    await this.#store.run('readwrite', (store) => {
      store.delete(IDBKeyRange.bound([url], [url, digest], false, true));
      return store.delete(IDBKeyRange.bound([url, digest], [url, []], true, false));
    });
  }

  /** Deletes every text of `url`. */
  async delete(url) {
    await this.#store.run('readwrite', (store) => store.delete(allOf(url)));
  }
}
