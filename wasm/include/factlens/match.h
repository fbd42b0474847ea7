// Copyright factlens authors. match: finds the rules of a list that a post matches.
//
// A CompiledList holds the matchers for one RuleList: RE2 patterns, keyword sets
// with a proximity window, and debunked URLs / domains, all over normalised text
// (normalize.h), and a similarity index (similar.h) over every rule's claim, its
// match.similar phrasings and its fact-check title. Every rule can be found by
// Search; only rules with match.similar yield kSimilar matches.
#ifndef FACTLENS_MATCH_H_
#define FACTLENS_MATCH_H_

#include <cstdint>
#include <memory>
#include <string>
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

  // Returns the matches of the post `post` (already normalised), at most one per
  // rule and kind, ordered by rule index then kind.
  std::vector<RuleMatch> Match(const NormalizedText& post) const;

  // Returns the at most `k` rules whose claims are most similar to `post`, best
  // first, leaving out the rule indices in `withheld` (sorted). Match() yields a
  // kSimilar match for a rule with match.similar when its score here reaches
  // SimilarIndex::kDefaultThreshold among the best kSimilarMatches.
  std::vector<SimilarHit> Search(const NormalizedText& post, size_t k,
                                 const std::vector<uint32_t>& withheld = {}) const;
  static constexpr size_t kSimilarMatches = 5;

  const RuleList& list() const { return list_; }

 private:
  struct Matchers;
  CompiledList();
  RuleList list_;
  std::unique_ptr<Matchers> matchers_;
};

}  // namespace factlens

#endif  // FACTLENS_MATCH_H_
