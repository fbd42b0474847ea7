// factlens: the engine wrapper shared by the package's entries (index.js for Node and
// plain ES module loaders, browser.js for browsers and bundlers). Each entry holds
// its own `new URL('./dist/factlens-core.wasm', import.meta.url)` so that bundlers
// see the wasm reference, and says how to get the bytes (Node reads the file).
//
// The wasm module speaks JSON text (wasm/bindings/bindings.cc); this wrapper turns
// failed statuses into thrown FactlensError objects and owns the native handle.
import createFactlensCore from './dist/factlens-core.mjs';

/** An engine error; `kind` says what went wrong: "format", "limit", "signature",
 *  "key", "rollback", "expired", "unsupported", "not_found", "disposed", "argument". */
export class FactlensError extends Error {
  /**
   * @param {string} kind
   * @param {string} message
   */
  constructor(kind, message) {
    super(message);
    this.name = 'FactlensError';
    this.kind = kind;
  }
}

// Strings from pages may hold lone surrogates; the engine works on well-formed
// text so that UTF-16 span indices line up with the string JavaScript gave it.
function wellFormed(text) {
  if (typeof text !== 'string') {
    throw new FactlensError('argument', `expected a string, got ${typeof text}`);
  }
  return typeof text.toWellFormed === 'function'
    ? text.toWellFormed()
    : text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

// The engine reads the first MiB (Engine::kMaxPostBytes) of a post's UTF-8. Every
// UTF-16 unit is at least one UTF-8 byte, so its first 2^20 units hold that MiB:
// cutting here first gives the same verdict without copying a 10 MB post into wasm
// memory, which would stay grown for good.
const MAX_POST_UNITS = 1 << 20;
function postText(text) {
  if (typeof text === 'string' && text.length > MAX_POST_UNITS) text = text.slice(0, MAX_POST_UNITS);
  return wellFormed(text);
}

// Encodes `posts` back to back into the engine's post buffer (PostBuffer) and
// returns their sizes in bytes. The buffer is sized for a byte per UTF-16 unit
// first, all a post in ASCII needs; a post that needs more gets room for its rest
// at three bytes a unit, the most one takes. (Three for every unit up front would
// grow wasm memory, for good, by 3 MiB for a 1 MiB post.)
function encodePosts(handle, posts) {
  const after = new Array(posts.length + 1).fill(0);  // units of the posts after each
  for (let i = posts.length - 1; i >= 0; i--) after[i] = after[i + 1] + posts[i].length;
  let buffer = handle.postBuffer(after[0]);
  const sizes = [];
  let at = 0;
  for (let i = 0; i < posts.length; i++) {
    const post = posts[i];
    let { read, written } = utf8.encodeInto(post, buffer.subarray(at));
    if (read < post.length) {
      const rest = post.slice(read);
      buffer = handle.postBuffer(at + written + rest.length * 3 + after[i + 1]);
      written += utf8.encodeInto(rest, buffer.subarray(at + written)).written;
    }
    sizes.push(written);
    at += written;
  }
  return sizes;
}

// The UTF-8 size of `text` as TextEncoder writes it (a lone surrogate as U+FFFD).
function utf8Size(text) {
  let size = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) {
      size += 1;
    } else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length &&
               (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      size += 2;  // a pair: four bytes for two units
      i++;
    } else {
      size += 2;
    }
  }
  return size;
}

// Encodes a list's text straight into the engine's input buffer (InputBuffer) and
// returns its size in bytes. A list in ASCII fits the first buffer, a byte per
// UTF-16 unit; one that does not gets a buffer of its exact size, which keeps the
// bytes already written. Encoding into a JavaScript buffer first would cost a
// second copy of the text and first writes to 4 MB of fresh memory at 10k rules.
function encodeList(handle, text) {
  const { read, written } = utf8.encodeInto(text, handle.inputBuffer(text.length, 0));
  if (read === text.length) return written;
  const rest = text.slice(read);
  const size = written + utf8Size(rest);
  const tail = utf8.encodeInto(rest, handle.inputBuffer(size, written).subarray(written));
  return written + tail.written;
}

function unwrap(json) {
  const result = JSON.parse(json);
  if (!result.ok) throw new FactlensError(result.kind, result.message);
  return result;
}

function contextJson(context) {
  if (context == null) return '{}';
  if (typeof context !== 'object') {
    throw new FactlensError('argument', 'context must be an object like { region: "DE" }');
  }
  const out = {};
  if (context.region != null) out.region = String(context.region).toUpperCase();
  if (context.language != null) out.language = String(context.language);
  return JSON.stringify(out);
}

// Frees native engines whose JS object was collected without dispose() (not those of
// a module instance that trapped: nothing is called there again).
const finalizer = new FinalizationRegistry((handle) => {
  try { handle.delete(); } catch { /* its module instance trapped */ }
});

// A trap (WebAssembly.RuntimeError: unreachable code, an out-of-bounds access, or the
// abort when memory runs out) leaves a module instance in an unknown state - its stack
// pointer, its heap. That instance is never called again: its engines throw
// FactlensError kind "fault", and it leaves the module cache, so the next
// createEngine() instantiates the module anew (and the old memory can be collected).
const brokenCores = new WeakSet();
const liveCores = new Map();  // wasm URL -> instantiated module

function faultError(detail) {
  return new FactlensError('fault', `the wasm engine failed (${detail}); create a new engine`);
}

function breakCore(core) {
  brokenCores.add(core);
  for (const [key, live] of liveCores) {
    if (live === core) {
      liveCores.delete(key);
      modules.delete(key);
    }
  }
}

// Returns `target` (a module instance or an embind handle of it) with every method call
// checked for traps.
function guarded(core, target) {
  return new Proxy(target, {
    get(object, name) {
      const value = Reflect.get(object, name);
      if (typeof value !== 'function') return value;
      return (...args) => {
        if (brokenCores.has(core)) throw faultError('an earlier call trapped');
        try {
          return value.apply(object, args);
        } catch (error) {
          if (!(error instanceof WebAssembly.RuntimeError)) throw error;
          breakCore(core);
          throw faultError(error.message);
        }
      };
    },
  });
}

// engine -> its unguarded module instance (exhaustMemoryForTests only)
const engineCores = new WeakMap();

// Encodes list text for InputBuffer and posts for PostBuffer (one copy into wasm
// memory, natively).
const utf8 = new TextEncoder();
// Decodes the verdicts' JSON from the view of wasm memory a check returns (valid
// UTF-8: the engine writes it with replacement characters for invalid bytes).
const verdictText = new TextDecoder();

// The parts of a compiled form passed to loadCompiled: one Uint8Array, or an array
// of them (exportCompiled with `parts`) whose bytes, in order, are the form.
function formParts(bytes) {
  const parts = bytes instanceof Uint8Array ? [bytes] : Array.isArray(bytes) ? bytes : null;
  if (parts === null || !parts.every((part) => part instanceof Uint8Array)) {
    throw new FactlensError('argument',
      'loadCompiled expects a Uint8Array, or an array of Uint8Arrays (exportCompiled with parts)');
  }
  return parts;
}

// The engine's reader of a compiled form held here in `parts` (loadCompiled): fills
// `view`, a buffer in wasm memory, with the form's bytes from `offset`, and says
// whether it could. A part set to null (let go after a restore) cannot be read. It
// never throws: an exception would unwind through the engine's C++ frames without
// running their destructors.
function formReader(parts) {
  const starts = [];  // each part's offset in the form
  let size = 0;
  for (const part of parts) {
    starts.push(size);
    size += part.length;
  }
  const read = (offset, view) => {
    try {
      if (offset + view.length > size) return false;
      // The last part that starts at or before `offset`, then on from there.
      let lo = 0;
      for (let hi = parts.length - 1; lo < hi;) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid] <= offset) lo = mid;
        else hi = mid - 1;
      }
      for (let i = lo, done = 0; done < view.length; ++i) {
        const from = offset + done - starts[i];
        const piece = parts[i].subarray(from, from + view.length - done);
        view.set(piece, done);
        done += piece.length;
      }
      return true;
    } catch {
      return false;
    }
  };
  return { read, size, starts };
}

// `pieces` (Uint8Arrays, in order) cut at the offsets `cuts` (ascending, from 0 to
// their total size) into one Uint8Array for each non-empty span. A piece that is a
// span exactly is that span's array, not copied.
function cutPieces(pieces, cuts) {
  const out = [];
  let piece = 0;
  let pieceStart = 0;  // the form's offset of pieces[piece]
  for (let k = 0; k + 1 < cuts.length; ++k) {
    const [begin, end] = [cuts[k], cuts[k + 1]];
    if (end <= begin) continue;
    while (pieceStart + pieces[piece].length <= begin) pieceStart += pieces[piece++].length;
    if (pieceStart === begin && pieces[piece].length === end - begin) {
      out.push(pieces[piece]);
      continue;
    }
    const span = new Uint8Array(end - begin);
    for (let i = piece, at = pieceStart; at < end; at += pieces[i++].length) {
      const from = Math.max(begin, at);
      const to = Math.min(end, at + pieces[i].length);
      span.set(pieces[i].subarray(from - at, to - at), from - begin);
    }
    out.push(span);
  }
  return out;
}

// Checks loadList/loadCompiled options and returns them as the binding's JSON.
function loadOptionsJson(options) {
  if (options === null || typeof options !== 'object') {
    throw new FactlensError('argument', 'options must be an object');
  }
  const opts = {};
  if (options.allowUnsigned === true) opts.allowUnsigned = true;
  for (const name of ['signature', 'publicKey', 'lastDigest']) {
    if (options[name] != null) {
      if (typeof options[name] !== 'string') {
        throw new FactlensError('argument', `${name} must be a string`);
      }
      opts[name] = options[name];
    }
  }
  if (options.lastVersion != null) {
    if (!Number.isSafeInteger(options.lastVersion) || options.lastVersion < 0) {
      throw new FactlensError('argument', 'lastVersion must be a non-negative integer');
    }
    opts.lastVersion = options.lastVersion;
  }
  if (options.rotations != null) {
    const list = Array.isArray(options.rotations) ? options.rotations : [options.rotations];
    opts.rotations = list.map((r, i) => {
      if (typeof r?.statement !== 'string' || typeof r?.signature !== 'string') {
        throw new FactlensError('argument', `rotations[${i}] must be { statement, signature } strings`);
      }
      return { statement: r.statement, signature: r.signature };
    });
  }
  const now = options.now ?? Date.now();
  const nowMs = now instanceof Date ? now.getTime() : now;
  if (!Number.isFinite(nowMs)) throw new FactlensError('argument', 'now must be a Date or milliseconds');
  opts.now = Math.floor(nowMs / 1000);
  // For tests and benchmarks that compare verdicts with the prefilter off.
  if (options.prefilter === false) opts.prefilter = false;
  return JSON.stringify(opts);
}

class Engine {
  #handle;
  #core;
  // The bytes of the compiled form kept for each list restored with `transfer`, by
  // list id (memoryStats): a later load of the same id replaces the list, and the
  // engine then lets go of them.
  #keptForms = new Map();

  constructor(core, handle) {
    this.#core = core;
    this.#handle = handle;
    finalizer.register(this, handle, this);
  }

  #live() {
    if (!this.#handle) throw new FactlensError('disposed', 'this engine was disposed');
    return this.#handle;
  }

  /**
   * Loads a rule list (factlens/1 JSON text) after verifying its minisign signature
   * against the pinned public key, its expiry and its version. Throws FactlensError
   * (signature, key, rollback, expired, format, limit); on error the engine keeps
   * exactly the lists it had.
   */
  loadList(listText, options = {}) {
    if (typeof listText !== 'string') {
      throw new FactlensError('argument', 'loadList expects the list as JSON text');
    }
    const handle = this.#live();
    const size = encodeList(handle, listText);
    const info = unwrap(handle.loadListInput(size, loadOptionsJson(options))).info;
    this.#keptForms.delete(info.id);
    return info;
  }

  /**
   * Returns the compiled form of a loaded list as bytes, to keep in the reader's
   * own storage (IndexedDB) and restore with loadCompiled() after a restart,
   * without parsing or compiling the list again. With `{ parts: true }`, the same
   * bytes as an array of Uint8Arrays, each over a buffer of its own, with the rule
   * records apart: store the array as it is, and a restore with `transfer` keeps
   * only the records' part. Throws FactlensError (`not_found`).
   * @param {string} listId
   * @param {{ parts?: boolean }} [options]
   * @returns {Uint8Array | Uint8Array[]}
   */
  exportCompiled(listId, options = {}) {
    if (options === null || typeof options !== 'object') {
      throw new FactlensError('argument', 'options must be an object');
    }
    const handle = this.#live();
    // The form comes out of wasm memory piece by piece (header, each section, the
    // checksum), each built, copied here and freed before the next: it is never
    // whole in wasm memory, which keeps its peak.
    const pieces = [];
    let size = 0;
    const { records } = unwrap(handle.exportCompiled(String(listId), (view) => {
      const piece = view.slice();  // a copy: the view is valid during this call only
      pieces.push(piece);
      size += piece.length;
    }));
    if (options.parts !== true) return cutPieces(pieces, [0, size])[0];
    return cutPieces(pieces, [0, records[0], records[1], size]);
  }

  /**
   * Restores a list from exportCompiled()'s bytes (or its parts). Only pass bytes
   * from your own storage: the compiled form is a cache of a list this engine
   * accepted, not a signed artefact. The same options apply as to loadList
   * (lastVersion, and allowUnsigned for lists that were loaded unsigned). Throws
   * FactlensError (`format` for bytes that are corrupted or of another format
   * version).
   * @param {Uint8Array | Uint8Array[]} bytes
   */
  loadCompiled(bytes, options = {}) {
    const parts = formParts(bytes);
    const handle = this.#live();
    const optionsJson = loadOptionsJson(options);
    if (options.transfer !== true) {
      // The engine reads the form a part at a time (checksum, then each section as
      // it is imported), each copied into a buffer in wasm memory: the form is
      // never whole there, which keeps wasm memory's peak (it never shrinks).
      const { read, size } = formReader(parts);
      const info = unwrap(handle.loadCompiledFrom(size, read, optionsJson, false)).info;
      this.#keptForms.delete(info.id);
      return info;
    }
    // With `transfer`, the engine takes the parts' buffers (they are detached from
    // the caller: nobody can change or detach them after the checks) and keeps the
    // rule records there, each read into wasm memory when its rule is first
    // needed. A restore then writes no wasm memory for them: 21 MB at 100k rules,
    // where the first writes to a fresh module's memory are most of a restore's
    // time.
    const buffers = parts.map((part) => part.buffer);
    for (const [i, part] of parts.entries()) {
      if (Object.prototype.toString.call(part.buffer) !== '[object ArrayBuffer]' ||
          part.byteOffset !== 0 || part.byteLength !== part.buffer.byteLength) {
        throw new FactlensError('argument', 'loadCompiled with transfer expects each Uint8Array ' +
          `over the whole of its own ArrayBuffer (not part of a larger one, not shared): part ${i} is not`);
      }
    }
    if (new Set(buffers).size !== buffers.length) {
      throw new FactlensError('argument', 'loadCompiled with transfer expects each part over a buffer of its own');
    }
    // A detached buffer (taken by an earlier call, say) has no bytes; some engines
    // refuse to transfer it, Node 20 transfers it empty.
    let taken;
    try {
      if (buffers.some((buffer) => buffer.byteLength === 0)) {
        throw new Error('a buffer is empty or detached');
      }
      taken = structuredClone(buffers, { transfer: buffers }).map((b) => new Uint8Array(b));
    } catch (error) {
      throw new FactlensError('argument',
        `loadCompiled with transfer could not take the bytes: ${error.message}`);
    }
    const { read, size, starts } = formReader(taken);
    const { info, kept: [begin, end] } =
      unwrap(handle.loadCompiledFrom(size, read, optionsJson, true));
    // The list reads its records alone from now on: the parts without any go.
    // (Cutting a part to them, ArrayBuffer.prototype.transfer with a length,
    // copies in Chromium, which costs a restore what leaving them out of wasm
    // memory saved: a form is kept in exportCompiled's parts, the records apart.)
    let keptBytes = 0;
    for (let i = 0; i < taken.length; ++i) {
      if (begin === end || starts[i] + taken[i].length <= begin || starts[i] >= end) {
        taken[i] = null;
      } else {
        keptBytes += taken[i].length;
      }
    }
    this.#keptForms.set(info.id, keptBytes);
    return info;
  }

  /** Removes a loaded list by id. */
  unloadList(listId) {
    unwrap(this.#live().unloadList(String(listId)));
    this.#keptForms.delete(String(listId));
  }

  /** Returns the loaded lists' info; `stale` marks those past their expiry. */
  lists(now = Date.now()) {
    const nowMs = now instanceof Date ? now.getTime() : now;
    return JSON.parse(this.#live().lists(Math.floor(nowMs / 1000)));
  }

  /** Returns the verdict for one post. */
  check(text, context) {
    const handle = this.#live();
    const post = postText(text);
    const json = contextJson(context);
    const [size] = encodePosts(handle, [post]);
    return JSON.parse(verdictText.decode(handle.checkInput(size, json)));
  }

  /** Returns the verdicts for many posts, in order (checked in one call into wasm). */
  checkBatch(texts, context) {
    if (!Array.isArray(texts)) throw new FactlensError('argument', 'checkBatch expects an array');
    const handle = this.#live();
    const posts = texts.map(postText);
    const json = contextJson(context);
    const sizes = encodePosts(handle, posts);
    return JSON.parse(verdictText.decode(handle.checkBatchInput(JSON.stringify(sizes), json)));
  }

  /**
   * Returns the `k` claims of the loaded lists most similar to `text`, best first:
   * `[{ listId, ruleId, score, claim, rating, severity, review }]`. `score` is the
   * same calibrated similarity check() compares with its threshold.
   * @param {string} text
   * @param {number} [k=10] at most 1000
   */
  search(text, k = 10) {
    if (!Number.isInteger(k) || k < 0) {
      throw new FactlensError('argument', 'k must be a non-negative integer');
    }
    return unwrap(this.#live().search(postText(text), Math.min(k, 1000))).results;
  }

  /** Replaces the policy: the defaults, overridden by the fields given. */
  setPolicy(policy = {}) {
    unwrap(this.#live().setPolicy(JSON.stringify(policy)));
  }

  /** Returns the policy in force, every field filled in. */
  getPolicy() {
    return JSON.parse(this.#live().policy());
  }

  /**
   * Returns the wasm module's heap figures: `bytesInUse` (allocated and not yet
   * freed, from malloc's own accounting), `heapReserved` (what malloc has taken
   * from the wasm memory, in use or free) and `heapSize` (the wasm memory). The
   * module, and so the heap, is shared by every engine created from the same wasm
   * URL; works after dispose() too. And `keptFormBytes`: the JavaScript memory
   * this engine holds for its lists restored with `transfer` (the parts of their
   * forms that hold the rule records).
   */
  memoryStats() {
    let keptFormBytes = 0;
    for (const size of this.#keptForms.values()) keptFormBytes += size;
    return { ...JSON.parse(this.#core.memoryStats()), keptFormBytes };
  }

  /** Frees the engine's memory; the object is unusable afterwards. */
  dispose() {
    if (!this.#handle) return;
    finalizer.unregister(this);
    const handle = this.#handle;
    this.#handle = null;
    this.#keptForms.clear();
    try {
      handle.delete();
    } catch (error) {
      if (error.kind !== 'fault') throw error;  // a trapped instance frees nothing
    }
  }
}

/** @type {Map<string, Promise<object>>} one module instance per wasm URL */
const modules = new Map();

// The Emscripten factory of the package's own dist/ (index.js can swap in another
// build's glue for tests: FACTLENS_WASM_DIST).
const packageGlue = async () => createFactlensCore;

// Instantiates the module at `wasmUrl` (the Emscripten factory, then its runtime).
async function instantiateCore(wasmUrl, readBytes, loadGlue) {
  const args = {};
  // Emscripten 3.1.6's loader would fetch() a file path under Node 18+; hand it
  // the bytes instead.
  if (readBytes) args.wasmBinary = await readBytes(wasmUrl);
  else args.locateFile = () => String(wasmUrl);
  return (await loadGlue())(args);
}

// Returns the module instance for `wasmUrl`, instantiating it on first use; with
// `isolated`, a new instance of its own, which no cache keeps.
function loadCore(wasmUrl, readBytes, loadGlue, { isolated = false } = {}) {
  if (isolated) return instantiateCore(wasmUrl, readBytes, loadGlue);
  const key = String(wasmUrl);
  let module = modules.get(key);
  if (!module) {
    module = instantiateCore(wasmUrl, readBytes, loadGlue);
    modules.set(key, module);
    module.then((core) => liveCores.set(key, core), () => modules.delete(key));
  }
  return module;
}

/**
 * Returns an engine factory. `readBytes(url)` returns the wasm bytes (Node), or is
 * null in browsers, where the Emscripten loader streams the file from the URL.
 * `loadGlue()` returns the Emscripten factory matching `defaultWasmUrl` (by default
 * the one of dist/, imported above).
 * @param {URL | Promise<URL>} defaultWasmUrl
 * @param {((url: URL | string) => Promise<Uint8Array>) | null} readBytes
 * @param {() => Promise<Function>} [loadGlue]
 */
export function engineFactory(defaultWasmUrl, readBytes, loadGlue = packageGlue) {
  /**
   * Creates an engine. The wasm file is found next to the package entry; pass
   * `wasmUrl` to serve it from elsewhere. Engines share one module instance (one
   * wasm memory, which grows and never shrinks) per wasm URL; `isolated` gives the
   * engine an instance of its own, whose memory goes once the engine is disposed
   * and no longer referenced. V8 (Node, Chromium) reuses the compiled code of the
   * same module bytes, so a new instance costs an instantiation, not a compilation.
   * @param {{ wasmUrl?: string | URL, isolated?: boolean }} [options]
   */
  return async function createEngine(options = {}) {
    if (options.isolated !== undefined && typeof options.isolated !== 'boolean') {
      throw new FactlensError('argument', 'createEngine: isolated must be true or false');
    }
    const core = await loadCore(options.wasmUrl ?? await defaultWasmUrl, readBytes, loadGlue,
                                { isolated: options.isolated === true });
    const safeCore = guarded(core, core);
    const engine = new Engine(safeCore, guarded(core, new core.Engine()));
    engineCores.set(engine, core);
    return engine;
  };
}

/**
 * Test seam, not part of the package's API (index.js and browser.js do not export it):
 * allocates the rest of `engine`'s wasm heap, up to the module's maximum memory, so
 * that the engine's next call runs out of memory for real (malloc fails, the C++ code
 * aborts, the call traps). Used by tests/js and the extension's e2e fault injection.
 * Returns the bytes taken.
 */
export function exhaustMemoryForTests(engine) {
  const core = engineCores.get(engine);
  if (!core) throw new FactlensError('argument', 'not an engine');
  let taken = 0;
  for (let size = 1 << 28; size >= 8;) {
    if (core._malloc(size)) taken += size;
    else size >>>= 1;
  }
  return taken;
}

// ---- ClaimReview import --------------------------------------------------------

const IMPORT_STRINGS = ['pageUrl', 'merge', 'ratings', 'listId', 'listName', 'publisher',
  'publisherUrl', 'severity'];

function importOptionsJson(options) {
  if (options === null || typeof options !== 'object') {
    throw new FactlensError('argument', 'options must be an object');
  }
  const opts = {};
  for (const name of IMPORT_STRINGS) {
    if (options[name] != null) {
      if (typeof options[name] !== 'string') {
        throw new FactlensError('argument', `${name} must be a string`);
      }
      opts[name] = name === 'merge' || name === 'ratings' ? wellFormed(options[name]) : options[name];
    }
  }
  if (options.keywords != null) {
    if (typeof options.keywords !== 'boolean') {
      throw new FactlensError('argument', 'keywords must be a boolean');
    }
    opts.keywords = options.keywords;
  }
  const now = options.now ?? Date.now();
  const nowMs = now instanceof Date ? now.getTime() : now;
  if (!Number.isFinite(nowMs)) throw new FactlensError('argument', 'now must be a Date or milliseconds');
  opts.now = Math.floor(nowMs / 1000);
  return JSON.stringify(opts);
}

// The engine counts columns in UTF-8 bytes (as the CLI prints them); JavaScript
// editors count UTF-16 code units. Converts each message's column for `text`.
function utf16Messages(text, messages) {
  const encoder = new TextEncoder();
  let lines;
  return messages.map((m) => {
    if (m.line == null) return { severity: m.severity, line: null, column: null, message: m.message };
    lines ??= text.split('\n');
    const line = lines[m.line - 1] ?? '';
    let bytes = m.column - 1;
    let column = 1;
    for (const ch of line) {
      if (bytes <= 0) break;
      bytes -= encoder.encode(ch).length;
      column += ch.length;
    }
    return { severity: m.severity, line: m.line, column, message: m.message };
  });
}

/**
 * Returns the ClaimReview importer (`factlens import` in the engine). See
 * index.d.ts importClaimReview.
 * @param {URL | Promise<URL>} defaultWasmUrl
 * @param {((url: URL | string) => Promise<Uint8Array>) | null} readBytes
 * @param {() => Promise<Function>} [loadGlue]
 */
export function importerFactory(defaultWasmUrl, readBytes, loadGlue = packageGlue) {
  return async function importClaimReview(text, options = {}) {
    // A byte-order mark is dropped here so that positions count from the text's start.
    const input = wellFormed(text).replace(/^\uFEFF/, '');
    const optionsJson = importOptionsJson(options);
    const core = await loadCore(options.wasmUrl ?? await defaultWasmUrl, readBytes, loadGlue);
    const result = JSON.parse(guarded(core, core).importClaimReview(input, optionsJson));
    const messages = utf16Messages(input, result.messages);
    if (!result.ok) {
      const error = new FactlensError(result.kind, result.message);
      error.messages = messages;
      throw error;
    }
    delete result.ok;
    return { ...result, messages };
  };
}
