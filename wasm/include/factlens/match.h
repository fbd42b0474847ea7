// Copyright factlens authors. match: finds the rules of a list that a post matches.
//
// A CompiledList holds the matchers for one RuleList: RE2 patterns, keyword sets
// with a proximity window, and debunked URLs / domains, all over normalised text
// (normalize.h), and a similarity index (similar.h) over the claims of the rules with
// match.similar (claim, phrasings, fact-check title), which yield kSimilar matches.
// Every rule can be found by Search, through an index of all claims built on demand.
//
// Scale: a prefilter (prefilter.h) picks the patterns and keyword sets a post could
// match in one scan, so the cost per post stays nearly flat as lists grow. RE2
// programs are compiled on first need and shared by every list holding the same
// normalised pattern. A compiled list can be exported as sections of the compiled
// form (engine.h) and imported back without parsing JSON or normalising again.
#ifndef FACTLENS_MATCH_H_
#define FACTLENS_MATCH_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "factlens/list.h"
#include "factlens/normalize.h"
#include "factlens/similar.h"
#include "factlens/status.h"

namespace factlens {

enum class MatchKind { kPattern, kKeywords, kUrl, kDomain, kSimilar };

// Returns "pattern", "keywords", "url", "domain" or "similar".
const char* MatchKindName(MatchKind kind);

// One rule matched by one matcher. Spans are byte ranges of the original text.
struct RuleMatch {
  uint32_t rule_index = 0;
  MatchKind kind = MatchKind::kPattern;
  double score = 0;  // in (0, 1]: how strongly this evidence supports the claim
  std::vector<ByteRange> spans;
};

struct CompileOptions {
  // False checks every item of every post: for tests and benchmarks that prove
  // the prefilter never loses a match.
  bool use_prefilter = true;
  // False searches every pattern with its case-insensitive program in the post as
  // it is: for the tests that prove the case-sensitive programs of
  // CaseSensitiveOnLowered patterns (match.cc) find the same matches.
  bool use_case_sensitive = true;
  // The similarity index's features (evaluation only).
  SimilarOptions similar;
};

// A section of the compiled form: its four-letter tag ("RULE", "PATT", ...) and a
// function that writes it, so that it is built only when it is written.
struct CompiledSectionWriter {
  uint32_t tag;
  std::function<void(ByteWriter*)> write;
  // Bytes the list holds as the section has them, after what `write` writes,
  // handed out as they are, a part at a time, not copied into one string (the
  // rule records: 21 MB at 100k rules): `held_size` bytes, which `put_held` gives
  // to its argument in order. False if they could not all be read (a kept
  // reader that failed: Import).
  size_t held_size = 0;
  std::function<bool(const std::function<void(std::string_view)>&)> put_held = {};
};
// Reads `size` bytes at `offset` of a compiled form being imported. The view is
// valid until the next call: a reader over bytes held elsewhere (a JavaScript
// Uint8Array) brings in one part at a time, so the form is never whole in wasm
// memory; a reader over bytes in memory returns views into them (no copy).
using CompiledFormReader = std::function<std::string_view(size_t offset, size_t size)>;
// Where each section of a compiled form being imported is, by tag.
struct CompiledSectionSpan {
  size_t offset = 0, size = 0;
};
using CompiledSectionSpans = std::map<uint32_t, CompiledSectionSpan>;
// Returns the tag of a four-letter section name.
constexpr uint32_t SectionTag(const char (&name)[5]) {
  return static_cast<uint32_t>(static_cast<unsigned char>(name[0])) |
         static_cast<uint32_t>(static_cast<unsigned char>(name[1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(name[2])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(name[3])) << 24;
}

class SharedStringIds;  // match.cc

class CompiledList {
 public:
  ~CompiledList();
  CompiledList(const CompiledList&) = delete;
  CompiledList& operator=(const CompiledList&) = delete;

  // Compiles the matchers of `list` into *out. Returns kFormat naming the rule
  // and field if a pattern cannot be compiled (e.g. exceeds RE2's memory budget).
  // `similar` chooses the similarity index's features (evaluation only).
  static Status Compile(RuleList list, std::unique_ptr<CompiledList>* out,
                        const SimilarOptions& similar = {});
  // Patterns are parsed and checked here (a pattern that could exceed RE2's memory
  // budget is compiled at once, and fails with kLimit); programs for the others
  // are compiled on first need. Rule examples are dropped: matching never uses
  // them and a 100k-rule list should not carry them in memory.
  static Status Compile(RuleList list, const CompileOptions& options,
                        std::unique_ptr<CompiledList>* out);

  // Compiles a list rule by rule: Compile, and Engine::LoadList as the rules are
  // read (ParseList's RuleSink), so that they are never all in memory as Rule
  // objects. Each rule becomes its record and matchers at once; a rule with
  // match.similar keeps its claim, phrasings, title and languages for the
  // similarity index, built with the prefilter by Finish.
  class Builder {
   public:
    // `expected_rules`: about how many rules will come (EstimateRuleCount), to
    // reserve for them; any number may. `record_bytes_bound`: the most the
    // reservation for their records may be (a rule's record takes at most its
    // JSON's bytes and 16 more). `pattern_syntax_unchecked`: as RuleList's (Add
    // then also reports a pattern's syntax as written).
    Builder(const CompileOptions& options, size_t expected_rules,
            size_t record_bytes_bound, bool pattern_syntax_unchecked);
    ~Builder();
    // Compiles `rule` as the next rule (its index: the rules added before it),
    // and may move from it. On error (kFormat naming the rule and field, or
    // kLimit) the builder is spent: it takes no more rules and makes no list.
    Status Add(Rule& rule);
    // The list of the rules added, with `info`.
    std::unique_ptr<CompiledList> Finish(ListInfo info);

   private:
    struct State;
    std::unique_ptr<State> state_;
  };

  // This list's sections of the compiled form (all but the engine's LOAD), to be
  // written one at a time while the list stays loaded and unchanged.
  std::vector<CompiledSectionWriter> ExportSections() const;
  // Rebuilds a list from the sections Export wrote, at `sections` in the form
  // `read` reads: one section at a time, each from its start to its end in reads
  // of kImportWindow bytes (or one pattern's size, if larger), so that the only
  // memory written beyond what the list keeps is one window. Returns kFormat if a
  // section is missing or malformed (every count and index is checked).
  //
  // With `keep_reader`, `read` stays valid as long as the list and reads the same
  // bytes (the WebAssembly binding's reads from a JavaScript buffer the engine
  // was given to keep): the rule records are checked where they are, not copied,
  // and the list keeps `read` to bring in a rule's record on first need. A
  // restore then writes no memory for them (21 MB at 100k rules, each MB a
  // first write that costs about 4.6 ms in a fresh wasm module on these VMs).
  static constexpr size_t kImportWindow = size_t{1} << 18;
  static Status Import(const CompiledSectionSpans& sections,
                       const CompiledFormReader& read, const CompileOptions& options,
                       std::unique_ptr<CompiledList>* out, bool keep_reader = false);

  // Returns counts for benchmarks and diagnostics.
  struct Stats {
    size_t patterns = 0, keyword_sets = 0, atoms = 0, automaton_states = 0,
           always_checked = 0, programs_compiled = 0;
  };
  Stats stats() const;

  // Returns the matches of the post `post` (already normalised), at most one per
  // rule and kind, ordered by rule index then kind.
  std::vector<RuleMatch> Match(const NormalizedText& post) const;

  // Returns the at most `k` rules whose claims are most similar to `post`, best
  // first, leaving out the rule indices in `withheld` (sorted). The index over all
  // the list's claims is built on the first call (when every rule has match.similar
  // the matcher's index serves, and nothing is built).
  //
  // Match() yields a kSimilar match for a rule with match.similar when its score
  // reaches SimilarIndex::kDefaultThreshold among the best kSimilarMatches of an
  // index of the rules with match.similar only: a reader's engine never holds an
  // index of claims it would not match on.
  std::vector<SimilarHit> Search(const NormalizedText& post, size_t k,
                                 const std::vector<uint32_t>& withheld = {}) const;
  static constexpr size_t kSimilarMatches = 5;

  const ListInfo& info() const { return info_; }
  size_t rule_count() const { return rule_offsets_.size() - 1; }
  // Returns rule `index` (< rule_count()). Rules are kept as compact records and
  // decoded on first need; the reference stays valid as long as the list. Not
  // thread-safe (like Match): it fills a cache.
  const Rule& rule(uint32_t index) const;
  // Returns the id of rule `index` without decoding the rest of it. With a kept
  // reader (Import), the view is valid until the next call of rule_id or rule.
  std::string_view rule_id(uint32_t index) const;
  // With a kept reader (Import), the bytes of the form it still reads, [first,
  // second): the rule records. The rest of the form can go (the wasm wrapper keeps
  // only the parts of a form in parts that hold them). {0, 0} without one.
  std::pair<size_t, size_t> kept_form_range() const {
    if (!kept_reader_) return {0, 0};
    return {kept_records_at_, kept_records_at_ + rule_offsets_.back()};
  }

  struct Matchers;  // opaque: the matchers and their prefilter (match.cc)

 private:
  CompiledList();
  // Appends `rule` to the rule records (its record `size` bytes: RecordSize), its
  // shared strings to `shared`'s. False if the record came out another size (a
  // defect: RecordSize and EncodeRecord disagree), and nothing is appended.
  bool AddRule(const Rule& rule, size_t size, SharedStringIds* shared);
  // Decodes rule `index` into *out.
  void DecodeRule(uint32_t index, Rule* out) const;
  // Returns rule `index`'s record, from rule_records_ or through the kept reader
  // (then valid until its next call; empty if the reader failed).
  std::string_view RuleRecord(uint32_t index) const;

  ListInfo info_;
  // The rules as records (the RULE section's; match.cc): a 100k-rule list's Rule
  // objects, with a heap block for each string and array, take about twice the
  // memory, and importing them would allocate a million times.
  std::string rule_records_;
  std::vector<uint32_t> rule_offsets_{0};  // rule i: [rule_offsets_[i], [i + 1])
  // A restored list's reader of its form, when Import kept it: the records are
  // then not in rule_records_ but at kept_records_at_ in the form.
  CompiledFormReader kept_reader_;
  size_t kept_records_at_ = 0;
  // The strings the records share (review publishers, dates and URL origins), once
  // each; a record names them by index (match.cc).
  std::vector<std::string> shared_strings_;
  mutable std::vector<std::unique_ptr<Rule>> rule_cache_;
  std::unique_ptr<Matchers> matchers_;
};

}  // namespace factlens

#endif  // FACTLENS_MATCH_H_
