// Copyright factlens authors.
//
// Layout: one dictionary per kind of term (stemmed words, word bigrams, character
// 4-grams), postings per field, and per claim the term ids the re-ranker's features
// need. Search scores every claim that shares a term with the post through the
// postings (no scan of the whole list), then re-ranks the best kCandidates.
#include "factlens/similar.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "runtime/api.h"
#include "src_c/stem_UTF_8_dutch.h"
#include "src_c/stem_UTF_8_english.h"
#include "src_c/stem_UTF_8_french.h"
#include "src_c/stem_UTF_8_german.h"
#include "src_c/stem_UTF_8_italian.h"
#include "src_c/stem_UTF_8_portuguese.h"
#include "src_c/stem_UTF_8_spanish.h"

namespace factlens {
namespace {

// ---- the shipped re-ranker --------------------------------------------------------
// Trained on CLEF 2020 train (800 tweets, 48 candidates each) by
// `factlens eval --fit` (logistic regression, L2); dev was not used.
constexpr SimilarWeights kShippedWeights = {
    -8.3351, 1.8950, 1.4743, 3.3435, 4.1269, -3.8177,
    7.4868,  2.3138, 2.3443, 3.4808, 1.3832,
};

// ---- stemming ---------------------------------------------------------------------
struct StemmerDef {
  const char* language;
  SN_env* (*create)();
  void (*close)(SN_env*);
  int (*stem)(SN_env*);
};

const StemmerDef kStemmers[] = {
    {"en", english_UTF_8_create_env, english_UTF_8_close_env, english_UTF_8_stem},
    {"de", german_UTF_8_create_env, german_UTF_8_close_env, german_UTF_8_stem},
    {"fr", french_UTF_8_create_env, french_UTF_8_close_env, french_UTF_8_stem},
    {"es", spanish_UTF_8_create_env, spanish_UTF_8_close_env, spanish_UTF_8_stem},
    {"it", italian_UTF_8_create_env, italian_UTF_8_close_env, italian_UTF_8_stem},
    {"pt", portuguese_UTF_8_create_env, portuguese_UTF_8_close_env,
     portuguese_UTF_8_stem},
    {"nl", dutch_UTF_8_create_env, dutch_UTF_8_close_env, dutch_UTF_8_stem},
};
constexpr int kStemmerCount = sizeof(kStemmers) / sizeof(kStemmers[0]);

// Returns the index into kStemmers for a BCP 47 tag, or -1.
int StemmerFor(std::string_view tag) {
  std::string primary;
  for (char c : tag.substr(0, tag.find('-'))) {
    primary += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  }
  for (int i = 0; i < kStemmerCount; ++i) {
    if (primary == kStemmers[i].language) return i;
  }
  return -1;
}

// Snowball environments, one per language, created on first use.
class Stemmers {
 public:
  Stemmers() { envs_.fill(nullptr); }
  ~Stemmers() {
    for (int i = 0; i < kStemmerCount; ++i) {
      if (envs_[i] != nullptr) kStemmers[i].close(envs_[i]);
    }
  }
  Stemmers(const Stemmers&) = delete;
  Stemmers& operator=(const Stemmers&) = delete;

  std::string Stem(int language, const std::string& word) {
    if (language < 0) return word;
    SN_env*& env = envs_[language];
    if (env == nullptr) env = kStemmers[language].create();
    if (env == nullptr) return word;  // out of memory: unstemmed is still correct
    if (SN_set_current(env, static_cast<int>(word.size()),
                       reinterpret_cast<const symbol*>(word.data())) != 0) {
      return word;
    }
    if (kStemmers[language].stem(env) < 0) return word;
    return std::string(reinterpret_cast<const char*>(env->p), env->l);
  }

 private:
  std::array<SN_env*, kStemmerCount> envs_;
};

// ---- stop words -------------------------------------------------------------------
// Function words, in normalised form (apostrophes become spaces: "don't" -> "don t").
// Negations are stop words here; stance.h is where they count.
const char* const kStopEnglish[] = {
    "a",          "about",   "above",      "after",   "again",     "against", "all",
    "am",         "an",      "and",        "any",     "are",       "as",      "at",
    "be",         "because", "been",       "before",  "being",     "below",   "between",
    "both",       "but",     "by",         "can",     "could",     "d",       "did",
    "do",         "does",    "doing",      "don",     "down",      "during",  "each",
    "few",        "for",     "from",       "further", "had",       "has",     "have",
    "having",     "he",      "her",        "here",    "hers",      "herself", "him",
    "himself",    "his",     "how",        "i",       "if",        "in",      "into",
    "is",         "it",      "its",        "itself",  "just",      "ll",      "m",
    "me",         "more",    "most",       "my",      "myself",    "no",      "nor",
    "not",        "now",     "of",         "off",     "on",        "once",    "only",
    "or",         "other",   "our",        "ours",    "ourselves", "out",     "over",
    "own",        "re",      "s",          "same",    "she",       "should",  "so",
    "some",       "such",    "t",          "than",    "that",      "the",     "their",
    "theirs",     "them",    "themselves", "then",    "there",     "these",   "they",
    "this",       "those",   "through",    "to",      "too",       "under",   "until",
    "up",         "ve",      "very",       "was",     "we",        "were",    "what",
    "when",       "where",   "which",      "while",   "who",       "whom",    "why",
    "will",       "with",    "would",      "you",     "your",      "yours",   "yourself",
    "yourselves", "rt",      "via",        "amp",     "says",      "said",
};
const char* const kStopGerman[] = {
    "aber",  "alle", "als",   "also",  "am",    "an",  "auch", "auf",   "aus",
    "bei",   "bin",  "bis",   "das",   "dass",  "dem", "den",  "der",   "des",
    "die",   "dies", "diese", "du",    "durch", "ein", "eine", "einem", "einen",
    "einer", "er",   "es",    "fur",   "hat",   "ich", "ihr",  "im",    "in",
    "ist",   "mit",  "nach",  "nicht", "noch",  "nur", "oder", "sich",  "sie",
    "sind",  "so",   "uber",  "um",    "und",   "uns", "von",  "vor",   "war",
    "was",   "wie",  "wir",   "wird",  "zu",    "zum", "zur",
};
const char* const kStopFrench[] = {
    "au",   "aux",  "avec", "ce",  "ces",  "dans", "de",   "des", "du",   "elle", "en",
    "est",  "et",   "il",   "ils", "je",   "la",   "le",   "les", "leur", "lui",  "ma",
    "mais", "me",   "mes",  "ne",  "nous", "on",   "ou",   "par", "pas",  "pour", "qu",
    "que",  "qui",  "sa",   "se",  "ses",  "son",  "sont", "sur", "ta",   "te",   "un",
    "une",  "vous", "l",    "d",   "c",    "j",    "n",    "s",
};
const char* const kStopSpanish[] = {
    "a",    "al",  "como", "con", "de", "del", "el",  "en",  "es", "esta",
    "este", "ha",  "la",   "las", "lo", "los", "mas", "no",  "o",  "para",
    "pero", "por", "que",  "se",  "su", "sus", "un",  "una", "y",  "ya",
};

struct StopList {
  const char* language;
  const char* const* words;
  size_t count;
};
const StopList kStopLists[] = {
    {"en", kStopEnglish, sizeof(kStopEnglish) / sizeof(char*)},
    {"de", kStopGerman, sizeof(kStopGerman) / sizeof(char*)},
    {"fr", kStopFrench, sizeof(kStopFrench) / sizeof(char*)},
    {"es", kStopSpanish, sizeof(kStopSpanish) / sizeof(char*)},
};

// Returns the stop words of the languages `stemmers` (indices into kStemmers).
std::unordered_set<std::string> StopWordsFor(const std::vector<int>& stemmers) {
  std::unordered_set<std::string> out;
  for (int s : stemmers) {
    for (const StopList& list : kStopLists) {
      if (s >= 0 && std::string_view(list.language) == kStemmers[s].language) {
        out.insert(list.words, list.words + list.count);
      }
    }
  }
  return out;
}

// ---- tokens -----------------------------------------------------------------------
constexpr double kK1 = 1.2;
constexpr double kB = 0.75;
constexpr int kCharGram = 4;
constexpr double kMinSharedWords = 3;
// First-stage weight of each field's scaled BM25.
constexpr double kFieldWeight[] = {1.0, 0.5, 0.5, 0.5};
enum Field { kClaimField, kTitleField, kBigramField, kCharField, kFieldCount };

struct Posting {
  uint32_t doc;
  float tf;
};

// A content word of a text: its normalised form and position.
struct Word {
  std::string text;
  uint32_t index;  // into NormalizedText::words
};

bool IsUrlWord(std::string_view w) {
  return w.find('/') != std::string_view::npos || w.find('.') != std::string_view::npos;
}

// Returns the character 4-grams of `word` with '^' and '$' marking its ends ("^5g$"
// for short words), so that misspelt and compound words share most of their grams.
void CharGrams(const std::string& word, std::vector<std::string>* out) {
  std::string padded = "^" + word + "$";
  // Grams over code points, not bytes, so that non-Latin words are not split inside
  // a character.
  std::vector<size_t> starts;
  for (size_t i = 0; i < padded.size(); ++i) {
    if ((static_cast<unsigned char>(padded[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  starts.push_back(padded.size());
  const size_t n = starts.size() - 1;
  if (n <= kCharGram) {
    out->push_back(padded);
    return;
  }
  for (size_t i = 0; i + kCharGram <= n; ++i) {
    out->push_back(padded.substr(starts[i], starts[i + kCharGram] - starts[i]));
  }
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// A term dictionary: key -> dense id.
template <typename Key>
class Dictionary {
 public:
  uint32_t Add(const Key& term) {
    auto it = ids_.find(term);  // most terms repeat: look before allocating a node
    if (it != ids_.end()) return it->second;
    uint32_t id = static_cast<uint32_t>(ids_.size());
    ids_.emplace(term, id);
    return id;
  }
  // Returns the id of `term`, or UINT32_MAX.
  uint32_t Find(const Key& term) const {
    auto it = ids_.find(term);
    return it == ids_.end() ? UINT32_MAX : it->second;
  }
  size_t size() const { return ids_.size(); }

 private:
  std::unordered_map<Key, uint32_t> ids_;
};

// Bigrams are keyed by their two word ids, character grams by a 64-bit FNV-1a hash
// of their bytes (no two of a list's few hundred thousand grams collide in practice,
// and a collision would only merge two grams' statistics).
uint64_t BigramKey(uint32_t first, uint32_t second) {
  return (static_cast<uint64_t>(first) << 32) | second;
}

uint64_t GramKey(const std::string& gram) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : gram) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

const SimilarWeights& ShippedSimilarWeights() { return kShippedWeights; }

struct SimilarIndex::Impl {
  SimilarOptions options;
  SimilarWeights weights;
  std::vector<int> stemmers;  // languages of the list, indices into kStemmers
  std::unordered_set<std::string> stop_words;
  mutable Stemmers stem_envs;

  Dictionary<std::string> words;
  Dictionary<uint64_t> bigrams, chars;
  // Postings per field, indexed by the field's dictionary id.
  std::vector<std::vector<Posting>> postings[kFieldCount];
  std::vector<float> doc_length[kFieldCount];
  double average_length[kFieldCount] = {1, 1, 1, 1};

  struct Doc {
    uint32_t rule_index;
    int stemmer;
    std::vector<std::vector<uint32_t>> phrasings;  // unique word ids per phrasing
    std::vector<uint32_t> claim_words;             // union of the phrasings'
    std::vector<uint32_t> title_words;
    std::vector<uint32_t> bigram_ids;
    std::vector<std::pair<uint32_t, float>> char_tf;
    double char_norm = 0;
  };
  std::vector<Doc> docs;

  // Scratch for Search (the engine is single-threaded).
  mutable std::vector<float> field_score[kFieldCount];
  mutable std::vector<uint32_t> touched;
  mutable std::vector<uint32_t> word_mark, bigram_mark;  // == stamp: in the post
  mutable std::vector<float> char_weight;                // post's weight, by stamp
  mutable std::vector<uint32_t> char_mark;
  mutable uint32_t stamp = 0;

  double Collection() const {
    return std::max(static_cast<double>(docs.size()), SimilarIndex::kMinCollection);
  }
  double Idf(Field f, uint32_t id) const {
    double df = id == UINT32_MAX || id >= postings[f].size()
                    ? 0
                    : static_cast<double>(postings[f][id].size());
    return std::log(1 + (Collection() - df + 0.5) / (df + 0.5));
  }

  // Returns the content words of `text` (normalised).
  std::vector<Word> ContentWords(const NormalizedText& text) const {
    std::vector<Word> out;
    for (uint32_t i = 0; i < text.words.size(); ++i) {
      const ByteRange& r = text.words[i];
      std::string w = text.text.substr(r.begin, r.end - r.begin);
      if (IsUrlWord(w)) continue;
      if (options.stop_words && stop_words.count(w)) continue;
      out.push_back({std::move(w), i});
    }
    return out;
  }

  std::string Stem(int stemmer, const std::string& word) const {
    return options.stemming ? stem_envs.Stem(stemmer, word) : word;
  }
};

SimilarIndex::SimilarIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SimilarIndex::~SimilarIndex() = default;
size_t SimilarIndex::size() const { return impl_->docs.size(); }

std::unique_ptr<SimilarIndex> SimilarIndex::Build(const std::vector<SimilarDoc>& docs,
                                                  const SimilarOptions& options) {
  auto impl = std::make_unique<Impl>();
  Impl& x = *impl;
  x.options = options;
  x.weights = kShippedWeights;
  if (options.weights.size() == kSimilarFeatureCount) {
    std::copy(options.weights.begin(), options.weights.end(), x.weights.begin());
  }
  // Each claim is stemmed in its first language with a stemmer (English if none);
  // posts are stemmed in every language the list uses.
  std::vector<int> doc_stemmer;
  for (const SimilarDoc& d : docs) {
    int s = -1;
    for (const std::string& tag : d.languages) {
      if ((s = StemmerFor(tag)) >= 0) break;
    }
    if (s < 0) s = 0;
    doc_stemmer.push_back(s);
    if (std::find(x.stemmers.begin(), x.stemmers.end(), s) == x.stemmers.end())
      x.stemmers.push_back(s);
  }
  if (x.stemmers.empty()) x.stemmers.push_back(0);
  x.stop_words = StopWordsFor(x.stemmers);

  auto add_posting = [&](Field f, uint32_t id, uint32_t doc) {
    auto& p = x.postings[f];
    if (p.size() <= id) p.resize(id + 1);
    if (!p[id].empty() && p[id].back().doc == doc) {
      p[id].back().tf += 1;
    } else {
      p[id].push_back({doc, 1});
    }
  };
  auto unique = [](std::vector<uint32_t> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };

  // Per distinct (word, language): its stem's id and its character grams' ids.
  // Words repeat across claims, so stemming and gram hashing happen once each.
  struct WordTerms {
    uint32_t id;
    std::vector<uint32_t> grams;
  };
  std::unordered_map<std::string, WordTerms> word_cache;
  std::vector<std::string> grams;
  auto terms_of = [&](const std::string& word, int stemmer) -> const WordTerms& {
    std::string key = word;
    key += '\x01';
    key += static_cast<char>('0' + stemmer);
    auto it = word_cache.find(key);
    if (it != word_cache.end()) return it->second;
    WordTerms t{x.words.Add(x.Stem(stemmer, word)), {}};
    if (options.char_ngrams) {
      grams.clear();
      CharGrams(word, &grams);
      for (const std::string& g : grams) t.grams.push_back(x.chars.Add(GramKey(g)));
    }
    return word_cache.emplace(std::move(key), std::move(t)).first->second;
  };

  x.docs.reserve(docs.size());
  for (uint32_t d = 0; d < docs.size(); ++d) {
    Impl::Doc doc;
    doc.rule_index = docs[d].rule_index;
    doc.stemmer = doc_stemmer[d];
    float length[kFieldCount] = {0, 0, 0, 0};
    std::unordered_map<uint32_t, float> char_tf;
    for (const std::string& phrasing : docs[d].phrasings) {
      std::vector<Word> content = x.ContentWords(Normalize(phrasing));
      std::vector<uint32_t> ids;
      uint32_t previous = UINT32_MAX;
      for (const Word& w : content) {
        const WordTerms& terms = terms_of(w.text, doc.stemmer);
        const uint32_t id = terms.id;
        ids.push_back(id);
        add_posting(kClaimField, id, d);
        ++length[kClaimField];
        if (options.word_bigrams && previous != UINT32_MAX) {
          uint32_t b = x.bigrams.Add(BigramKey(previous, id));
          doc.bigram_ids.push_back(b);
          add_posting(kBigramField, b, d);
          ++length[kBigramField];
        }
        previous = id;
        for (uint32_t c : terms.grams) {
          add_posting(kCharField, c, d);
          char_tf[c] += 1;
          ++length[kCharField];
        }
      }
      doc.phrasings.push_back(unique(ids));
      doc.claim_words.insert(doc.claim_words.end(), ids.begin(), ids.end());
    }
    doc.claim_words = unique(doc.claim_words);
    doc.bigram_ids = unique(doc.bigram_ids);
    if (options.title_field && !docs[d].title.empty()) {
      for (const Word& w : x.ContentWords(Normalize(docs[d].title))) {
        uint32_t id = terms_of(w.text, doc.stemmer).id;
        doc.title_words.push_back(id);
        add_posting(kTitleField, id, d);
        ++length[kTitleField];
      }
      doc.title_words = unique(doc.title_words);
    }
    doc.char_tf.assign(char_tf.begin(), char_tf.end());
    std::sort(doc.char_tf.begin(), doc.char_tf.end());
    for (int f = 0; f < kFieldCount; ++f) x.doc_length[f].push_back(length[f]);
    x.docs.push_back(std::move(doc));
  }
  for (int f = 0; f < kFieldCount; ++f) {
    x.postings[f].resize(f == kBigramField ? x.bigrams.size()
                         : f == kCharField ? x.chars.size()
                                           : x.words.size());
    double total = 0;
    for (float l : x.doc_length[f]) total += l;
    x.average_length[f] = docs.empty() || total == 0 ? 1 : total / docs.size();
    x.field_score[f].assign(docs.size(), 0);
  }
  // Character-gram vector norms need the idf, so they come after all postings.
  for (Impl::Doc& doc : x.docs) {
    double norm = 0;
    for (auto& [id, tf] : doc.char_tf) {
      double w = tf * x.Idf(kCharField, id);
      norm += w * w;
    }
    doc.char_norm = std::sqrt(norm);
  }
  x.word_mark.assign(x.words.size(), 0);
  x.bigram_mark.assign(x.bigrams.size(), 0);
  x.char_mark.assign(x.chars.size(), 0);
  x.char_weight.assign(x.chars.size(), 0);
  return std::unique_ptr<SimilarIndex>(new SimilarIndex(std::move(impl)));
}

std::vector<SimilarHit> SimilarIndex::Search(
    const NormalizedText& post, size_t k, const std::vector<uint32_t>& withheld) const {
  const Impl& x = *impl_;
  std::vector<SimilarHit> hits;
  if (k == 0 || x.docs.empty()) return hits;
  if (++x.stamp == 0) {  // wrapped: clear the marks once every 4 billion searches
    std::fill(x.word_mark.begin(), x.word_mark.end(), 0);
    std::fill(x.bigram_mark.begin(), x.bigram_mark.end(), 0);
    std::fill(x.char_mark.begin(), x.char_mark.end(), 0);
    x.stamp = 1;
  }
  const uint32_t stamp = x.stamp;

  // The post's terms: stemmed words (in each language of the list), bigrams of
  // consecutive content words, character grams. Unknown terms still count in the
  // post's total weight (they are what the claim does not cover).
  std::unordered_map<uint32_t, float> word_tf, bigram_tf, char_tf;
  double post_word_weight = 0;
  std::unordered_set<std::string> seen_unknown;
  std::vector<Word> content = x.ContentWords(post);
  for (int s : x.stemmers) {
    uint32_t previous = UINT32_MAX;
    for (const Word& w : content) {
      std::string stem = x.Stem(s, w.text);
      uint32_t id = x.words.Find(stem);
      if (id != UINT32_MAX) {
        if (word_tf.find(id) == word_tf.end()) post_word_weight += x.Idf(kClaimField, id);
        word_tf[id] += 1;
        x.word_mark[id] = stamp;
      } else if (seen_unknown.insert(stem).second) {
        post_word_weight += x.Idf(kClaimField, UINT32_MAX);
      }
      if (x.options.word_bigrams && previous != UINT32_MAX && id != UINT32_MAX) {
        uint32_t b = x.bigrams.Find(BigramKey(previous, id));
        if (b != UINT32_MAX) {
          bigram_tf[b] += 1;
          x.bigram_mark[b] = stamp;
        }
      }
      previous = id;
    }
  }
  if (x.options.char_ngrams) {
    std::vector<std::string> grams;
    for (const Word& w : content) CharGrams(w.text, &grams);
    for (const std::string& g : grams) {
      uint32_t c = x.chars.Find(GramKey(g));
      if (c != UINT32_MAX) char_tf[c] += 1;
    }
  }
  double char_norm = 0;
  for (auto& [c, tf] : char_tf) {
    double w = tf * x.Idf(kCharField, c);
    x.char_weight[c] = static_cast<float>(w);
    x.char_mark[c] = stamp;
    char_norm += w * w;
  }
  char_norm = std::sqrt(char_norm);

  // Stage 1: BM25 per field through the postings; each field scaled by the most
  // the post could score in it, so fields and posts of any length are comparable.
  for (uint32_t d : x.touched) {
    for (int f = 0; f < kFieldCount; ++f) x.field_score[f][d] = 0;
  }
  x.touched.clear();
  double field_max[kFieldCount] = {0, 0, 0, 0};
  auto accumulate = [&](Field f, const std::unordered_map<uint32_t, float>& terms) {
    for (const auto& [id, qtf] : terms) {
      const std::vector<Posting>& list = x.postings[f][id];
      if (list.empty()) continue;
      double idf = x.Idf(f, id);
      // A gram or word in over a tenth of the claims says little and costs a lot.
      if (f == kCharField && list.size() * 10 > x.docs.size() && x.docs.size() > 50) {
        continue;
      }
      double q = std::min(qtf, 3.0f);  // a word repeated in a post adds little
      field_max[f] += q * idf * (kK1 + 1);
      for (const Posting& p : list) {
        float& score = x.field_score[f][p.doc];
        bool fresh = true;
        for (int g = 0; g < kFieldCount && fresh; ++g)
          fresh = x.field_score[g][p.doc] == 0;
        if (fresh) x.touched.push_back(p.doc);
        double norm = kK1 * (1 - kB + kB * x.doc_length[f][p.doc] / x.average_length[f]);
        score += static_cast<float>(q * idf * p.tf * (kK1 + 1) / (p.tf + norm));
      }
    }
  };
  accumulate(kClaimField, word_tf);
  if (x.options.title_field) accumulate(kTitleField, word_tf);
  if (x.options.word_bigrams) accumulate(kBigramField, bigram_tf);
  if (x.options.char_ngrams) accumulate(kCharField, char_tf);

  struct Candidate {
    uint32_t doc;
    double first;
  };
  std::vector<Candidate> candidates;
  candidates.reserve(x.touched.size());
  double weight_sum = 0;
  for (int f = 0; f < kFieldCount; ++f) {
    if (field_max[f] > 0) weight_sum += kFieldWeight[f];
  }
  for (uint32_t d : x.touched) {
    if (std::binary_search(withheld.begin(), withheld.end(), x.docs[d].rule_index))
      continue;
    double s = 0;
    for (int f = 0; f < kFieldCount; ++f) {
      if (field_max[f] > 0) s += kFieldWeight[f] * x.field_score[f][d] / field_max[f];
    }
    candidates.push_back({d, weight_sum > 0 ? s / weight_sum : 0});
  }
  auto by_first = [&](const Candidate& a, const Candidate& b) {
    if (a.first != b.first) return a.first > b.first;
    return x.docs[a.doc].rule_index < x.docs[b.doc].rule_index;
  };
  size_t keep = std::min(candidates.size(), std::max(k, kCandidates));
  std::partial_sort(candidates.begin(), candidates.begin() + keep, candidates.end(),
                    by_first);
  candidates.resize(keep);

  // Stage 2: features and the logistic re-ranker.
  auto covered = [&](const std::vector<uint32_t>& ids, double* part, double* all) {
    *part = 0;
    *all = 0;
    for (uint32_t id : ids) {
      double idf = x.Idf(kClaimField, id);
      *all += idf;
      if (x.word_mark[id] == stamp) *part += idf;
    }
  };
  for (const Candidate& c : candidates) {
    const Impl::Doc& doc = x.docs[c.doc];
    SimilarHit hit;
    hit.rule_index = doc.rule_index;
    auto& f = hit.features;
    f[0] = 1;
    double part, all;
    for (const auto& phrasing : doc.phrasings) {
      covered(phrasing, &part, &all);
      if (all > 0) f[1] = std::max(f[1], part / all);
      // Both ways at once: the post says this phrasing and little else.
      if (all > 0 && post_word_weight > 0) {
        f[10] = std::max(f[10], std::min(part / all, part / post_word_weight));
      }
    }
    covered(doc.claim_words, &part, &all);
    f[2] = post_word_weight > 0 ? part / post_word_weight : 0;
    double shared = 0;
    for (uint32_t id : doc.claim_words) shared += x.word_mark[id] == stamp;
    covered(doc.title_words, &part, &all);
    f[3] = all > 0 ? part / all : 0;
    f[4] = post_word_weight > 0 ? part / post_word_weight : 0;
    if (!doc.bigram_ids.empty()) {
      double b_part = 0, b_all = 0;
      for (uint32_t b : doc.bigram_ids) {
        double idf = x.Idf(kBigramField, b);
        b_all += idf;
        if (x.bigram_mark[b] == stamp) b_part += idf;
      }
      f[5] = b_all > 0 ? b_part / b_all : 0;
    }
    if (char_norm > 0 && doc.char_norm > 0) {
      double dot = 0;
      for (const auto& [id, tf] : doc.char_tf) {
        if (x.char_mark[id] == stamp)
          dot += tf * x.Idf(kCharField, id) * x.char_weight[id];
      }
      f[6] = dot / (char_norm * doc.char_norm);
    }
    f[7] = field_max[kClaimField] > 0
               ? x.field_score[kClaimField][c.doc] / field_max[kClaimField]
               : 0;
    f[8] = field_max[kTitleField] > 0
               ? x.field_score[kTitleField][c.doc] / field_max[kTitleField]
               : 0;
    f[9] = std::min(shared, 10.0) / 10;
    // A claim without a fact-check title is its own title: the model learnt from
    // claims that all have one, and a missing title is no evidence against a match.
    if (doc.title_words.empty()) {
      covered(doc.claim_words, &part, &all);
      f[3] = all > 0 ? part / all : 0;
      f[4] = f[2];
      f[8] = f[7];
    }
    if (x.options.rerank) {
      double z = 0;
      for (int i = 0; i < kSimilarFeatureCount; ++i) z += x.weights[i] * f[i];
      hit.score = Sigmoid(z);
      // Thin evidence: fewer than kMinSharedWords words in common and no phrasing
      // said in full. Tweets taught the model; short posts sharing two words
      // with a claim ("my children love school") were not among them.
      if (shared < kMinSharedWords && f[1] < 1) hit.score = std::min(hit.score, 0.5);
    } else {
      hit.score = std::min(std::max(c.first, 1e-6), 1.0);
    }
    hits.push_back(hit);
  }
  std::sort(hits.begin(), hits.end(), [](const SimilarHit& a, const SimilarHit& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.rule_index < b.rule_index;
  });
  if (hits.size() > k) hits.resize(k);
  return hits;
}

std::vector<ByteRange> SimilarIndex::Spans(const NormalizedText& post,
                                           uint32_t rule_index) const {
  const Impl& x = *impl_;
  std::vector<ByteRange> out;
  auto it = std::find_if(x.docs.begin(), x.docs.end(),
                         [&](const Impl::Doc& d) { return d.rule_index == rule_index; });
  if (it == x.docs.end()) return out;
  std::vector<uint32_t> vocabulary = it->claim_words;
  vocabulary.insert(vocabulary.end(), it->title_words.begin(), it->title_words.end());
  std::sort(vocabulary.begin(), vocabulary.end());
  // Runs of matched words; stop words inside a run keep it going.
  int64_t run_first = -1, run_last = -1;
  auto flush = [&]() {
    if (run_first < 0) return;
    out.push_back(
        post.OriginalRange(post.words[run_first].begin, post.words[run_last].end));
    run_first = run_last = -1;
  };
  std::vector<Word> content = x.ContentWords(post);
  size_t next_content = 0;
  for (uint32_t i = 0; i < post.words.size(); ++i) {
    bool is_content = next_content < content.size() && content[next_content].index == i;
    if (!is_content) continue;  // a stop word or URL: neither starts nor ends a run
    const Word& w = content[next_content++];
    uint32_t id = x.words.Find(x.Stem(it->stemmer, w.text));
    bool matched =
        id != UINT32_MAX && std::binary_search(vocabulary.begin(), vocabulary.end(), id);
    if (matched) {
      if (run_first < 0) run_first = i;
      run_last = i;
    } else {
      flush();
    }
  }
  flush();
  return out;
}

std::string StemWord(const std::string& word, const std::string& language) {
  Stemmers stemmers;
  return stemmers.Stem(StemmerFor(language), word);
}

bool IsStopWord(const std::string& word, const std::string& language) {
  int s = StemmerFor(language);
  return s >= 0 && StopWordsFor({s}).count(word) > 0;
}

}  // namespace factlens
