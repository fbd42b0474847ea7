// The compiled form (engine.exportCompiled) of each subscription's last good list, in
// the extension's own IndexedDB. A worker start restores lists from it with
// engine.loadCompiled, without parsing and compiling the list again (a 10k-rule list:
// about a tenth of the time, `npm run bench`). Browsers stop workers at any time, so
// this is the common start.
//
// It is a cache, never the list of record: an entry is used only when its digest is
// the subscription's last good digest and the engine accepts the bytes (their
// checksum, format version and lifecycle checks); anything else falls back to the
// verified list text (list-texts.js), and the entry is written again.
// A failing IndexedDB costs time, never a list: every error here is logged and
// answered as "no entry".

import { ObjectStore } from './idb.js';

export class CompiledCache {
  #store = new ObjectStore('factlens-compiled', 'lists');

  /** Returns `{ digest, parts }` stored for the subscription `url`, or null: the
   *  compiled form in parts (exportCompiled with `parts`), each read into a buffer
   *  of its own, so that loadCompiled with `transfer` keeps only the records'. */
  async get(url) {
    try {
      const entry = await this.#store.run('readonly', (store) => store.get(url));
      if (typeof entry?.digest !== 'string') return null;
      // An entry written before the form was kept in parts holds it whole.
      if (entry.bytes instanceof Uint8Array) return { digest: entry.digest, parts: [entry.bytes] };
      if (!Array.isArray(entry.parts) || !entry.parts.every((part) => part instanceof Blob)) {
        return null;
      }
      const parts = await Promise.all(
        entry.parts.map(async (part) => new Uint8Array(await part.arrayBuffer())));
      return { digest: entry.digest, parts };
    } catch (error) {
      console.warn('factlens: compiled list cache:', error?.message ?? error);
      return null;
    }
  }

  /** Stores the compiled form's `parts` (Uint8Arrays) of the list with `digest` for
   *  `url` (one write). */
  async put(url, digest, parts) {
    try {
      // As Blobs: Chromium 156 read a 100k-rule form (46 MB) stored as Blobs in 220
      // ms, stored as Uint8Arrays in 650-800 ms (a fresh worker each; the restore
      // itself took 300 ms more).
      const blobs = parts.map((part) => new Blob([part]));
      await this.#store.run('readwrite', (store) => store.put({ digest, parts: blobs }, url));
    } catch (error) {
      console.warn('factlens: compiled list cache:', error?.message ?? error);
    }
  }

  async delete(url) {
    try {
      await this.#store.run('readwrite', (store) => store.delete(url));
    } catch (error) {
      console.warn('factlens: compiled list cache:', error?.message ?? error);
    }
  }
}
