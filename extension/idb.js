// One object store of one of the extension's IndexedDB databases, opened on first use
// and reopened after another context closed it. Shared by the compiled-list cache
// (compiled-cache.js) and the list texts (list-texts.js).

/** Returns a promise of `request`'s result. */
const done = (request) => new Promise((resolve, reject) => {
  request.onsuccess = () => resolve(request.result);
  request.onerror = () => reject(request.error);
});

export class ObjectStore {
  #database;
  #store;
  #db = null;

  /** `database` (version 1) holding the one object store `store`, out-of-line keys. */
  constructor(database, store) {
    this.#database = database;
    this.#store = store;
  }

  #open() {
    this.#db ??= (async () => {
      const request = indexedDB.open(this.#database, 1);
      request.onupgradeneeded = () => request.result.createObjectStore(this.#store);
      const db = await done(request);
      // Another context deleting or upgrading the database closes ours: reopen later.
      db.onversionchange = () => {
        db.close();
        this.#db = null;
      };
      return db;
    })().catch((error) => {
      this.#db = null;
      throw error;
    });
    return this.#db;
  }

  /** Runs `work(store)` (returns an IDBRequest) in a transaction of `mode`; resolves
   *  to the request's result once the transaction has committed (a write counts then,
   *  not when its request succeeded). */
  async run(mode, work) {
    const db = await this.#open();
    const transaction = db.transaction(this.#store, mode);
    const committed = new Promise((resolve, reject) => {
      transaction.oncomplete = resolve;
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error ?? new Error('aborted'));
    });
    const [result] = await Promise.all([done(work(transaction.objectStore(this.#store))), committed]);
    return result;
  }
}
