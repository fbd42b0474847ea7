// Copyright factlens authors. stance: does a post repeat a claim, or debunk it?
//
// A label describes the claim, never the person; still, a post that corrects a claim
// must not be demoted as if it spread it. The stance is read from evidence in the
// text around where the claim was matched (within kStanceWindow words of it):
//  - refutation cues: "false", "fake", "hoax", "debunked", "fact check", "myth" and
//    their German, French and Spanish counterparts, unless the rule's own words
//    use them ("the Holocaust is a hoax" repeats the claim that it did not happen);
//  - negation the claim lacks, inside or right next to the matched words: "5G does
//    not spread the virus" against the claim "5G spreads the virus" (negations in
//    the claim itself are counted out);
//  - links to fact-check sites, or to the rule's own fact-check;
//  - a negated cue affirms: "this is not fake" repeats the claim;
//  - sarcasm ("yeah right", "/s", an eye roll), a question, or a quotation without
//    any cue leave the stance unclear.
// Far-away negation (another part of the post) does not count.
#ifndef FACTLENS_STANCE_H_
#define FACTLENS_STANCE_H_

#include <string_view>
#include <vector>

#include "factlens/list.h"
#include "factlens/normalize.h"

namespace factlens {

enum class Stance { kRepeats, kDebunks, kUnclear };
inline constexpr int kStanceCount = 3;

// Returns "repeats", "debunks" or "unclear".
const char* StanceName(Stance stance);
// Returns true and sets *out if `name` is a stance's name.
bool ParseStance(std::string_view name, Stance* out);

// Words on either side of the matched words that are searched for refutation cues,
// and (kNegationReach) for negations the claim lacks.
inline constexpr int kStanceWindow = 8;
inline constexpr int kNegationReach = 2;

// Reads the stance of one post towards each rule it matched. What does not depend
// on the rule (the post's words and where they came from, its sarcasm, read over
// the whole post) is read once, when it is made, not once per match: a post
// matching many rules costs one pass over its words, then a window per match.
class StanceReader {
 public:
  // `original` (UTF-8) and `post` (Normalize(original)) must outlive the reader.
  StanceReader(std::string_view original, const NormalizedText& post);
  // Returns the stance of the post towards `rule`, whose match covers the
  // original byte ranges `spans` (empty: the whole post).
  Stance Of(const std::vector<ByteRange>& spans, const Rule& rule) const;

 private:
  std::string_view original_;
  const NormalizedText& post_;
  std::vector<std::string_view> words_;  // post.words' text
  std::vector<ByteRange> word_origins_;  // their original byte ranges
  int sarcasm_ = 0;                      // cues and markers in the whole post
};

// Returns StanceReader(original, post).Of(spans, rule).
Stance DetectStance(std::string_view original, const NormalizedText& post,
                    const std::vector<ByteRange>& spans, const Rule& rule);

}  // namespace factlens

#endif  // FACTLENS_STANCE_H_
