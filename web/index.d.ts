// Types for the factlens JavaScript API (web/index.js).

export type ErrorKind =
  | 'format' | 'limit' | 'signature' | 'key' | 'rollback' | 'expired'
  | 'unsupported' | 'not_found' | 'disposed' | 'argument'
  /** The wasm instance trapped (or ran out of memory): create a new engine. */
  | 'fault';

/** Thrown by every failing engine call; `kind` says what went wrong. */
export class FactlensError extends Error {
  constructor(kind: ErrorKind, message: string);
  readonly kind: ErrorKind;
  /** From importClaimReview(): the importer's reports up to the failure. */
  messages?: ImportMessage[];
}

export type Rating = 'false' | 'altered' | 'partly_false' | 'missing_context' | 'satire' | 'true';
export type Severity = 'low' | 'medium' | 'high' | 'critical';
/** Ordered: demote includes the label, hide includes the demotion. */
export type Action = 'none' | 'label' | 'demote' | 'hide';
export type Stance = 'repeats' | 'debunks' | 'unclear';
export type MatchKind = 'pattern' | 'keywords' | 'url' | 'domain' | 'similar';

export interface ListInfo {
  id: string;
  name: string;
  publisher: { name: string; url: string };
  version: number;
  issued: string;
  expires: string;
  ruleCount: number;
  signed: boolean;
  /** BLAKE2b-256 of the list text (hex): store it with `version` and pass both back
   *  as `lastDigest`/`lastVersion`, so a replayed version with other bytes is refused. */
  digest: string;
  /** Signed lists: the key that verified the list (hex id and base64). */
  keyId?: string;
  publicKey?: string;
  /** True if a rotation statement moved the pin: store `publicKey` as the new pin. */
  keyRotated?: boolean;
  /** The signature's trusted comment, verified. */
  trustedComment?: string;
  /** From lists(): the list is past `expires` (still used as the last good version). */
  stale?: boolean;
}

/** A publisher's key rotation statement (rules/FORMAT.md) and its minisign
 *  signature by the previous key. */
export interface RotationProof {
  statement: string;
  signature: string;
}

export interface LoadOptions {
  /** The minisign signature file's text. */
  signature?: string;
  /** The publisher's minisign public key, pinned by the caller. */
  publicKey?: string;
  /** The version last accepted for this list id; an older list is refused (`rollback`). */
  lastVersion?: number;
  /** The `digest` accepted with `lastVersion`; the same version with other bytes is refused. */
  lastDigest?: string;
  /** Rotations from the pinned key to the key that signed this list, oldest first. */
  rotations?: RotationProof | RotationProof[];
  /** The clock for the expiry check (default: now). */
  now?: Date | number;
  /** Load an unsigned draft. Authoring tools only; never for lists readers act on. */
  allowUnsigned?: boolean;
  /** false checks every rule against every post (tests and benchmarks only). */
  prefilter?: boolean;
}

export interface CheckContext {
  /** The reader's region, ISO 3166-1 alpha-2 ("DE"). */
  region?: string;
  /** The post's language, BCP 47 ("de"). */
  language?: string;
}

export interface Review {
  url: string;
  title: string;
  publisher: string;
  date: string;
}

export interface Match {
  listId: string;
  ruleId: string;
  kind: MatchKind;
  /** In (0, 1]. */
  score: number;
  action: Action;
  rating: Rating;
  severity: Severity;
  stance: Stance;
  /** UTF-16 [start, end) indices into the text as given to check(). */
  spans: Array<[number, number]>;
  claim: string;
  review: Review;
}

export interface Verdict {
  action: Action;
  rating: Rating | null;
  severity: Severity | null;
  score: number;
  stance: Stance;
  /** Strongest first. */
  matches: Match[];
}

export interface SearchResult {
  listId: string;
  ruleId: string;
  /** In (0, 1): the calibrated similarity check() compares with its threshold. */
  score: number;
  claim: string;
  rating: Rating;
  severity: Severity;
  review: Review;
}

export interface Policy {
  ratings?: Partial<Record<Rating, Action>>;
  /** Applied on top of the rating's action; the stronger wins. */
  severities?: Partial<Record<Severity, Action>>;
  /** Severity actions only where the reader's region is one of the rule's regions. */
  severityOnlyInRegions?: boolean;
  /** Matches scoring below this are ignored. */
  minScore?: number;
  /** The most a match may get by its stance; default { debunks: 'none', unclear: 'label', repeats: 'hide' }. */
  stances?: Partial<Record<Stance, Action>>;
}

/** The wasm heap, shared by every engine made from the same wasm URL. */
export interface MemoryStats {
  /** Bytes allocated by the engine and not yet freed (malloc's own accounting). */
  bytesInUse: number;
  /**
   * Bytes malloc has taken from the wasm memory, in use or free for its reuse
   * (`heapReserved - bytesInUse`: what the heap's peak left free).
   */
  heapReserved: number;
  /**
   * Size of the wasm memory in bytes (grows, never shrinks): the heap, the module's
   * stack and data, and memory not yet taken.
   */
  heapSize: number;
}

export interface MemoryStats {
  bytesInUse: number;
  heapReserved: number;
  heapSize: number;
  keptFormBytes: number;
}

export interface Engine {
  loadList(listText: string, options?: LoadOptions): ListInfo;
  /**
   * The compiled form of a loaded list (format version + checksum), to keep in
   * the reader's own storage (IndexedDB) and restore with loadCompiled().
   * It is a cache of a list this engine accepted, not a signed artefact.
   * With `parts: true`, the same bytes in parts, each over a buffer of its own,
   * the rule records in one of their own: store them as they are, and a restore
   * with `transfer` keeps only the records' part.
   */
  exportCompiled(listId: string, options?: { parts?: false }): Uint8Array;
  exportCompiled(listId: string, options: { parts: true }): Uint8Array[];
  exportCompiled(listId: string, options?: { parts?: boolean }): Uint8Array | Uint8Array[];
  /**
   * Restores a list from exportCompiled() bytes (whole or in parts), without
   * parsing or compiling it again. Only pass bytes from your own storage.
   * lastVersion (rollback) and allowUnsigned apply as to loadList; damaged or
   * other-version bytes throw FactlensError with kind 'format'.
   *
   * With `transfer: true` the engine takes the buffers of `bytes` (they are
   * detached from the caller, even if the load fails; each must be the whole
   * of its own, unshared ArrayBuffer) and keeps the list's rule records there,
   * reading each into wasm memory when its rule is first needed: a restore
   * writes less wasm memory (21 MB less at 100k rules) and is faster. The part
   * that holds the records stays in JavaScript memory as long as the list is
   * loaded: the records alone (20 MB at 100k rules) for exportCompiled's parts,
   * the whole form (44 MB) for its one Uint8Array.
   */
  loadCompiled(bytes: Uint8Array | readonly Uint8Array[],
               options?: LoadOptions & { transfer?: boolean }): ListInfo;
  /**
   * The wasm module's heap, shared by every engine made from the same wasm URL:
   * `bytesInUse` (allocated, not yet freed), `heapReserved` (what malloc has
   * taken from wasm memory, in use or free) and `heapSize` (the wasm memory,
   * which never shrinks); and `keptFormBytes`, the JavaScript memory this engine
   * holds for its lists restored with `transfer` (the parts of their forms that
   * hold the rule records). Works after dispose() too.
   */
  memoryStats(): MemoryStats;
  unloadList(listId: string): void;
  lists(now?: Date | number): ListInfo[];
  check(text: string, context?: CheckContext): Verdict;
  checkBatch(texts: string[], context?: CheckContext): Verdict[];
  /** The k (default 10, at most 1000) most similar claims, best first. */
  search(text: string, k?: number): SearchResult[];
  /** Replaces the policy with the defaults overridden by `policy`. */
  setPolicy(policy?: Policy): void;
  getPolicy(): Required<Policy>;
  /** Heap figures of the module behind this engine; usable after dispose() too. */
  memoryStats(): MemoryStats;
  /** Frees the engine's memory; later calls (except memoryStats) throw kind "disposed". */
  dispose(): void;
}

export interface CreateEngineOptions {
  /** Where the .wasm file is served; defaults to next to this module. */
  wasmUrl?: string | URL;
  /**
   * Engines share one module instance, one wasm memory, per wasm URL, and wasm
   * memory grows but never shrinks. With `isolated: true` the engine gets an
   * instance of its own, whose memory is freed once the engine is disposed and
   * no longer referenced: a long-lived page can swap a fresh engine, restored
   * from compiled forms, for one whose memory a load from text grew. The compiled
   * code is reused (V8), so it costs an instantiation, not a compilation.
   */
  isolated?: boolean;
}

export function createEngine(options?: CreateEngineOptions): Promise<Engine>;

export interface ImportOptions {
  /** The page's address, to resolve relative review links (an HTML page's
   *  <link rel="canonical"> or og:url is used otherwise). */
  pageUrl?: string;
  /** A factlens/1 list to update (as `factlens import --merge`): rules are found
   *  again by review URL and keep their ids and hand-written fields, new claims are
   *  added, no rule is dropped, the version grows by one if anything changed. */
  merge?: string;
  /** A ratings table's JSON text (rules/README.md); default: rules/ratings.json,
   *  built into the wasm module. */
  ratings?: string;
  /** A new list's metadata (ignored with `merge`); defaults from the first review. */
  listId?: string;
  listName?: string;
  publisher?: string;
  publisherUrl?: string;
  /** Severity of new rules; default 'medium'. */
  severity?: Severity;
  /** Also derive a keyword set from each new claim (`factlens import --keywords`). */
  keywords?: boolean;
  /** The clock for issued/expires (default: now). */
  now?: Date | number;
  /** Where the .wasm file is served; defaults to next to this module. */
  wasmUrl?: string | URL;
}

/** A report of the importer: a review left out (`error`) or fixed up (`warning`). */
export interface ImportMessage {
  severity: 'error' | 'warning';
  /** 1-based position in the imported text; null when the report has none. */
  line: number | null;
  /** 1-based, in UTF-16 code units (JavaScript string indices + 1). */
  column: number | null;
  message: string;
}

export interface ImportChange {
  kind: 'added' | 'updated' | 'unchanged' | 'kept';
  ruleId: string;
  /** What changed, or why the rule was kept. */
  detail: string;
}

export interface ImportResult {
  /** The factlens/1 list (JSON text, 2-space indented): new, or `merge` updated.
   *  It parses; load it with `allowUnsigned` to try it, sign it to publish it. */
  list: string;
  /** 'json-ld', 'json-ld @graph', 'json-ld DataFeed', 'json-ld array', 'html',
   *  'fact-check-tools'. */
  shape: string;
  /** ClaimReviews read from the text. */
  reviews: number;
  added: number;
  updated: number;
  unchanged: number;
  kept: number;
  /** Reviews reported and left out. */
  skipped: number;
  version: number;
  versionBumped: boolean;
  /** One per rule of the list. */
  changes: ImportChange[];
  messages: ImportMessage[];
}

/**
 * Imports schema.org ClaimReview markup (JSON-LD, an HTML page with
 * <script type="application/ld+json"> blocks, or a Fact Check Tools claims:search
 * response) as factlens/1 rules, exactly as `factlens import` does: one
 * `match.similar` rule per claim. Unknown ratings, reviews without a claim or date,
 * and links that are not https are reported in `messages` and left out, never
 * guessed. Throws FactlensError (`format`: the text is none of these shapes, the
 * `merge` list does not parse, or no rule results; `error.messages` says why;
 * `argument`: bad options).
 */
export function importClaimReview(text: string, options?: ImportOptions): Promise<ImportResult>;

export interface AnnotateOptions {
  /** The engine whose lists and policy decide; annotate() never disposes it. */
  engine: Engine;
  /** CSS selector of the post elements under the root. */
  selector: string;
  /** The text checked for a post; default: its textContent. */
  textOf?: (element: Element) => string;
  /** What identifies a post across re-renders (the reader's "show anyway" sticks to
   *  it); default: its text. Use a post id where the page has one. */
  keyOf?: (element: Element, text: string) => string;
  /** Called with every verdict (also `none`); return false to draw nothing for it. */
  onVerdict?: (verdict: Verdict, element: Element) => boolean | void;
  /** Engine or callback errors; default: rethrown asynchronously (shows in the console). */
  onError?: (error: unknown) => void;
  /** Passed to checkBatch: the reader's region and the posts' language. */
  context?: CheckContext;
  /** Overlay strings; default English (see factlens/ui/overlay.js STRINGS_EN). */
  strings?: import('./ui/overlay.js').OverlayStrings;
  /** Default 'auto' (follows prefers-color-scheme). */
  theme?: 'auto' | 'light' | 'dark';
  /** Posts per checkBatch call; default 50. */
  batchSize?: number;
}

export interface AnnotateHandle {
  /** Stops observing and drops queued work; with removeLabels, also removes every
   *  label and gives collapsed posts back their display. */
  disconnect(options?: { removeLabels?: boolean }): void;
  /** Checks every matching element again (after a list or policy change). */
  refresh(): void;
  /** Runs queued work now instead of at the next idle moment. */
  flush(): void;
}

/**
 * Labels, demotes or hides the elements under `root` matching `selector`, now and as
 * they are added (MutationObserver), in batches at idle time. Throws FactlensError
 * (kind "argument") for a missing engine, root or selector.
 */
export function annotate(root: Element | Document | DocumentFragment,
                         options: AnnotateOptions): AnnotateHandle;
