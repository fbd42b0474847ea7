// Copyright factlens authors. similar: ranks claims by lexical similarity to a post.
//
// A SimilarIndex holds the claims of one list (each rule's claim, its match.similar
// phrasings and its fact-check title) and ranks them against a post in two stages:
//  1. retrieval: BM25 over four fields of each claim (stemmed words of the claim and
//     its phrasings, stemmed words of the title, word bigrams of the claim, and
//     character 4-grams of the claim's words for misspellings and compounds),
//     summed after scaling each field by the best score the post could reach;
//  2. re-ranking of the best kCandidates by a logistic model over features that do
//     not depend on the list's size (shares of the claim's and the post's weighted
//     words in common, both ways for the best phrasing, bigram share, character-gram
//     cosine, scaled BM25), trained on
//     the CLEF 2020 CheckThat! claim-retrieval training split (wasm/cli/eval.cc
//     --fit prints the weights; they ship as constants in similar.cc).
// The re-ranked score is a probability that the post repeats the claim, so one
// threshold (kDefaultThreshold) means the same on a list of ten claims or of 100k.
// Word weights use the list's document frequencies with the collection size floored
// at kMinCollection, so a small list weighs every content word alike rather than
// trusting frequencies from a handful of claims.
//
// Text goes through Normalize (normalize.h) first, then stop words are dropped and
// words stemmed with Snowball in the languages of the rules (English by default;
// also German, French, Spanish, Italian, Portuguese, Dutch).
#ifndef FACTLENS_SIMILAR_H_
#define FACTLENS_SIMILAR_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "factlens/binary.h"
#include "factlens/normalize.h"

namespace factlens {

// The features of the re-ranker, in the order of SimilarWeights.
inline constexpr int kSimilarFeatureCount = 11;

// Weights of the re-ranker's logistic model: bias first, then one per feature.
using SimilarWeights = std::array<double, kSimilarFeatureCount>;

// Which parts of the ranking are on; all are, by default. Turning parts off is for
// ablation studies (factlens eval --ablation), not for production lists.
struct SimilarOptions {
  bool stemming = true;
  bool stop_words = true;
  bool word_bigrams = true;
  bool char_ngrams = true;
  bool title_field = true;
  bool rerank = true;  // off: rank by the retrieval score, squashed into (0, 1)
  // The re-ranker's weights; empty means the shipped ones (ShippedSimilarWeights).
  std::vector<double> weights;
};

// Returns the weights trained on CLEF 2020 train that ship with factlens.
const SimilarWeights& ShippedSimilarWeights();

// One claim to index: the rule it belongs to, its texts and its language.
struct SimilarDoc {
  uint32_t rule_index = 0;
  std::vector<std::string> phrasings;  // the claim first, then match.similar
  std::string title;                   // the fact-check's title (may be empty)
  std::vector<std::string> languages;  // BCP 47; the first with a stemmer is used
};

struct SimilarHit {
  uint32_t rule_index = 0;
  double score = 0;  // in (0, 1): the re-ranker's probability
  // The features the score came from (for training and explanation).
  std::array<double, kSimilarFeatureCount> features{};
};

class SimilarIndex {
 public:
  ~SimilarIndex();
  SimilarIndex(const SimilarIndex&) = delete;
  SimilarIndex& operator=(const SimilarIndex&) = delete;

  // Returns an index over `docs`. Cost is linear in the total text length.
  static std::unique_ptr<SimilarIndex> Build(const std::vector<SimilarDoc>& docs,
                                             const SimilarOptions& options = {});

  // Returns the at most `k` best claims for the normalised post `post`, best first
  // (ties by rule index), leaving out the rules in `withheld` (sorted rule indices;
  // for evaluation). Only claims sharing at least one word or character gram with
  // the post are returned. Cost is bounded per post: the post's rarest terms find
  // the candidates (see similar.cc), so a long post of common words does not score
  // every claim. With `min_score` above 0.5 (a check passes its threshold), only
  // the hits scoring at least that are returned: exactly those of the search
  // without it, found sooner, since claims whose score is bounded below it are
  // never scored in full, and a post no claim's gate words let through ends before
  // the postings walk (see similar.cc's Impl::Gate; the first such search builds
  // the gate). Not thread-safe: it reuses scratch buffers and a word cache.
  std::vector<SimilarHit> Search(const NormalizedText& post, size_t k,
                                 const std::vector<uint32_t>& withheld = {},
                                 double min_score = 0) const;

  // Returns the byte ranges of `post` (original bytes) whose words are among the
  // content words of rule `rule_index`'s claim, phrasings or title, merged into runs
  // (stop words between two matched words join them).
  std::vector<ByteRange> Spans(const NormalizedText& post, uint32_t rule_index) const;

  size_t size() const;

  // How the gate of a check has ended the searches with a min_score so far: a
  // search the gate applies to either ends there (no claim can reach the score:
  // `ended`) or goes on to the postings walk (`passed`); `over_budget` of those
  // passed went on without a claim tested, as the post's words had more gate
  // postings than the gate reads. For tests and benchmarks.
  struct GateStats {
    uint64_t ended = 0, passed = 0, over_budget = 0;
  };
  GateStats gate_stats() const;
  // Returns true if the gate keeps its promise for every claim at every level: no
  // set of the claim's words holding fewer of its gate words than it needs has word
  // features reaching the level without thin evidence. Checks, per claim and
  // level, the sets a cut must rule out (all words but the gate words, with each
  // gate word in turn) and `random_sets` random ones; for each set also the
  // check's shortcuts (a claim it calls surely thin is thin; its word features
  // with every phrasing taken whole bound them). Builds the gate if a check has
  // not yet. For tests.
  bool VerifyGate(int random_sets = 20) const;
  // Returns, for each claim (rule index, bound), the gate's upper bound on the
  // re-ranker's z for the normalised post `post` in a search with `min_score`:
  // its bound on the features other than f1, f3 and f9 plus the claim's weighted
  // f1, f3 and f9. Empty where the gate does not apply (min_score at most 0.5,
  // the re-ranker off). For tests: the bound must hold for
  // every claim, which a search's exact features show.
  std::vector<std::pair<uint32_t, double>> GateBounds(const NormalizedText& post,
                                                      double min_score) const;

  // Appends the index to `w` (the SIMI section of the compiled form, match.h),
  // with its gate, which it builds if no check has.
  void Serialize(ByteWriter* w) const;
  // Reads an index Serialize wrote into *out. Returns false if the bytes are
  // malformed: every id, count and frequency is checked, and rule indices must be
  // below `rule_count`. Returns true with *out empty if the index is well formed but
  // was built with options other than `options` (the caller rebuilds it).
  static bool Deserialize(ByteReader* r, const SimilarOptions& options, size_t rule_count,
                          std::unique_ptr<SimilarIndex>* out);

  // The default decision threshold on SimilarHit::score: the lowest that keeps the
  // false-match rate on CLEF 2020 train at 2% (posts whose claim is withheld from
  // the list that still match another claim). A wrong match labels a person's post,
  // so the threshold buys precision with recall (0.07 on train at this threshold).
  static constexpr double kDefaultThreshold = 0.98;
  // Candidates re-ranked per post.
  static constexpr size_t kCandidates = 48;
  // Collection size below which document frequencies are not trusted.
  static constexpr double kMinCollection = 2000;

 private:
  void SerializeGate(ByteWriter* w) const;
  struct Impl;
  explicit SimilarIndex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Returns the Snowball stem of the normalised word `word` in the language `language`
// (BCP 47 primary tag: "en", "de", ...); the word itself if no stemmer exists for it.
std::string StemWord(const std::string& word, const std::string& language);

// Returns the sum of the `most` largest of `values` (all of them, if there are
// fewer), or a little more, without reordering `values`: the values of the bucket
// (a 256th of their span of keys, in floats' bits) where the `most` largest end
// count as that bucket's largest. The gate of every check asks it of the post's
// term weights; a bound is what it needs. A selection by buckets of the floats'
// bits, in passes with no branch on a value, where std::nth_element's partitioning
// branches on every comparison of two values (a copy and nth_element were 6.5% of
// a warm check in wasm; this was 3.7%, and half that with each bucket's sum taken
// in its counting pass). Its exact form, the boundary bucket's values selected in
// further rounds: natively 38.0k instructions a bench check at 10k rules, this
// 28.1k, and the gate ended the same posts. Up to 16 of them (a claim's or a
// title's most words), the sum is exact: the largest so far kept in order, where
// the buckets' tables and passes cost more (a warm check at 10k rules natively
// 379.8k -> 374.9k instructions, its generated code in Node 542.8k -> 532.7k).
double LargestSumBound(const std::vector<float>& values, size_t most);

// Returns true if `word` (normalised) is a stop word of `language` (BCP 47). Stop
// words are per language: "war" is a function word in German, not in English.
bool IsStopWord(const std::string& word, const std::string& language);

}  // namespace factlens

#endif  // FACTLENS_SIMILAR_H_
