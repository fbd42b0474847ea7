// Copyright factlens authors. match: finds the rules of a list that a post matches.
//
// A CompiledList holds the matchers for one RuleList: RE2 patterns, keyword sets
// with a proximity window, and debunked URLs / domains, all over normalised text
// (normalize.h). Claim similarity (match.similar) plugs in as one more matcher kind.
#ifndef FACTLENS_MATCH_H_
#define FACTLENS_MATCH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "factlens/list.h"
#include "factlens/normalize.h"
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
  static Status Compile(RuleList list, std::unique_ptr<CompiledList>* out);

  // Returns the matches of the post `post` (already normalised), at most one per
  // rule and kind, ordered by rule index then kind.
  std::vector<RuleMatch> Match(const NormalizedText& post) const;

  const RuleList& list() const { return list_; }

 private:
  struct Matchers;
  CompiledList();
  RuleList list_;
  std::unique_ptr<Matchers> matchers_;
};

}  // namespace factlens

#endif  // FACTLENS_MATCH_H_
