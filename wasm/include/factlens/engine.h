// Copyright factlens authors. engine: owns the loaded lists and answers checks.
//
// One Engine serves a whole browser (or one CLI run). Lists are loaded whole or not
// at all: a list that fails to parse, verify or compile leaves the engine exactly as
// it was, including any earlier version of the same list.
#ifndef FACTLENS_ENGINE_H_
#define FACTLENS_ENGINE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "factlens/list.h"
#include "factlens/match.h"
#include "factlens/score.h"
#include "factlens/status.h"

namespace factlens {

// A key rotation statement and its signature by the previous key (verify.h).
struct RotationProof {
  std::string statement;
  std::string signature;
};

struct LoadOptions {
  bool allow_unsigned = false;  // authoring tools only; the extension never sets it
  std::string signature;        // minisign signature file text
  std::string public_key;       // the pinned minisign public key (file text or base64)
  // Rotations from the pinned key to the key that signed this list, oldest first;
  // each statement is signed by the key before it.
  std::vector<RotationProof> rotations;
  std::optional<int64_t> last_version;  // the version last accepted for this list id
  std::string last_digest;          // ContentDigest of the bytes accepted as last_version
  std::optional<int64_t> now_unix;  // the clock for expiry checks (default: now)
  ParseLimits limits;
  // False turns the prefilter off (every rule checked against every post): for
  // the tests and benchmarks that prove it never loses a match.
  bool use_prefilter = true;
  // False searches every pattern case-insensitively in the post as it is (see
  // CompileOptions::use_case_sensitive): the reference of the tests.
  bool use_case_sensitive = true;
  SimilarOptions similar;  // the similarity index's features (evaluation only)
};

// One claim found by Engine::Search.
struct SearchResult {
  std::string list_id;
  const Rule* rule = nullptr;  // owned by the engine's loaded list
  double score = 0;            // SimilarHit::score, comparable across lists
  std::array<double, kSimilarFeatureCount> features{};  // SimilarHit::features
};

// The compiled form's format version; a blob of another version is refused with
// kFormat (the caller then loads the list text again and re-exports).
inline constexpr uint32_t kCompiledFormVersion = 8;

struct LoadedListInfo {
  ListInfo info;
  size_t rule_count = 0;
  bool is_signed = false;
  std::string digest;           // ContentDigest of the list text, for last_digest
  std::string key_id;           // hex id of the key that verified it (signed lists)
  std::string public_key;       // that key, base64: the pin to keep after a rotation
  bool key_rotated = false;     // true if a rotation moved the pin
  std::string trusted_comment;  // the signature's verified trusted comment
};

class Engine {
 public:
  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Verifies, parses, checks and compiles `text`, then adds it (replacing a loaded
  // list with the same id). In order, cheapest first:
  //  - sizes against the limits, before any hashing or parsing (kLimit);
  //  - the pinned public key (kKey), the signature file (kSignature), rotation
  //    statements (kKey, kSignature, kFormat), then the signature over the exact
  //    bytes (kKey if made by another key, kSignature if it does not verify);
  //    unsigned lists only with allow_unsigned (kSignature otherwise);
  //  - the list itself (kFormat, kLimit);
  //  - a rotation must name this list (kKey);
  //  - expiry against now_unix (kExpired);
  //  - version against last_version, the digest of an equal version against
  //    last_digest, and against a version of the same list already loaded
  //    (kRollback);
  //  - compiling the matchers (kFormat, kLimit).
  // `text_done`, if set, is called once the load no longer reads `text` (before
  // compiling, the larger part of a load), so that a caller whose buffer held only
  // the text can free it then: a 100k-rule list's 39 MB are not held while its
  // matchers are built, and wasm memory keeps its peak.
  Status LoadList(std::string_view text, const LoadOptions& options, LoadedListInfo* info,
                  const std::function<void()>& text_done = {});

  // Returns in *out the compiled form of the loaded list `list_id`: a byte string
  // that LoadCompiled restores without parsing JSON or normalising rules again.
  // Layout: magic "FLCL", u32 format version, u32 section count, sections (u32
  // tag, u32 length, bytes), u64 checksum of all bytes before it. Returns
  // kNotFound if no such list is loaded.
  //
  // The compiled form is a cache of a list this engine already accepted (its
  // signature was checked when the text was loaded); it carries no signature of
  // its own, and the checksum detects corruption, not tampering. Restore only
  // blobs from the reader's own storage (IndexedDB, a local file), never ones
  // received from elsewhere.
  Status ExportCompiled(std::string_view list_id, std::string* out) const;
  // The same bytes, given to `emit` part by part, in order (the header, each
  // section's tag and length, its bytes, ..., the checksum). A section is built
  // just before it is given and freed just after, so the form is never whole in
  // memory: the wasm binding copies each part out (wasm memory keeps its peak).
  // A part is valid during the call only. With `records`, *records is where the
  // rule records lie in the form, [first, second): all a list restored with a
  // kept reader reads after the restore (CompiledList::kept_form_range), so the
  // wasm wrapper hands a form out in parts split there.
  Status ExportCompiled(std::string_view list_id,
                        const std::function<void(std::string_view)>& emit,
                        std::pair<uint64_t, uint64_t>* records = nullptr) const;

  // Restores a list from ExportCompiled's bytes, replacing a loaded list with
  // the same id. The list's info (id, version, expires, digest, key) travels
  // inside, so the same lifecycle checks apply as to list text (kExpired,
  // kRollback against last_version/last_digest and a loaded version), and
  // kSignature when the list was loaded unsigned and allow_unsigned is not set.
  // options.signature and public_key are not used: the blob is not signed. Returns
  // kFormat for bytes that are not a compiled list, of another format version, truncated
  // or corrupted (checksum), naming which.
  Status LoadCompiled(std::string_view bytes, const LoadOptions& options,
                      LoadedListInfo* info);
  // The same, for a form of `form_size` bytes held elsewhere, which `read` brings
  // in a part at a time (the checksum's parts of at most kReadPart bytes, then
  // each section's header, then each section as it is imported, in windows of
  // CompiledList::kImportWindow bytes), so that the form is never whole in this
  // memory, nor any one section: the WebAssembly binding reads from a
  // JavaScript Uint8Array, and a 100k-rule form (54 MB) no longer adds to the
  // peak of wasm memory, which never shrinks. With `keep_reader`, `read` stays
  // valid as long as the list and the list keeps it: its rule records are read
  // through it on first need, not copied (CompiledList::Import).
  Status LoadCompiled(size_t form_size, const CompiledFormReader& read,
                      const LoadOptions& options, LoadedListInfo* info,
                      bool keep_reader = false);
  static constexpr size_t kReadPart = size_t{1} << 20;

  // Returns the compiled list `list_id`, or nullptr (benchmarks, diagnostics).
  const CompiledList* Compiled(std::string_view list_id) const;

  // Removes the list `list_id`. Returns kNotFound if no such list is loaded.
  Status UnloadList(std::string_view list_id);

  // Returns the lists loaded, in load order.
  std::vector<LoadedListInfo> Lists() const;

  // Returns true if the loaded list `list_id` has expired by `now_unix`: callers may
  // keep using it, shown as stale, until a newer list verifies.
  bool IsStale(std::string_view list_id, int64_t now_unix) const;

  void SetPolicy(const Policy& policy) { policy_ = policy; }
  const Policy& policy() const { return policy_; }

  // Returns the verdict for the post `text` (UTF-8). Posts longer than
  // kMaxPostBytes are checked on their first kMaxPostBytes.
  Verdict Check(std::string_view text, const CheckContext& context) const;

  // Returns the at most `k` claims of all loaded lists most similar to `text`, best
  // first (ties by load order, then rule order), with the ranking Check uses for
  // kSimilar matches. Rules whose id is in `withheld` are left out (evaluation:
  // "what if the list lacked the right claim?").
  std::vector<SearchResult> Search(std::string_view text, size_t k,
                                   const std::vector<std::string>& withheld = {}) const;

  static constexpr size_t kMaxPostBytes = 1u << 20;
  static constexpr size_t kMaxSearchResults = 1000;

 private:
  struct Loaded;
  // Returns kExpired / kRollback if `out` may not replace what is loaded.
  Status CheckLifecycle(const LoadedListInfo& out, const LoadOptions& options) const;
  std::vector<std::unique_ptr<Loaded>> lists_;
  Policy policy_;
};

}  // namespace factlens

#endif  // FACTLENS_ENGINE_H_
