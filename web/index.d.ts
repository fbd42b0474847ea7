// Types for the factlens JavaScript API (web/index.js).

export type ErrorKind =
  | 'format' | 'limit' | 'signature' | 'key' | 'rollback' | 'expired'
  | 'unsupported' | 'not_found' | 'disposed' | 'argument';

/** Thrown by every failing engine call; `kind` says what went wrong. */
export class FactlensError extends Error {
  constructor(kind: ErrorKind, message: string);
  readonly kind: ErrorKind;
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

export interface Policy {
  ratings?: Partial<Record<Rating, Action>>;
  /** Applied on top of the rating's action; the stronger wins. */
  severities?: Partial<Record<Severity, Action>>;
  /** Severity actions only where the reader's region is one of the rule's regions. */
  severityOnlyInRegions?: boolean;
  /** Matches scoring below this are ignored. */
  minScore?: number;
}

export interface Engine {
  loadList(listText: string, options?: LoadOptions): ListInfo;
  /**
   * The compiled form of a loaded list (format version + checksum), to keep in
   * the reader's own storage (IndexedDB) and restore with loadCompiled().
   * It is a cache of a list this engine accepted, not a signed artefact.
   */
  exportCompiled(listId: string): Uint8Array;
  /**
   * Restores a list from exportCompiled() bytes, without parsing or compiling it
   * again. Only pass bytes from your own storage. lastVersion (rollback) and
   * allowUnsigned apply as to loadList; damaged or other-version bytes throw
   * FactlensError with kind 'format'.
   */
  loadCompiled(bytes: Uint8Array, options?: LoadOptions): ListInfo;
  /** Bytes the engine has allocated, and the wasm memory's size (its peak). */
  memoryStats(): { heapBytes: number; memoryBytes: number };
  unloadList(listId: string): void;
  lists(now?: Date | number): ListInfo[];
  check(text: string, context?: CheckContext): Verdict;
  checkBatch(texts: string[], context?: CheckContext): Verdict[];
  search(text: string, k?: number): never;
  /** Replaces the policy with the defaults overridden by `policy`. */
  setPolicy(policy?: Policy): void;
  getPolicy(): Required<Policy>;
  dispose(): void;
}

export interface CreateEngineOptions {
  /** Where the .wasm file is served; defaults to next to this module. */
  wasmUrl?: string | URL;
}

export function createEngine(options?: CreateEngineOptions): Promise<Engine>;
