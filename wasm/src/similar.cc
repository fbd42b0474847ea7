// Copyright factlens authors.
//
// Layout: one dictionary per kind of term (stems and character 4-grams in
// open-addressing maps from 64-bit keys to dense ids; word bigrams by first word,
// BigramDictionary, with a Bloom filter in front); postings per field in one array
// each; one idf table by document frequency; every claim's (term, frequency) lists
// per field in one array (4 bytes a term, IdCount) and its words in one run; and
// per claim one 32-byte DocState, what the postings walk touches.
// Search
//  1. looks up each word of the post in a cache of the words already seen (their
//     stems and grams: posts repeat words), every word's key first;
//  2. walks the postings of the post's terms, rarest first, within kPostingBudget
//     (a tweet's terms all fit; a long post of common words stops there instead of
//     touching every claim of a large list), summing the part of each claim's
//     first-stage score those terms give;
//  3. selects the best few of those; with a minimum score (a check), bounds what
//     each could score after re-ranking and stops if none can reach it (most posts
//     stop here);
//  4. scores them exactly from the claim's side (every term the post shares with
//     it), keeps the best kCandidates and re-ranks them.
// On CLEF 2020 the budget changes no dev ranking's MAP@5 by more than 0.001.
#include "factlens/similar.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "factlens/hash.h"
#include "factlens/runs.h"
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
// The most a claim with thin evidence may score (Search's re-ranker).
constexpr double kThinEvidenceScore = 0.5;
// First-stage weight of each field's scaled BM25.
constexpr double kFieldWeight[] = {1.0, 0.5, 0.5, 0.5};
enum Field { kClaimField, kTitleField, kBigramField, kCharField, kFieldCount };

// A term's or a claim's id with a whole-number frequency, in 4 bytes. The index
// keeps millions of these (100k rules: 1.1M character grams by claim and as many
// postings by gram); at 8 bytes each they were a third of a restored list's
// memory, and every byte of that a first write (a page fault) in a fresh module.
// The id takes the low kIdBits bits: terms past kMaxIds of a kind, and claims past
// kMaxIds, are left out of the index (Build; Deserialize refuses them). The count
// takes the high 8 bits: a term counts at most kMaxCount times in a claim (only a
// claim that is one word said over and over comes near: no claim of the bench's
// lists or of CLEF 2020's has a count above a few dozen).
constexpr uint32_t kIdBits = 24;
constexpr uint32_t kMaxIds = 1u << kIdBits;  // ids are below this
constexpr uint32_t kMaxCount = 255;
struct IdCount {
  uint32_t bits = 0;
  IdCount() = default;
  IdCount(uint32_t id, uint32_t count)
      : bits(id | std::min(count, kMaxCount) << kIdBits) {}
  uint32_t id() const { return bits & (kMaxIds - 1); }
  uint32_t count() const { return bits >> kIdBits; }
  float tf() const { return static_cast<float>(count()); }
  void AddOne() {
    if (count() < kMaxCount) bits += 1u << kIdBits;
  }
};
static_assert(sizeof(IdCount) == 4, "a term or posting is 4 bytes");
// A term of a claim: its id and frequency in the claim.
using TermFreq = IdCount;
// A posting of a term: the claim's id (its index in docs) and the term's frequency.
using Posting = IdCount;

// A claim's terms in one field: a run of Impl::doc_terms.
struct TermRange {
  const TermFreq* first;
  const TermFreq* last;
  const TermFreq* begin() const { return first; }
  const TermFreq* end() const { return last; }
  size_t size() const { return static_cast<size_t>(last - first); }
  bool empty() const { return first == last; }
};

bool IsUrlWord(std::string_view w) {
  return w.find('/') != std::string_view::npos || w.find('.') != std::string_view::npos;
}

// Returns the 64-bit FNV-1a hash of `bytes`: the key of a stem or character gram.
// No two of a list's few hundred thousand terms collide in practice, and a collision
// would only merge two terms' statistics.
uint64_t HashBytes(std::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Appends the keys of the character 4-grams of `word`, with '^' and '$' marking its
// ends ("^5g$" for short words), so that misspelt and compound words share most of
// their grams. Grams are over code points, not bytes, so that non-Latin words are not
// split inside a character.
void CharGramKeys(std::string_view word, std::vector<uint64_t>* out) {
  std::string padded;
  padded.reserve(word.size() + 2);
  padded += '^';
  padded += word;
  padded += '$';
  uint32_t starts[kCharGram + 1];  // ring of the last code point starts
  size_t count = 0;
  auto gram = [&](size_t end) {
    const size_t begin = starts[(count - kCharGram) % (kCharGram + 1)];
    out->push_back(HashBytes(std::string_view(padded).substr(begin, end - begin)));
  };
  for (size_t i = 0; i <= padded.size(); ++i) {
    const bool start =
        i == padded.size() || (static_cast<unsigned char>(padded[i]) & 0xC0) != 0x80;
    if (!start) continue;
    if (count >= kCharGram) gram(i);
    if (i < padded.size()) starts[count++ % (kCharGram + 1)] = static_cast<uint32_t>(i);
  }
  if (count < kCharGram) out->push_back(HashBytes(padded));  // short: one gram
}

// Bigrams are keyed by their two word ids.
uint64_t BigramKey(uint32_t first, uint32_t second) {
  return (static_cast<uint64_t>(first) << 32) | second;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

constexpr uint32_t kNone = UINT32_MAX;

// A term dictionary from 64-bit keys to dense ids, by open addressing: a long post
// makes a thousand lookups, and std::unordered_map's node per entry costs a cache
// miss each and an allocation per term at build time. A slot holds its key and id
// together, so a lookup that finds its slot touches one cache line, not two.
class IdMap64 {
 public:
  // Returns the id of `key`, or kNone.
  uint32_t Find(uint64_t key) const {
    if (slots_.empty()) return kNone;
    for (size_t i = Mix(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.id == kNone) return kNone;
      if (slot.Holds(key)) return slot.id;
    }
  }
  // Returns the id of `key`, giving a new key the next id.
  uint32_t Add(uint64_t key) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    for (size_t i = Mix(key) & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.id == kNone) {
        slot = {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32),
                static_cast<uint32_t>(size_)};
        return static_cast<uint32_t>(size_++);
      }
      if (slot.Holds(key)) return slot.id;
    }
  }
  // As Add, but a key not yet in the map gets an id only below `limit`: returns
  // kNone for it once the map holds `limit` keys.
  uint32_t AddBelow(uint64_t key, size_t limit) {
    if (size_ < limit) return Add(key);
    return Find(key);
  }
  size_t size() const { return size_; }
  // Makes room for `n` keys in all, so that adding them never rehashes.
  void Reserve(size_t n) {
    if (n == 0) return;
    size_t capacity = slots_.empty() ? 256 : slots_.size();
    while (n * 4 > capacity * 3) capacity *= 2;
    // One table of the final size, not each doubling in turn (each a fresh
    // allocation that a restore's first writes pay for).
    if (capacity > slots_.size()) Rehash(capacity);
  }
  // Returns the keys in id order.
  std::vector<uint64_t> Keys() const {
    std::vector<uint64_t> keys(size_);
    for (const Slot& slot : slots_) {
      if (slot.id != kNone) keys[slot.id] = slot.key();
    }
    return keys;
  }

 private:
  // 12 bytes, not 16: the key in two halves keeps the slot 4-byte aligned.
  struct Slot {
    uint32_t key_low = 0, key_high = 0;
    uint32_t id = kNone;
    uint64_t key() const { return (uint64_t{key_high} << 32) | key_low; }
    bool Holds(uint64_t k) const {
      return key_low == static_cast<uint32_t>(k) &&
             key_high == static_cast<uint32_t>(k >> 32);
    }
  };
  static size_t Mix(uint64_t key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return static_cast<size_t>(key);
  }
  void Grow() { Rehash(slots_.empty() ? 256 : slots_.size() * 2); }
  void Rehash(size_t capacity) {  // (a power of two)
    std::vector<Slot> slots(capacity);
    const size_t mask = capacity - 1;
    for (const Slot& slot : slots_) {
      if (slot.id == kNone) continue;
      size_t j = Mix(slot.key()) & mask;
      while (slots[j].id != kNone) j = (j + 1) & mask;
      slots[j] = slot;
    }
    slots_.swap(slots);
    mask_ = mask;
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
};

// Bitsets by term id (a bit per term).
inline bool Marked(const std::vector<uint64_t>& bits, uint32_t id) {
  return (bits[id >> 6] >> (id & 63)) & 1;
}
inline void Mark(std::vector<uint64_t>* bits, uint32_t id) {
  (*bits)[id >> 6] |= uint64_t{1} << (id & 63);
}
inline void Unmark(std::vector<uint64_t>* bits, uint32_t id) {
  (*bits)[id >> 6] &= ~(uint64_t{1} << (id & 63));
}

// Word bigrams by their first word, each with its id: the bigrams of word w are
// pairs_[begin_[w], begin_[w + 1]), by second word, so a lookup is a binary search
// in the first word's few (after the Bloom filter, Impl::FindBigram). In an IdMap64
// they took 12-byte slots at most three quarters full (3.1 MB at 100k rules), each
// a random first write on restore; here 8 bytes a bigram, read as they are stored.
class BigramDictionary {
 public:
  // From `keys` (the BigramKey of each bigram, by id), of words below `word_count`.
  void Set(const std::vector<uint64_t>& keys, size_t word_count) {
    begin_.assign(word_count + 1, 0);
    for (uint64_t key : keys) ++begin_[(key >> 32) + 1];
    for (size_t w = 0; w < word_count; ++w) begin_[w + 1] += begin_[w];
    pairs_.resize(keys.size());
    std::vector<uint32_t> fill(begin_.begin(), begin_.end() - 1);
    for (uint32_t id = 0; id < keys.size(); ++id)
      pairs_[fill[keys[id] >> 32]++] = {static_cast<uint32_t>(keys[id]), id};
    for (size_t w = 0; w < word_count; ++w) {
      std::sort(pairs_.begin() + begin_[w], pairs_.begin() + begin_[w + 1],
                [](const Pair& a, const Pair& b) { return a.second < b.second; });
    }
  }
  // Returns the id of the bigram `key` (BigramKey), or kNone.
  uint32_t Find(uint64_t key) const {
    const uint64_t first = key >> 32;
    if (first + 1 >= begin_.size()) return kNone;
    const uint32_t second = static_cast<uint32_t>(key);
    const Pair* end = pairs_.data() + begin_[first + 1];
    const Pair* at =
        std::lower_bound(pairs_.data() + begin_[first], end, second,
                         [](const Pair& p, uint32_t s) { return p.second < s; });
    return at != end && at->second == second ? at->id : kNone;
  }
  size_t size() const { return pairs_.size(); }
  // Calls f(BigramKey) for each bigram.
  template <typename F>
  void ForEachKey(F&& f) const {
    ForEachRun(begin_.empty() ? 0 : begin_.size() - 1, [&](size_t w) {
      for (uint32_t i = begin_[w]; i < begin_[w + 1]; ++i)
        f(BigramKey(static_cast<uint32_t>(w), pairs_[i].second));
      return true;
    });
  }
  void Serialize(ByteWriter* w) const {
    w->Vec(begin_);
    w->Vec(pairs_);
  }
  // Reads what Serialize wrote for words below `word_count`, checking that every
  // word's run is in range and its second words ascending and below `word_count`,
  // and that the ids are those below size(), each once.
  bool Deserialize(ByteReader* r, size_t word_count) {
    if (!r->Vec(&begin_) || !r->Vec(&pairs_)) return false;
    if (begin_.size() != word_count + 1 || begin_[0] != 0 ||
        begin_.back() != pairs_.size() || pairs_.size() > kMaxIds) {
      return r->Fail();
    }
    // (Every run's bounds first: a run may only be read once all are in range.
    // Read once per restore, in calls: runs.h.)
    if (!ForEachRun(word_count, [&](size_t w) { return begin_[w] <= begin_[w + 1]; }))
      return r->Fail();
    std::vector<uint64_t> seen(pairs_.size() / 64 + 1, 0);
    const bool valid = ForEachRun(word_count, [&](size_t w) {
      for (uint32_t i = begin_[w]; i < begin_[w + 1]; ++i) {
        const Pair& p = pairs_[i];
        if (p.second >= word_count ||
            (i > begin_[w] && p.second <= pairs_[i - 1].second) ||
            p.id >= pairs_.size() || Marked(seen, p.id)) {
          return false;
        }
        Mark(&seen, p.id);
      }
      return true;
    });
    return valid || r->Fail();
  }

 private:
  struct Pair {
    uint32_t second, id;
  };
  std::vector<uint32_t> begin_{0};
  std::vector<Pair> pairs_;
};

// Postings of one field in one array: the postings of term t are
// items[begin[t], begin[t + 1]), by document.
struct PostingLists {
  std::vector<uint32_t> begin{0};
  std::vector<Posting> items;
  size_t df(uint32_t term) const {
    return term + 1 < begin.size() ? begin[term + 1] - begin[term] : 0;
  }
};

// A term of a post, in a field, with what the postings walk needs of it: its
// postings and its weight in the first-stage score (read here once, not per walk).
struct TermRef {
  Field field;
  uint32_t begin, end;  // its postings, items[begin, end)
  double weight;        // kFieldWeight / field_max * BM25 term weight
};

// Returns `ids` as sorted (id, count) pairs, in a vector of exactly that size (an
// index keeps hundreds of thousands of these: growth slack would be a third of it).
std::vector<TermFreq> CountTerms(std::vector<uint32_t>* ids) {
  std::sort(ids->begin(), ids->end());
  size_t distinct = 0;
  for (size_t i = 0; i < ids->size(); ++i)
    distinct += i == 0 || (*ids)[i] != (*ids)[i - 1];
  std::vector<TermFreq> out;
  out.reserve(distinct);
  for (uint32_t id : *ids) {
    if (!out.empty() && out.back().id() == id) {
      out.back().AddOne();
    } else {
      out.push_back({id, 1});
    }
  }
  return out;
}

// Postings walked per post to find candidates, rarest terms first. A tweet's terms
// fit (its candidates are exactly those of a full scan); a long post of common words
// stops here instead of touching every claim of a large list.
constexpr size_t kPostingBudget = 1 << 11;
// Candidates scored exactly (all fields, from the claim's side) per re-ranked one.
constexpr size_t kExactPerCandidate = 2;
// The most gate postings the gate of a check reads (its post's words' lists at the
// post's level, summed before any is read): a post with more goes to the walk with
// no claim tested, as testing the claims that reach their count would cost more
// than the walk and its bounds. At 100k rules, 800 bench posts: up to 4,096 (the walk
// reads kPostingBudget) the 680 posts of 751 the gate applies to test up to 482 claims
// and all end at the gate; the other 71 have 9,300-22,600 postings, and would test
// 1,800-7,000 claims (all of which fail too). At 10k rules no post has more than
// 2,300, and all end at the gate (with the 96, 88 of 731 went to the walk).
// Per warm check natively, against the 96 claims tested before: 1k rules 509.6k
// -> 499.0k instructions, 10k 407.9k -> 400.0k, 100k 778.9k -> 732.0k (2,048:
// 751.4k).
constexpr size_t kGatePostingBudget = 1 << 12;
// The most claims the gate tests within that budget: a hostile list's claims of a
// few words each, sharing them all, could reach 4,096 (a test reads a claim's
// words). The bench's posts under the budget test at most 709 at 10k rules.
constexpr size_t kGateMostClaims = 1024;
// Bits per bigram in the filter that spares Search most bigram lookups.
constexpr size_t kBigramFilterBits = 16;
// Distinct words whose terms Search remembers between posts (then it starts over).
constexpr size_t kWordCacheSize = 1 << 15;

}  // namespace

const SimilarWeights& ShippedSimilarWeights() { return kShippedWeights; }

namespace {

// Returns the re-ranker's weights for `o`: its own if it has a full set, else the
// shipped ones.
SimilarWeights EffectiveWeights(const SimilarOptions& o) {
  SimilarWeights w = kShippedWeights;
  if (o.weights.size() == kSimilarFeatureCount)
    std::copy(o.weights.begin(), o.weights.end(), w.begin());
  return w;
}

}  // namespace

struct SimilarIndex::Impl {
  SimilarOptions options;
  SimilarWeights weights;
  std::vector<int> stemmers;  // languages of the list, indices into kStemmers
  std::unordered_set<std::string> stop_words;
  Stemmers stem_envs;

  // Stems (by HashBytes of the stem), word bigrams and character grams.
  IdMap64 words, chars;
  BigramDictionary bigrams;
  // A Bloom filter over the bigrams' keys, one hash, kBigramFilterBits bits per
  // bigram (about 6% false positives). Most of a post's word pairs are in no
  // claim; the filter (a few hundred KB at 10k rules, in cache) says so without a
  // lookup in the bigram dictionary, a cache miss each (derived: Finish).
  std::vector<uint64_t> bigram_filter;
  int bigram_filter_shift = 58;  // 64 - log2(the filter's bits)
  uint32_t BigramFilterBit(uint64_t key) const {
    return static_cast<uint32_t>((key * 0x9E3779B97F4A7C15ull) >> bigram_filter_shift);
  }
  // Returns the id of the bigram `key`, or kNone.
  uint32_t FindBigram(uint64_t key) const {
    return Marked(bigram_filter, BigramFilterBit(key)) ? bigrams.Find(key) : kNone;
  }
  PostingLists postings[kFieldCount];  // claim and title postings use word ids
  // Per document, what the postings walk reads and writes, in one aligned 32-byte
  // record: a posting costs one cache line, where an array each cost two. BM25's
  // length normalisation per field, k1 * (1 - b + b * len / avg), and the rule
  // (derived: Finish); the first-stage score from the postings walk, valid where
  // stamp is the current post's (scratch for Search).
  struct alignas(32) DocState {
    float norm[kFieldCount] = {};
    uint32_t rule = 0;
    uint32_t stamp = 0;
    float score = 0;
  };
  static_assert(sizeof(DocState) == 32, "a document's state is half a cache line");
  std::vector<DocState> doc_state;
  // BM25's idf by document frequency (IdfOf; a log per lookup would dominate
  // Search's time). A term's idf depends on its df alone, so one table of
  // docs + 1 entries serves every field: Search reads the term's postings bounds
  // anyway, and an idf per term and field would be megabytes and a cache miss more.
  std::vector<double> idf_by_df;
  // The claim-field idf of each word (Finish): what the coverage features sum for
  // every word a candidate shares with the post, one read where Idf makes three
  // (the postings' bounds, then the table).
  std::vector<double> word_idf;
  // Each character gram's idf (BuildCharIdf, on the first search): a post's grams'
  // weights read it, one load where Idf took the postings' bounds, then the table
  // (a warm check at 10k rules 429.3k -> 419.5k instructions).
  std::vector<double> char_idf;

  // A claim. The fields the re-ranker's bound reads for every candidate come first,
  // its words are one run in doc_words.
  struct Doc {
    uint32_t rule_index;
    int stemmer;
    uint32_t words_begin = 0;         // in doc_words
    uint32_t phrasing_idf_begin = 0;  // in phrasing_idf
    // The claim-field idf summed over the claim's words, over the title's words,
    // and (in phrasing_idf) over each phrasing's words, in the order the coverage
    // features sum them, so the sums are the same doubles.
    double claim_idf = 0, title_idf = 0;
    // The smallest of its phrasings' sums above 0 (0: none), which CoverageBound
    // reads for every claim the gate tests.
    double phrasing_idf_min = 0;
    double char_norm = 0;
    // Its terms sorted by id, per field (the claim's words over all phrasings, the
    // title's words, the word bigrams and the character grams): the runs
    // doc_terms[terms_begin[f], terms_begin[f + 1]) (Terms).
    uint32_t terms_begin[kFieldCount + 1] = {};
  };
  std::vector<Doc> docs;
  // Every claim's terms, one claim after the other (a vector per claim and field
  // cost 24 bytes and an allocation each, 60k of them at 100k rules).
  std::vector<TermFreq> doc_terms;
  TermRange Terms(const Doc& doc, int f) const {
    const TermFreq* at = doc_terms.data();
    return {at + doc.terms_begin[f], at + doc.terms_begin[f + 1]};
  }
  std::vector<double> phrasing_idf;
  // Each document's words in one run, so that testing a candidate's words against
  // the post reads one place, not a vector per phrasing and field: the number of
  // phrasings, of claim words and of title words, the claim's word ids
  // (terms[kClaimField]'s order), the title's word ids, each phrasing's length,
  // each phrasing's unique word ids. (The claim's and title's words first: where
  // each part starts is then known from the counts alone. After the phrasings,
  // Words summed their lengths to find them, for every claim the gate tests.)
  std::vector<uint32_t> doc_words;
  struct WordView {
    uint32_t phrasing_count, claim_count, title_count;
    const uint32_t* lengths;
    const uint32_t* phrasing_ids;  // the phrasings' ids, one after the other
    const uint32_t* claim_ids;
    const uint32_t* title_ids;
  };
  WordView Words(const Doc& doc) const {
    const uint32_t* p = doc_words.data() + doc.words_begin;
    WordView v;
    v.phrasing_count = p[0];
    v.claim_count = p[1];
    v.title_count = p[2];
    v.claim_ids = p + 3;
    v.title_ids = v.claim_ids + v.claim_count;
    v.lengths = v.title_ids + v.title_count;
    v.phrasing_ids = v.lengths + v.phrasing_count;
    return v;
  }
  // Appends `doc`'s words (its terms are set) with the phrasings `phrasings`.
  void AddWords(Doc* doc, const std::vector<std::vector<uint32_t>>& phrasings) {
    doc->words_begin = static_cast<uint32_t>(doc_words.size());
    doc_words.push_back(static_cast<uint32_t>(phrasings.size()));
    doc_words.push_back(static_cast<uint32_t>(Terms(*doc, kClaimField).size()));
    doc_words.push_back(static_cast<uint32_t>(Terms(*doc, kTitleField).size()));
    for (int f : {kClaimField, kTitleField}) {
      for (const TermFreq& t : Terms(*doc, f)) doc_words.push_back(t.id());
    }
    for (const auto& p : phrasings) doc_words.push_back(static_cast<uint32_t>(p.size()));
    for (const auto& p : phrasings) doc_words.insert(doc_words.end(), p.begin(), p.end());
  }

  // What Search needs of one distinct normalised word, remembered between posts:
  // whether it counts (not a stop word or URL), then per language of the list its
  // stem's id (kNone if unknown) and key, and the ids of its known character grams.
  // The cache is an open-addressing table of slots (at most half full), each a
  // word's tag (the high half of its keyed hash, whose low bits pick the slot) and
  // where its record starts in cache_words. A slot is 8 bytes, so a full cache's
  // table is 512 KB: a common word's slot stays in cache, and a rare word costs
  // two misses, its slot and its record. (Slots of 32 bytes holding the word's
  // hash, head and where its terms were, in arrays of their own, made a 2 MB table
  // and three or four misses: callgrind's cache simulation of warm checks of the
  // 10k-rule bench, 2 MB last level, counted 538 -> 493 last-level data misses a
  // check. A sixth of the bench's words are outside its 5,000 commonest.)
  struct CacheSlot {
    uint32_t tag = 0;
    uint32_t record = kNone;  // kNone: an empty slot
  };
  std::vector<CacheSlot> cache;  // at most half full
  size_t cache_count = 0;        // words in the cache
  const uint64_t cache_seed = TextHashSeed();
  // A word's record in cache_words, consecutive words: its first 8 bytes
  // (zero-padded), where its bytes past the first 8 are in cache_text, and its size
  // in bytes, with kContentWord set for a content word. A content word's terms
  // follow (from kRecordHead on): per stemmer its stem's id, then per stemmer its
  // stem's key, then the number of its known grams and their ids. (A 64-bit value
  // is two words, low first: Read64, Write64.)
  enum : uint32_t {
    kRecordHeadBytes = 0,
    kRecordTextBegin = 2,
    kRecordSize,
    kRecordHead
  };
  static constexpr uint32_t kContentWord = 1u << 31;
  std::vector<uint32_t> cache_words;
  std::string cache_text;
  static uint64_t Read64(const uint32_t* at) { return at[0] | uint64_t{at[1]} << 32; }
  static void Write64(uint32_t* at, uint64_t value) {
    at[0] = static_cast<uint32_t>(value);
    at[1] = static_cast<uint32_t>(value >> 32);
  }
  // Where a content word's stem keys and grams are, from the start of its terms.
  size_t StemKeysOffset() const { return stemmers.size(); }
  size_t GramsOffset() const { return 3 * stemmers.size(); }
  uint32_t StemIdAt(uint32_t terms, size_t s) const { return cache_words[terms + s]; }
  uint64_t StemKeyAt(uint32_t terms, size_t s) const {
    return Read64(&cache_words[terms + StemKeysOffset() + 2 * s]);
  }
  const uint32_t* GramsAt(uint32_t terms) const {
    return &cache_words[terms + GramsOffset()];
  }

  // The gate of a check (Search with a min_score; BuildGate, on first need). A
  // claim's re-ranked z is at most what the post alone bounds its other features
  // by (Search's `base`) plus its weighted shares of covered words (f1, f3, f9:
  // GateWords),
  // and it is no hit with thin evidence. So for a post whose base leaves the claims
  // needing word features of at least r, a claim can be a hit only if the post
  // holds enough of its gate words for r: its rarest words, up to the point where
  // the rest with any one of them back still has thin evidence or stays below r
  // (then two are needed), or else where the rest alone does (one). Per level r of
  // kGateLevels, `begin[l]` and `docs[l]` are the claims by gate word. A claim that
  // holds enough and passes the word test is then held to its own tight bound
  // (Search's tight_z: its cosine and BM25 shares exact) before it opens the gate.
  static constexpr int kGateLevelCount = 4;
  // The most words of a claim, rarest first, BuildGate tries as its cut.
  static constexpr size_t kGateMostWords = 256;
  static constexpr double kGateLevels[kGateLevelCount] = {2.5, 4.0, 5.0, 5.5};
  struct Gate {
    bool built = false;
    size_t most_terms[kFieldCount] = {};  // the most terms a claim has, per field
    double most_word_idf = 0;             // the largest claim, title or phrasing idf sum
    std::vector<uint32_t> begin[kGateLevelCount], docs[kGateLevelCount];
    // Per claim and level: how many of its gate words a post must hold.
    std::vector<uint8_t> need;
    // Per claim: the post that last reached it, and how many gate words it holds.
    std::vector<uint32_t> stamp;
    std::vector<uint8_t> count;
    SimilarIndex::GateStats stats;
    // Set by GateBounds: Search fills it with every claim's bound and stops.
    std::vector<std::pair<uint32_t, double>>* bounds = nullptr;
    // Each claim's gate words, as the compiled form keeps them, until BuildGate
    // lays them out by word: per claim (from kept_begin[d]), its gate words at any
    // level, each as its id << 4 and a bit per level it is a gate word at. Set by
    // a restore (kept_from_form) or by FindGateWords; `need` with them.
    bool kept_from_form = false;
    std::vector<uint32_t> kept_begin, kept;
  } gate;
  void BuildGate();
  // Fills char_idf. Called by the first search rather than by Finish: a load holds
  // the list's text and its temporaries at its peak, and 100k rules' 0.2 MB more
  // then grew wasm memory by a step (92.0 -> 96.6 MB).
  void BuildCharIdf();
  // Finds each claim's gate words and `need` (into `kept`, as a restore reads them).
  void FindGateWords();

  // How much of claim `doc` (its words `words`) a post holding the words
  // `present(id)` says covers, by idf: what the re-ranker's word features and the
  // gate are made of, summed in one order for both.
  struct Coverage {
    double best_phrasing = 0;  // f1: the largest share of one phrasing's idf
    double both_ways = 0;      // f10, given the post's word weight (0: none)
    double claim_part = 0;     // the claim words' idf held
    double title_part = 0;     // the title words' idf held (0 without a title)
    double shared = 0;         // claim words held
    // Thin evidence: fewer than kMinSharedWords claim words, and no phrasing
    // whole. Tweets taught the model; short posts sharing two words with a claim
    // ("my children love school") were not among them.
    bool thin() const { return shared < kMinSharedWords && best_phrasing < 1; }
  };
  template <typename Present>
  Coverage CoverageOf(const Doc& doc, const WordView& words, const Present& present,
                      double post_word_weight = 0) const;
  // CoverageOf without the pass over the phrasings (both_ways 0): GateWords of it
  // bounds GateWords of the coverage. Its other parts are the same sums, and each
  // phrasing's share is taken as the claim words' held idf over the smallest
  // phrasing's, at most 1: a phrasing's words are distinct claim words, so the idf
  // it holds is at most theirs (a relative 1e-9 more covers the sums' rounding in
  // another order).
  template <typename Present>
  Coverage CoverageBound(const Doc& doc, const WordView& words,
                         const Present& present) const;
  // Returns true if CoverageOf(...).thin() surely holds, from which words the post
  // holds alone (no idf): most of a short post's candidates share a word or two
  // with it. False means it may not (the caller takes the coverage).
  template <typename Present>
  static bool SurelyThin(const WordView& words, const Present& present);
  // SurelyThin of a claim of which the post holds `shared` claim words, counted
  // already (CoverageBound counts them): the phrasings are read only if that is
  // fewer than kMinSharedWords (2% of the claims the gate tests at 10k rules).
  template <typename Present>
  static bool SurelyThin(const WordView& words, double shared, const Present& present);
  // Returns the weighted word features f1, f3 and f9 of `doc` with `coverage`.
  double GateWords(const Doc& doc, const WordView& words, const Coverage& coverage) const;
  // Returns the distinct word ids of a claim's phrasings, claim and title, sorted.
  static std::vector<uint32_t> DistinctWords(const WordView& words);
  // The gate's view of claim `doc` (its words `words`) for a post holding the
  // words `present(id)`: thin evidence or not, the weight of its word features
  // (GateWords), and whether it would still be thin with any one more of its
  // words (only if a claim word short and every phrasing two words short of whole).
  struct GateRest {
    bool thin = false, thin_with_one = false;
    double weight = 0;
  };
  template <typename Present>
  GateRest GateRestOf(const Doc& doc, const WordView& words,
                      const Present& present) const;
  // The most one word of idf `idf` can add to GateWords of `doc`: its idf over the
  // smallest phrasing and the claim or title sums, and a tenth for f9.
  double GateMostAdded(const Doc& doc, const WordView& words, double idf) const;
  // The claim's distinct words, rarest first (ties by id): the order the gate
  // takes its gate words in.
  std::vector<uint32_t> GateOrder(const WordView& words) const;

  // Scratch for Search (not thread-safe, as documented).
  uint32_t stamp = 0;  // the current post's, in doc_state
  // The post's words and bigrams as bitsets by term id: scoring tests every term
  // of ~100 claims for membership, and a bit per term keeps the sets in L1/L2 cache
  // where a word per term missed it (the bits are cleared through post_terms, or
  // the whole set at once where that is fewer stores).
  std::vector<uint64_t> word_present, bigram_present;
  std::vector<float> word_qtf, bigram_qtf, char_weight;
  // The post's character grams by count (0: not in the post): a post has a
  // thousand grams or more, and a count alone is one load and store each where a
  // bit and a frequency were three of each (cleared through post_terms).
  std::vector<uint32_t> char_count;
  // Search's scratch for the post's distinct character grams, in order of first
  // sight: each gram read is written after those so far and kept only if new. Its
  // size is only ever grown (to the distinct grams so far and a word's more).
  std::vector<uint32_t> gram_sight;
  std::vector<float> term_weight[kFieldCount];        // by field, valid where marked
  std::vector<uint32_t> post_terms[kFieldCount - 1];  // words, bigrams, chars
  std::vector<uint32_t> touched;
  std::vector<uint64_t> unknown_stems;
  std::vector<uint64_t> gram_keys;
  std::vector<TermRef> by_rarity[33];
  // Scratch for Search's bound: the post's claim and title term weights and squared
  // character-gram weights, best first, as prefix sums (top[n]: the n best), from
  // the same weights in the post's term order (read in order, not by term id).
  std::vector<double> top_claim, top_title, top_char_sq;
  std::vector<float> post_weight[kFieldCount], post_char_sq;
  std::vector<float> sort_scratch;

  double Collection() const {
    return std::max(static_cast<double>(docs.size()), SimilarIndex::kMinCollection);
  }
  // Returns BM25's idf of a term of document frequency `df`.
  double IdfOf(size_t df) const {
    return std::log(1 + (Collection() - static_cast<double>(df) + 0.5) /
                            (static_cast<double>(df) + 0.5));
  }
  // Returns the idf of term `id` of field `f` (kNone: a term no claim has).
  double Idf(Field f, uint32_t id) const {
    return idf_by_df[id == kNone ? 0 : postings[f].df(id)];
  }
  // Returns the claim-field idf of word `id` (a word of the dictionary), as Idf.
  double WordIdf(uint32_t id) const { return word_idf[id]; }
  // Returns the idf of character gram `id`, as Idf (once Search made char_idf).
  double CharIdf(uint32_t id) const { return char_idf[id]; }
  // A gram in over a tenth of the claims says little and costs a lot: not scored.
  bool CharScored(uint32_t id) const {
    return !(postings[kCharField].df(id) * 10 > docs.size() && docs.size() > 50);
  }

  bool IsContent(std::string_view w) const {
    if (IsUrlWord(w)) return false;
    return !(options.stop_words && stop_words.count(std::string(w)));
  }

  std::string Stem(int stemmer, const std::string& word) {
    return options.stemming ? stem_envs.Stem(stemmer, word) : word;
  }

  // What Build keeps from one claim to the next. Per distinct (word, language):
  // whether it counts (IsContent), its stem's id and its character grams' ids
  // (words repeat across claims, so stemming and gram hashing happen once each);
  // and the current claim's terms.
  struct WordTerms {
    bool content;  // IsContent: the rest is set only if it is
    uint32_t id;
    uint32_t grams_begin, grams_size;  // in gram_ids
  };
  struct BuildScratch {
    IdMap64 word_index;  // HashBytes of the word and language -> index into word_terms
    IdMap64 bigram_ids;  // BigramKey -> the bigram's id (then Impl::bigrams)
    std::vector<WordTerms> word_terms;
    std::vector<uint32_t> gram_ids;
    std::vector<uint64_t> gram_keys;
    std::vector<uint32_t> ids, field_ids[kFieldCount];
    std::vector<std::vector<uint32_t>> phrasings;
    // Per character gram id: the last claim that had it (CountGrams' marks) and
    // where in that claim's terms.
    std::vector<uint32_t> gram_seen, gram_slot;
  };
  // Returns `ids` (character gram ids below `gram_count`, with repeats) as (id,
  // count) pairs in the order of first sight, in a vector of exactly that size, for
  // claim `doc`.
  static std::vector<TermFreq> CountGrams(const std::vector<uint32_t>& ids, uint32_t doc,
                                          size_t gram_count, BuildScratch* b);
  // Orders every claim's character grams by id, from the postings (in term order):
  // a claim has a hundred grams or more, and sorting them took a twentieth of a load.
  void SortGramsByPostings();
  // Returns the terms of `word` stemmed with `stemmer`, adding them on first sight.
  const WordTerms& TermsOf(std::string_view word, int stemmer, BuildScratch* b);
  // Adds claim `source`, stemmed with `stemmer`, to docs (Build, once per claim).
  void AddDoc(const SimilarDoc& source, int stemmer, BuildScratch* b);
  // Derives postings from the documents (Build; Deserialize reads them instead).
  void BuildPostings();
  // Derives idf, norms and scratch space from the documents and postings.
  void Finish();
  // Finish's work for claim `d`: its field lengths (into doc_state, added to
  // `totals`), and then (DocIdf) its idf sums and character-gram norm. Finish
  // calls them in runs (runs.h): V8 optimises a wasm function only for its later
  // calls (no on-stack replacement), so a restore's loop over 100k rules' claims
  // ran unoptimised to its end. (Marked noinline, they were still inlined by
  // Binaryen, each having one caller: runs.h calls through a function pointer.)
  void DocLengths(uint32_t d, double totals[kFieldCount]);
  void DocIdf(Doc* doc);
  // Deserialize's reading of one claim into *doc (its terms to doc_terms, its
  // words to doc_words), with fields of `field_terms` terms, rules below
  // `rule_count`; false if malformed. Its own function, called once per claim,
  // for the reason DocLengths is.
  struct DocScratch {
    std::vector<std::vector<uint32_t>> phrasings;
    std::vector<TermFreq> ids;
  };
  bool ReadDoc(ByteReader* r, size_t rule_count, const size_t field_terms[kFieldCount],
               Doc* doc, DocScratch* scratch);

  // A word's key in the cache and its first 8 bytes (KeyOf).
  struct WordKey {
    uint64_t key, head;
  };
  // `readable_end`: the end of the text `word` lies in (LowBytes), or null.
  WordKey KeyOf(std::string_view word, const char* readable_end = nullptr) const;
  // Returns where the cached terms of `word` (key `k`) start in cache_words
  // (StemIdAt, StemKeyAt, GramsAt), computing them on first sight, or kNone if it is
  // not a content word. TrimCache must come first. Inlined into Search's loop over
  // a post's words, the first sight's work (stemming, grams) a call of its own:
  // neither compiler inlined the whole (natively a warm check at 10k rules
  // 473.1k -> 467.4k instructions).
  uint32_t Lookup(std::string_view word, const WordKey& k);
  // Lookup's first sight of `word`: caches it in slot `at` and returns as Lookup.
  uint32_t AddToCache(std::string_view word, const WordKey& k, size_t at);
  // Doubles the cache table, each entry to its slot in the larger one: the table is
  // kept at most half full, even past kWordCacheSize while one post brings more
  // (records are never moved while a post is read).
  void GrowCache();
  // Empties the cache if fewer than `room` entries are left: called once per post,
  // before its lookups, so no entry a post refers to goes away under it.
  void TrimCache(size_t room);

  // Resets the per-post marks (a new stamp), clearing them once every 4 billion.
  void NewStamp() {
    if (++stamp != 0) return;
    for (DocState& d : doc_state) d.stamp = 0;
    for (uint32_t& s : gate.stamp) s = 0;  // (their counts are reset with them)
    stamp = 1;
  }
};

SimilarIndex::Impl::WordKey SimilarIndex::Impl::KeyOf(std::string_view word,
                                                      const char* readable_end) const {
  // Keyed (factlens/hash.h): the words are the page's, the cache lives long.
  return {TextHash(word, cache_seed, readable_end),
          LowBytes(word.data(), word.size(), readable_end)};
}

__attribute__((always_inline)) inline uint32_t SimilarIndex::Impl::Lookup(
    std::string_view word, const WordKey& k) {
  const uint32_t tag = static_cast<uint32_t>(k.key >> 32);
  const uint32_t size = static_cast<uint32_t>(word.size());
  if (2 * (cache_count + 1) > cache.size()) GrowCache();
  const size_t mask = cache.size() - 1;
  size_t at = tag & mask;
  for (;; at = (at + 1) & mask) {
    const CacheSlot& slot = cache[at];
    if (slot.record == kNone) break;  // not cached: it goes here
    if (slot.tag != tag) continue;
    const uint32_t* r = &cache_words[slot.record];
    const uint32_t size_here = r[kRecordSize];
    if (Read64(r + kRecordHeadBytes) == k.head && (size_here & ~kContentWord) == size &&
        (size <= 8 ||
         SameText(std::string_view(cache_text).substr(r[kRecordTextBegin], size - 8),
                  word.substr(8)))) {
      return size_here & kContentWord ? slot.record + kRecordHead : kNone;
    }
  }
  return AddToCache(word, k, at);
}

[[gnu::noinline]] uint32_t SimilarIndex::Impl::AddToCache(std::string_view word,
                                                          const WordKey& k, size_t at) {
  const uint32_t tag = static_cast<uint32_t>(k.key >> 32);
  const uint32_t size = static_cast<uint32_t>(word.size());
  const size_t record = cache_words.size();
  cache[at] = {tag, static_cast<uint32_t>(record)};
  ++cache_count;
  const bool content = IsContent(word);
  const size_t terms = record + kRecordHead;
  // The head, then (for a content word) the stems' ids and keys and the grams' count.
  cache_words.resize(content ? terms + GramsOffset() + 1 : terms);
  Write64(&cache_words[record + kRecordHeadBytes], k.head);
  cache_words[record + kRecordTextBegin] = static_cast<uint32_t>(cache_text.size());
  cache_words[record + kRecordSize] = size | (content ? kContentWord : 0);
  if (size > 8) cache_text += word.substr(8);
  if (!content) return kNone;
  const std::string w(word);
  for (size_t s = 0; s < stemmers.size(); ++s) {
    const uint64_t stem_key = HashBytes(Stem(stemmers[s], w));
    cache_words[terms + s] = words.Find(stem_key);
    Write64(&cache_words[terms + StemKeysOffset() + 2 * s], stem_key);
  }
  const size_t grams = terms + GramsOffset();
  if (options.char_ngrams) {
    gram_keys.clear();
    CharGramKeys(word, &gram_keys);
    for (uint64_t g : gram_keys) {
      const uint32_t id = chars.Find(g);
      if (id != kNone) cache_words.push_back(id);
    }
    cache_words[grams] = static_cast<uint32_t>(cache_words.size() - grams - 1);
  }
  return static_cast<uint32_t>(terms);
}

void SimilarIndex::Impl::GrowCache() {
  std::vector<CacheSlot> slots(2 * cache.size());
  const size_t mask = slots.size() - 1;
  for (const CacheSlot& c : cache) {
    if (c.record == kNone) continue;
    size_t at = c.tag & mask;
    while (slots[at].record != kNone) at = (at + 1) & mask;
    slots[at] = c;
  }
  cache.swap(slots);
}

void SimilarIndex::Impl::TrimCache(size_t room) {
  if (!cache.empty() && cache_count + room <= kWordCacheSize) return;
  // Small at first: Lookup doubles it as words come (and this shrinks it back
  // after a post that grew it past 2 * kWordCacheSize).
  std::vector<CacheSlot>(1024).swap(cache);
  cache_count = 0;
  cache_words.clear();
  cache_text.clear();
}

SimilarIndex::SimilarIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SimilarIndex::~SimilarIndex() = default;
size_t SimilarIndex::size() const { return impl_->docs.size(); }
SimilarIndex::GateStats SimilarIndex::gate_stats() const { return impl_->gate.stats; }

std::vector<std::pair<uint32_t, double>> SimilarIndex::GateBounds(
    const NormalizedText& post, double min_score) const {
  std::vector<std::pair<uint32_t, double>> bounds;
  impl_->gate.bounds = &bounds;
  Search(post, 1, {}, min_score);
  impl_->gate.bounds = nullptr;
  return bounds;
}

bool SimilarIndex::VerifyGate(int random_sets) const {
  Impl& x = *impl_;
  if (!x.gate.built) x.BuildGate();
  const Impl::Gate& g = x.gate;
  std::mt19937 random(1);
  std::vector<char> in;
  for (uint32_t d = 0; d < x.docs.size(); ++d) {
    const Impl::Doc& doc = x.docs[d];
    const Impl::WordView v = x.Words(doc);
    const std::vector<uint32_t> words = Impl::DistinctWords(v);
    const std::vector<uint32_t> order = x.GateOrder(v);
    for (int l = 0; l < Impl::kGateLevelCount; ++l) {
      const uint32_t* begin = g.docs[l].data();
      auto gate_word = [&](uint32_t id) {  // the claim's postings are in claim order
        return std::binary_search(begin + g.begin[l][id], begin + g.begin[l][id + 1], d);
      };
      const int need = g.need[d * Impl::kGateLevelCount + l];
      // Returns false if the words marked in `in` break the promise.
      auto holds = [&]() {
        auto present = [&](uint32_t id) {
          return in[std::lower_bound(words.begin(), words.end(), id) - words.begin()] !=
                 0;
        };
        const Impl::Coverage coverage = x.CoverageOf(doc, v, present);
        // The check's shortcuts before a claim's coverage: a claim SurelyThin
        // calls thin is thin, and GateWords of its CoverageBound bounds its
        // GateWords.
        if (Impl::SurelyThin(v, present) && !coverage.thin()) return false;
        if (x.GateWords(doc, v, x.CoverageBound(doc, v, present)) <
            x.GateWords(doc, v, coverage)) {
          return false;
        }
        int held = 0;
        for (size_t i = 0; i < words.size(); ++i) held += in[i] && gate_word(words[i]);
        if (held >= need) return true;
        return coverage.thin() || x.GateWords(doc, v, coverage) < Impl::kGateLevels[l];
      };
      // All but the gate words, then with each gate word back (for a need of 2).
      in.assign(words.size(), 0);
      for (size_t i = 0; i < words.size(); ++i) in[i] = !gate_word(words[i]);
      if (!holds()) return false;
      for (size_t i = 0; i < words.size() && need == 2; ++i) {
        if (in[i]) continue;
        in[i] = 1;
        if (!holds()) return false;
        in[i] = 0;
      }
      for (int t = 0; t < random_sets; ++t) {
        const unsigned keep = 1 + t % 9;  // in tenths
        for (size_t i = 0; i < words.size(); ++i) in[i] = random() % 10 < keep;
        if (!holds()) return false;
      }
      // And no shorter cut keeps it: the gate words are the claim's rarest, and
      // with the last of them back what is left fails the cut's test (for a need
      // of 2, even with the most any one word adds).
      size_t cut = 0;
      while (cut < order.size() && gate_word(order[cut])) ++cut;
      for (size_t i = cut; i < order.size(); ++i) {
        if (gate_word(order[i])) return false;
      }
      if (cut == 0 || cut > Impl::kGateMostWords) continue;
      auto present = [&](uint32_t id) {
        return std::find(order.begin(), order.begin() + (cut - 1), id) ==
               order.begin() + (cut - 1);
      };
      const Impl::GateRest rest = x.GateRestOf(doc, v, present);
      const double r = Impl::kGateLevels[l] - 1e-6;
      const double added = cut > 1 ? x.GateMostAdded(doc, v, x.WordIdf(order[0])) : 0;
      if (need == 1 ? rest.thin || rest.weight < r
                    : rest.thin_with_one || rest.weight + added < r) {
        return false;
      }
    }
  }
  return true;
}

namespace {

// Calls `f(word)` for each word of the normalised text `text` (words are separated by
// single spaces).
template <typename F>
void ForEachWord(std::string_view text, F&& f) {
  size_t start = 0;
  while (start < text.size()) {
    size_t space = text.find(' ', start);
    if (space == std::string_view::npos) space = text.size();
    f(text.substr(start, space - start));
    start = space + 1;
  }
}

}  // namespace

std::unique_ptr<SimilarIndex> SimilarIndex::Build(const std::vector<SimilarDoc>& docs,
                                                  const SimilarOptions& options) {
  auto impl = std::make_unique<Impl>();
  Impl& x = *impl;
  x.options = options;
  x.weights = EffectiveWeights(options);
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

  x.docs.reserve(docs.size());
  Impl::BuildScratch scratch;
  // (Claims past kMaxIds are left out: an id takes 24 bits, IdCount.)
  const size_t indexed = std::min<size_t>(docs.size(), kMaxIds);
  for (uint32_t d = 0; d < indexed; ++d) x.AddDoc(docs[d], doc_stemmer[d], &scratch);
  x.doc_terms.shrink_to_fit();
  x.bigrams.Set(scratch.bigram_ids.Keys(), x.words.size());
  x.BuildPostings();
  x.SortGramsByPostings();
  x.Finish();
  return std::unique_ptr<SimilarIndex>(new SimilarIndex(std::move(impl)));
}

const SimilarIndex::Impl::WordTerms& SimilarIndex::Impl::TermsOf(std::string_view word,
                                                                 int stemmer,
                                                                 BuildScratch* b) {
  uint64_t key = HashBytes(word);
  key = (key ^ (0x100u + static_cast<unsigned>(stemmer))) * 1099511628211ull;
  const uint32_t at = b->word_index.Add(key);
  if (at < b->word_terms.size()) return b->word_terms[at];
  // (A stem past kMaxIds words is left out, as a stop word is: IdCount.)
  const uint32_t id =
      IsContent(word)
          ? words.AddBelow(HashBytes(Stem(stemmer, std::string(word))), kMaxIds)
          : kNone;
  if (id == kNone) {
    b->word_terms.push_back({false, kNone, 0, 0});
    return b->word_terms.back();
  }
  WordTerms t{true, id, static_cast<uint32_t>(b->gram_ids.size()), 0};
  if (options.char_ngrams) {
    b->gram_keys.clear();
    CharGramKeys(word, &b->gram_keys);
    for (uint64_t g : b->gram_keys) {
      const uint32_t gram = chars.AddBelow(g, kMaxIds);
      if (gram != kNone) b->gram_ids.push_back(gram);
    }
    t.grams_size = static_cast<uint32_t>(b->gram_ids.size() - t.grams_begin);
  }
  b->word_terms.push_back(t);
  return b->word_terms.back();
}

// Its own function, called once per claim (not inlined into Build's loop), as
// CompileRuleMatchers in match.cc: V8 optimises a wasm function only for its later
// calls (wasm has no on-stack replacement), so a first load can use the optimised
// code for most claims, where a loop in Build would run unoptimised to its end.
[[gnu::noinline]] void SimilarIndex::Impl::AddDoc(const SimilarDoc& source, int stemmer,
                                                  BuildScratch* b) {
  Doc doc;
  doc.rule_index = source.rule_index;
  doc.stemmer = stemmer;
  auto& field_ids = b->field_ids;
  for (auto& f : field_ids) f.clear();
  b->phrasings.clear();
  for (const std::string& phrasing : source.phrasings) {
    std::vector<uint32_t>& ids = b->ids;
    ids.clear();
    uint32_t previous = kNone;
    ForEachWord(NormalizeToString(phrasing), [&](std::string_view w) {
      const WordTerms terms = TermsOf(w, stemmer, b);
      if (!terms.content) return;
      ids.push_back(terms.id);
      field_ids[kClaimField].push_back(terms.id);
      if (options.word_bigrams && previous != kNone) {
        const uint32_t bigram =
            b->bigram_ids.AddBelow(BigramKey(previous, terms.id), kMaxIds);
        if (bigram != kNone) field_ids[kBigramField].push_back(bigram);
      }
      previous = terms.id;
      field_ids[kCharField].insert(
          field_ids[kCharField].end(), b->gram_ids.begin() + terms.grams_begin,
          b->gram_ids.begin() + terms.grams_begin + terms.grams_size);
    });
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    b->phrasings.push_back(ids);
  }
  if (options.title_field && !source.title.empty()) {
    ForEachWord(NormalizeToString(source.title), [&](std::string_view w) {
      const WordTerms& terms = TermsOf(w, stemmer, b);
      if (terms.content) field_ids[kTitleField].push_back(terms.id);
    });
  }
  // (The character grams are put in id order once for all claims, from the postings:
  // SortGramsByPostings.)
  for (int f = 0; f < kFieldCount; ++f) {
    doc.terms_begin[f] = static_cast<uint32_t>(doc_terms.size());
    const std::vector<TermFreq> terms =
        f == kCharField ? CountGrams(field_ids[f], static_cast<uint32_t>(docs.size()),
                                     chars.size(), b)
                        : CountTerms(&field_ids[f]);
    doc_terms.insert(doc_terms.end(), terms.begin(), terms.end());
  }
  doc.terms_begin[kFieldCount] = static_cast<uint32_t>(doc_terms.size());
  AddWords(&doc, b->phrasings);
  docs.push_back(std::move(doc));
}

std::vector<TermFreq> SimilarIndex::Impl::CountGrams(const std::vector<uint32_t>& ids,
                                                     uint32_t doc, size_t gram_count,
                                                     BuildScratch* b) {
  std::vector<TermFreq> out;
  if (b->gram_seen.size() < gram_count) {
    b->gram_seen.resize(gram_count, 0);
    b->gram_slot.resize(gram_count, 0);
  }
  // Two marks per claim, one per pass: counted (2 doc + 1), then placed (2 doc + 2).
  const uint32_t counted = 2 * doc + 1, placed = 2 * doc + 2;
  size_t distinct = 0;
  for (uint32_t id : ids) {
    if (b->gram_seen[id] == counted) continue;
    b->gram_seen[id] = counted;
    ++distinct;
  }
  out.reserve(distinct);
  for (uint32_t id : ids) {
    if (b->gram_seen[id] == placed) {
      out[b->gram_slot[id]].AddOne();
    } else {
      b->gram_seen[id] = placed;
      b->gram_slot[id] = static_cast<uint32_t>(out.size());
      out.push_back({id, 1});
    }
  }
  return out;
}

void SimilarIndex::Impl::SortGramsByPostings() {
  // Walking the postings term by term visits each claim's grams in id order; each
  // is written at the claim's next place in its run.
  const PostingLists& p = postings[kCharField];
  std::vector<uint32_t> next(docs.size());
  for (uint32_t d = 0; d < docs.size(); ++d) next[d] = docs[d].terms_begin[kCharField];
  for (uint32_t term = 0; term + 1 < p.begin.size(); ++term) {
    for (uint32_t i = p.begin[term]; i < p.begin[term + 1]; ++i) {
      const Posting& posting = p.items[i];
      doc_terms[next[posting.id()]++] = TermFreq(term, posting.count());
    }
  }
}

void SimilarIndex::Impl::BuildPostings() {
  Impl& x = *this;
  // Postings from the documents' term lists: count, then fill in document order.
  for (int f = 0; f < kFieldCount; ++f) {
    const size_t terms = f == kBigramField ? x.bigrams.size()
                         : f == kCharField ? x.chars.size()
                                           : x.words.size();
    PostingLists& p = x.postings[f];
    p.begin.assign(terms + 1, 0);
    for (const Impl::Doc& doc : x.docs) {
      for (const TermFreq& t : x.Terms(doc, f)) ++p.begin[t.id() + 1];
    }
    for (size_t t = 0; t < terms; ++t) p.begin[t + 1] += p.begin[t];
    p.items.resize(p.begin[terms]);
    std::vector<uint32_t> fill(p.begin.begin(), p.begin.end() - 1);
    for (uint32_t d = 0; d < x.docs.size(); ++d) {
      for (const TermFreq& t : x.Terms(x.docs[d], f))
        p.items[fill[t.id()]++] = Posting(d, t.count());
    }
  }
}

namespace {
// The idf of the words of `ids` the post holds (`present`); *held (if given)
// counts them.
template <typename Present>
double HeldIdf(const std::vector<double>& word_idf, const uint32_t* ids, uint32_t count,
               const Present& present, double* held = nullptr) {
  double part = 0;
  for (uint32_t i = 0; i < count; ++i) {
    if (present(ids[i])) {
      part += word_idf[ids[i]];
      if (held != nullptr) *held += 1;
    }
  }
  return part;
}
}  // namespace

template <typename Present>
SimilarIndex::Impl::Coverage SimilarIndex::Impl::CoverageOf(
    const Doc& doc, const WordView& words, const Present& present,
    double post_word_weight) const {
  auto part_of = [&](const uint32_t* ids, uint32_t count, double* held = nullptr) {
    return HeldIdf(word_idf, ids, count, present, held);
  };
  Coverage c;
  const uint32_t* phrasing = words.phrasing_ids;
  for (uint32_t p = 0; p < words.phrasing_count; ++p) {
    const double all = phrasing_idf[doc.phrasing_idf_begin + p];
    const double part = part_of(phrasing, words.lengths[p]);
    phrasing += words.lengths[p];
    if (all > 0) c.best_phrasing = std::max(c.best_phrasing, part / all);
    // Both ways at once: the post says this phrasing and little else.
    if (all > 0 && post_word_weight > 0) {
      c.both_ways = std::max(c.both_ways, std::min(part / all, part / post_word_weight));
    }
  }
  c.claim_part = part_of(words.claim_ids, words.claim_count, &c.shared);
  if (words.title_count > 0) c.title_part = part_of(words.title_ids, words.title_count);
  return c;
}

template <typename Present>
SimilarIndex::Impl::Coverage SimilarIndex::Impl::CoverageBound(
    const Doc& doc, const WordView& words, const Present& present) const {
  Coverage c;
  c.claim_part =
      HeldIdf(word_idf, words.claim_ids, words.claim_count, present, &c.shared);
  if (words.title_count > 0)
    c.title_part = HeldIdf(word_idf, words.title_ids, words.title_count, present);
  // (A phrasing of no idf has no share: CoverageOf passes over it.)
  if (doc.phrasing_idf_min > 0)
    c.best_phrasing = std::min(1.0, c.claim_part * (1 + 1e-9) / doc.phrasing_idf_min);
  return c;
}

template <typename Present>
bool SimilarIndex::Impl::SurelyThin(const WordView& words, const Present& present) {
  uint32_t shared = 0;
  for (uint32_t i = 0; i < words.claim_count; ++i) shared += present(words.claim_ids[i]);
  return SurelyThin(words, shared, present);
}

template <typename Present>
bool SimilarIndex::Impl::SurelyThin(const WordView& words, double shared,
                                    const Present& present) {
  if (shared >= kMinSharedWords) return false;
  // A phrasing the post lacks a word of has a share below 1: every idf is positive
  // (IdfOf), and the smallest (5e-6 at 100k claims) is far above the rounding of a
  // phrasing's sum, so leaving it out lowers the sum.
  const uint32_t* phrasing = words.phrasing_ids;
  for (uint32_t p = 0; p < words.phrasing_count; ++p) {
    const uint32_t* end = phrasing + words.lengths[p];
    if (phrasing != end && std::all_of(phrasing, end, present)) return false;
    phrasing = end;
  }
  return true;
}

double SimilarIndex::Impl::GateWords(const Doc& doc, const WordView& words,
                                     const Coverage& c) const {
  // (f3 as word_features has it: a claim without a title is its own title.)
  const double f3 = words.title_count == 0
                        ? (doc.claim_idf > 0 ? c.claim_part / doc.claim_idf : 0)
                        : (doc.title_idf > 0 ? c.title_part / doc.title_idf : 0);
  const double f9 = std::min(c.shared, 10.0) / 10;
  return std::max(0.0, weights[1]) * c.best_phrasing + std::max(0.0, weights[3]) * f3 +
         std::max(0.0, weights[9]) * f9;
}

template <typename Present>
SimilarIndex::Impl::GateRest SimilarIndex::Impl::GateRestOf(
    const Doc& doc, const WordView& v, const Present& present) const {
  const Coverage coverage = CoverageOf(doc, v, present);
  bool one_completes = false;
  const uint32_t* phrasing = v.phrasing_ids;
  for (uint32_t p = 0; p < v.phrasing_count && !one_completes; ++p) {
    uint32_t missing = 0;
    for (uint32_t i = 0; i < v.lengths[p] && missing <= 1; ++i)
      missing += !present(phrasing[i]);
    one_completes = phrasing_idf[doc.phrasing_idf_begin + p] > 0 && missing <= 1;
    phrasing += v.lengths[p];
  }
  GateRest rest;
  rest.thin = coverage.thin();
  rest.thin_with_one = coverage.shared + 1 < kMinSharedWords && !one_completes;
  rest.weight = GateWords(doc, v, coverage);
  return rest;
}

double SimilarIndex::Impl::GateMostAdded(const Doc& doc, const WordView& v,
                                         double idf) const {
  double smallest_phrasing = 0;
  for (uint32_t p = 0; p < v.phrasing_count; ++p) {
    const double all = phrasing_idf[doc.phrasing_idf_begin + p];
    if (all > 0 && (smallest_phrasing == 0 || all < smallest_phrasing))
      smallest_phrasing = all;
  }
  const double coverage = v.title_count == 0 ? doc.claim_idf : doc.title_idf;
  return (smallest_phrasing > 0 ? std::max(0.0, weights[1]) * idf / smallest_phrasing
                                : 0) +
         (coverage > 0 ? std::max(0.0, weights[3]) * idf / coverage : 0) +
         std::max(0.0, weights[9]) / 10;
}

std::vector<uint32_t> SimilarIndex::Impl::GateOrder(const WordView& v) const {
  std::vector<uint32_t> order = DistinctWords(v);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return WordIdf(a) > WordIdf(b); });
  return order;
}

std::vector<uint32_t> SimilarIndex::Impl::DistinctWords(const WordView& v) {
  std::vector<uint32_t> ids(v.claim_ids, v.title_ids + v.title_count);
  const uint32_t* phrasing = v.phrasing_ids;
  for (uint32_t p = 0; p < v.phrasing_count; ++p) phrasing += v.lengths[p];
  ids.insert(ids.end(), v.phrasing_ids, phrasing);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void SimilarIndex::Impl::BuildCharIdf() {
  char_idf.resize(chars.size());
  ForEachRun(chars.size(), [&](size_t id) {  // once per list: runs.h
    char_idf[id] = Idf(kCharField, static_cast<uint32_t>(id));
    return true;
  });
}

void SimilarIndex::Impl::BuildGate() {
  Gate& g = gate;
  g.built = true;
  // (Once per list, on its first check: the loops run in calls, runs.h.)
  ForEachRun(docs.size(), [&](size_t d) {
    const Doc& doc = docs[d];
    for (int f = 0; f < kFieldCount; ++f)
      g.most_terms[f] = std::max(g.most_terms[f], Terms(doc, f).size());
    g.most_word_idf = std::max({g.most_word_idf, doc.claim_idf, doc.title_idf});
    const uint32_t phrasings = Words(doc).phrasing_count;
    for (uint32_t p = 0; p < phrasings; ++p)
      g.most_word_idf =
          std::max(g.most_word_idf, phrasing_idf[doc.phrasing_idf_begin + p]);
    return true;
  });
  if (!g.kept_from_form) FindGateWords();
  // The claims by gate word, per level, from each claim's gate words (restored
  // from the compiled form, or just found).
  for (int l = 0; l < kGateLevelCount; ++l) {
    std::vector<uint32_t>& begin = g.begin[l];
    begin.assign(words.size() + 1, 0);
    ForEachRun(g.kept.size(), [&](size_t i) {
      const uint32_t e = g.kept[i];
      if (e >> l & 1) ++begin[(e >> 4) + 1];
      return true;
    });
    ForEachRun(words.size(), [&](size_t w) {
      begin[w + 1] += begin[w];
      return true;
    });
    g.docs[l].resize(begin[words.size()]);
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    ForEachRun(docs.size(), [&](size_t d) {
      for (uint32_t i = g.kept_begin[d]; i < g.kept_begin[d + 1]; ++i) {
        if (g.kept[i] >> l & 1)
          g.docs[l][fill[g.kept[i] >> 4]++] = static_cast<uint32_t>(d);
      }
      return true;
    });
  }
  g.kept_from_form = false;
  std::vector<uint32_t>().swap(g.kept);
  std::vector<uint32_t>().swap(g.kept_begin);
  g.stamp.assign(docs.size(), 0);
  g.count.assign(docs.size(), 0);
}

void SimilarIndex::Impl::FindGateWords() {
  Gate& g = gate;
  // Per claim: its distinct words, rarest first, and per level how many of them
  // are its gate words and how many of those a post must hold (2, or 1 where no
  // cut leaves the claim short with any one of them back).
  g.kept_begin.assign(1, 0);
  g.kept.clear();
  g.need.assign(docs.size() * kGateLevelCount, 1);
  std::vector<uint64_t> gone(words.size() / 64 + 1, 0);  // the first k, by word id
  // What is left of a claim with its first k words gone, by k, once asked for.
  std::vector<GateRest> rests;
  std::vector<char> known;
  for (uint32_t d = 0; d < docs.size(); ++d) {
    const Doc& doc = docs[d];
    const WordView v = Words(doc);
    const std::vector<uint32_t> order = GateOrder(v);
    // (All the ids asked about are the claim's own: present unless among the
    // first k.)
    auto present = [&](uint32_t id) { return !Marked(gone, id); };
    uint32_t cut_of[kGateLevelCount];
    uint8_t* const need_of = &g.need[d * kGateLevelCount];
    uint32_t one_cut[kGateLevelCount];
    // A claim of many thousands of words (a list may give one 256 phrasings of
    // 1000 bytes: 41k words; a first check once took 4.7 s) is cut at
    // kGateMostWords. A level without a cut then takes all the claim's words (set
    // below): a post holding none of them cannot reach any level, so the gate only
    // lets more claims through, and the verdicts stay the same.
    const size_t last = std::min(order.size(), kGateMostWords);
    rests.resize(last + 1);
    known.assign(last + 1, 0);
    size_t gone_count = 0;  // order's first gone_count words are marked gone
    auto rest_at = [&](size_t k) -> const GateRest& {
      if (!known[k]) {
        for (; gone_count < k; ++gone_count) Mark(&gone, order[gone_count]);
        for (; gone_count > k; --gone_count) Unmark(&gone, order[gone_count - 1]);
        rests[k] = GateRestOf(doc, v, present);
        known[k] = 1;
      }
      return rests[k];
    };
    // The most one of the first k words can add back, for k >= 1: the first's (the
    // rarest: GateMostAdded grows with idf).
    const double added = order.empty() ? 0 : GateMostAdded(doc, v, WordIdf(order[0]));
    // A level's cuts: the first k at which what is left is thin or weighs less
    // than the level (one_cut), or is so even with any one word back (cut_of).
    // With more words gone, each part of the weight is a sum of fewer of the same
    // positive terms in the same order, so it never grows, and thin evidence stays
    // thin: for k >= 1 each test, once true, stays true, and a binary search finds
    // its first k, reading the claim's words log(k) times where a scan of every k
    // read them k times (the bench's claims have 11 distinct words, so there it
    // asks for as many k; a claim of hundreds of words is where it saves). At
    // k = 0 nothing is added back, so it is tested on its own. A level is met no
    // later than the one below it, so the lower level's search starts at its cut.
    auto first_k = [&](size_t lo, auto holds) -> uint32_t {  // in [lo, last], or kNone
      if (lo > last || !holds(rest_at(last))) return kNone;
      size_t hi = last;
      while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (holds(rest_at(mid))) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      return static_cast<uint32_t>(lo);
    };
    const GateRest whole = rest_at(0);
    size_t one_from = 1, two_from = 1;
    for (int l = kGateLevelCount - 1; l >= 0; --l) {
      const double r = kGateLevels[l] - 1e-6;
      one_cut[l] =
          whole.thin || whole.weight < r ? 0 : first_k(one_from, [&](const GateRest& x) {
            return x.thin || x.weight < r;
          });
      if (one_cut[l] != kNone && one_cut[l] > 0) one_from = one_cut[l];
      cut_of[l] = whole.thin_with_one || whole.weight < r
                      ? 0
                      : first_k(two_from, [&](const GateRest& x) {
                          return x.thin_with_one || x.weight + added < r;
                        });
      if (cut_of[l] != kNone) {
        need_of[l] = 2;
        if (cut_of[l] > 0) two_from = cut_of[l];
      }
    }
    // (No words left is thin evidence, so every level has its one-word cut by the
    // claim's last word.)
    for (int l = 0; l < kGateLevelCount; ++l) {
      if (one_cut[l] == kNone) one_cut[l] = static_cast<uint32_t>(order.size());
      if (cut_of[l] == kNone) cut_of[l] = one_cut[l];
    }
    for (uint32_t id : order) Unmark(&gone, id);
    // The claim's gate words, rarest first, each with a bit per level whose cut
    // takes it.
    const uint32_t most = *std::max_element(cut_of, cut_of + kGateLevelCount);
    for (uint32_t i = 0; i < most; ++i) {
      uint32_t levels = 0;
      for (int l = 0; l < kGateLevelCount; ++l) levels |= (i < cut_of[l] ? 1u : 0u) << l;
      g.kept.push_back(order[i] << 4 | levels);
    }
    g.kept_begin.push_back(static_cast<uint32_t>(g.kept.size()));
  }
}

[[gnu::noinline]] void SimilarIndex::Impl::DocLengths(uint32_t d,
                                                      double totals[kFieldCount]) {
  for (int f = 0; f < kFieldCount; ++f) {
    float& length = doc_state[d].norm[f];
    for (const TermFreq& t : Terms(docs[d], f)) length += t.tf();
    totals[f] += length;
  }
}

[[gnu::noinline]] void SimilarIndex::Impl::DocIdf(Doc* d) {
  Impl& x = *this;
  Doc& doc = *d;
  doc.claim_idf = doc.title_idf = doc.phrasing_idf_min = 0;
  for (const TermFreq& t : x.Terms(doc, kClaimField)) doc.claim_idf += x.WordIdf(t.id());
  for (const TermFreq& t : x.Terms(doc, kTitleField)) doc.title_idf += x.WordIdf(t.id());
  doc.phrasing_idf_begin = static_cast<uint32_t>(x.phrasing_idf.size());
  const Impl::WordView words = x.Words(doc);
  const uint32_t* id = words.phrasing_ids;
  for (uint32_t p = 0; p < words.phrasing_count; ++p) {
    double all = 0;
    for (uint32_t i = 0; i < words.lengths[p]; ++i) all += x.WordIdf(*id++);
    x.phrasing_idf.push_back(all);
    if (all > 0 && (doc.phrasing_idf_min == 0 || all < doc.phrasing_idf_min))
      doc.phrasing_idf_min = all;
  }
  double norm = 0;
  for (const TermFreq& t : x.Terms(doc, kCharField)) {
    double w = t.tf() * x.Idf(kCharField, t.id());
    norm += w * w;
  }
  doc.char_norm = std::sqrt(norm);
}

void SimilarIndex::Impl::Finish() {
  Impl& x = *this;
  // (Called once per load or restore: its loops run in calls, runs.h.)
  const size_t doc_count = x.docs.size();
  x.doc_state.assign(doc_count, {});
  ForEachRun(doc_count, [&](size_t d) {
    x.doc_state[d].rule = x.docs[d].rule_index;
    return true;
  });
  // Field lengths (tokens), then BM25's normalisation by the average length.
  double totals[kFieldCount] = {0, 0, 0, 0};
  ForEachRun(doc_count, [&](size_t d) {
    x.DocLengths(static_cast<uint32_t>(d), totals);
    return true;
  });
  double average[kFieldCount];
  for (int f = 0; f < kFieldCount; ++f)
    average[f] = doc_count == 0 || totals[f] == 0 ? 1 : totals[f] / doc_count;
  ForEachRun(doc_count, [&](size_t d) {
    DocState& state = x.doc_state[d];
    for (int f = 0; f < kFieldCount; ++f)
      state.norm[f] =
          static_cast<float>(kK1 * (1 - kB + kB * state.norm[f] / average[f]));
    return true;
  });
  x.idf_by_df.resize(doc_count + 1);
  ForEachRun(x.idf_by_df.size(), [&](size_t df) {
    x.idf_by_df[df] = x.IdfOf(df);
    return true;
  });
  x.word_idf.resize(x.words.size());
  ForEachRun(x.words.size(), [&](size_t id) {
    x.word_idf[id] = x.Idf(kClaimField, static_cast<uint32_t>(id));
    return true;
  });
  // Per claim, what needs the idf: the coverage features' totals (summed in the
  // order word_features sums their parts) and the character-gram vector's norm.
  x.phrasing_idf.clear();
  size_t phrasings = 0;
  ForEachRun(doc_count, [&](size_t d) {
    phrasings += x.Words(x.docs[d]).phrasing_count;
    return true;
  });
  x.phrasing_idf.reserve(phrasings);
  ForEachRun(doc_count, [&](size_t d) {
    x.DocIdf(&x.docs[d]);
    return true;
  });
  // Pushed one by one on a load from text, they may hold twice their size (100k
  // rules: megabytes); a restore reserved their size.
  x.doc_words.shrink_to_fit();
  x.word_present.assign(x.words.size() / 64 + 1, 0);
  x.word_qtf.assign(x.words.size(), 0);
  x.bigram_present.assign(x.bigrams.size() / 64 + 1, 0);
  x.bigram_qtf.assign(x.bigrams.size(), 0);
  size_t filter_bits = 64;
  x.bigram_filter_shift = 58;
  while (filter_bits < kBigramFilterBits * x.bigrams.size()) {
    filter_bits *= 2;
    --x.bigram_filter_shift;
  }
  x.bigram_filter.assign(filter_bits / 64, 0);
  x.bigrams.ForEachKey(
      [&](uint64_t key) { Mark(&x.bigram_filter, x.BigramFilterBit(key)); });
  x.char_count.assign(x.chars.size(), 0);
  x.char_weight.assign(x.chars.size(), 0);
  for (int f = 0; f < kFieldCount; ++f)
    x.term_weight[f].assign(x.postings[f].begin.size(), 0);
}

// ---- the SIMI section of the compiled form -----------------------------------------
// Options, weights, languages, the dictionaries' keys in id order, each claim's
// phrasings and term lists, then each field's postings; idf, norms and scratch space
// are derived again (Finish).

namespace {

// Sorted distinct ids with whole-number frequencies, as gaps and counts in Var32s
// (a claim's terms take about 3 bytes each instead of 8).
void WriteTerms(ByteWriter* w, TermRange terms) {
  w->Var32(static_cast<uint32_t>(terms.size()));
  uint32_t previous = 0;
  for (const TermFreq& t : terms) {
    w->Var32(t.id() - previous);
    w->Var32(t.count());
    previous = t.id();
  }
}

// Appends what WriteTerms wrote to *terms, checking ids are below `limit` (at most
// kMaxIds), sorted and distinct and counts from 1 to kMaxCount.
bool ReadTerms(ByteReader* r, uint32_t limit, std::vector<TermFreq>* terms) {
  const uint32_t n = r->Var32();
  if (!r->ok() || n > limit) return r->Fail();
  const size_t at = terms->size();
  terms->resize(at + n);
  uint64_t id = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t gap = r->Var32(), count = r->Var32();
    id += gap;
    if (!r->ok() || (i > 0 && gap == 0) || id >= limit || count == 0 || count > kMaxCount)
      return r->Fail();
    (*terms)[at + i] = TermFreq(static_cast<uint32_t>(id), count);
  }
  return true;
}

uint8_t OptionBits(const SimilarOptions& o) {
  return static_cast<uint8_t>(o.stemming | o.stop_words << 1 | o.word_bigrams << 2 |
                              o.char_ngrams << 3 | o.title_field << 4 | o.rerank << 5);
}

}  // namespace

void SimilarIndex::Serialize(ByteWriter* w) const {
  const Impl& x = *impl_;
  w->U8(OptionBits(x.options));
  for (double v : x.weights) w->F64(v);
  w->U32(static_cast<uint32_t>(x.stemmers.size()));
  for (int s : x.stemmers) w->U8(static_cast<uint8_t>(s));
  w->Vec(x.words.Keys());
  x.bigrams.Serialize(w);
  w->Vec(x.chars.Keys());
  w->U32(static_cast<uint32_t>(x.docs.size()));
  // The totals of the claims' terms and words: a restore makes their arrays once,
  // of their final size (each growth a copy into fresh memory).
  w->U32(static_cast<uint32_t>(x.doc_terms.size()));
  w->U32(static_cast<uint32_t>(x.doc_words.size()));
  std::vector<TermFreq> ids;
  for (const Impl::Doc& doc : x.docs) {
    w->U32(doc.rule_index);
    w->U8(static_cast<uint8_t>(doc.stemmer));
    const Impl::WordView words = x.Words(doc);
    w->U32(words.phrasing_count);
    const uint32_t* id = words.phrasing_ids;
    for (uint32_t p = 0; p < words.phrasing_count; ++p) {
      ids.clear();
      for (uint32_t i = 0; i < words.lengths[p]; ++i) ids.push_back(TermFreq(*id++, 1));
      WriteTerms(w, {ids.data(), ids.data() + ids.size()});
    }
    for (int f = 0; f < kFieldCount; ++f) WriteTerms(w, x.Terms(doc, f));
  }
  // The postings as they are in memory: reading them is a copy, where deriving
  // them from the documents is a scattered write per term of every claim.
  for (const PostingLists& p : x.postings) {
    w->Vec(p.begin);
    w->Vec(p.items);
  }
  SerializeGate(w);
}

// The gate, built here if no check has built it yet: a restored list's first check
// would otherwise wait for it (300M instructions natively at the bench's 100k
// rules, nearly all of that check). Per claim, its gate words at any level (ids
// ascending, as gaps), each with a bit per level it is one at, then a bit per level
// where a post must hold two. Read from the by-word lists the gate keeps, in word
// order, so each claim's words come out ascending.
void SimilarIndex::SerializeGate(ByteWriter* w) const {
  Impl& x = *impl_;
  if (!x.gate.built) x.BuildGate();
  const Impl::Gate& g = x.gate;
  const size_t doc_count = x.docs.size();
  std::vector<uint32_t> begin(doc_count + 1, 0);
  for (int l = 0; l < Impl::kGateLevelCount; ++l) {
    for (uint32_t d : g.docs[l]) ++begin[d + 1];
  }
  for (size_t d = 0; d < doc_count; ++d) begin[d + 1] += begin[d];
  std::vector<uint32_t> entries(begin[doc_count]);
  std::vector<uint32_t> end(begin.begin(), begin.end() - 1);
  for (uint32_t word = 0; word < x.words.size(); ++word) {
    for (int l = 0; l < Impl::kGateLevelCount; ++l) {
      for (uint32_t i = g.begin[l][word]; i < g.begin[l][word + 1]; ++i) {
        const uint32_t d = g.docs[l][i];
        if (end[d] > begin[d] && entries[end[d] - 1] >> 4 == word) {
          entries[end[d] - 1] |= 1u << l;
        } else {
          entries[end[d]++] = word << 4 | 1u << l;
        }
      }
    }
  }
  for (size_t d = 0; d < doc_count; ++d) {
    w->Var32(end[d] - begin[d]);
    uint32_t previous = 0;
    for (uint32_t i = begin[d]; i < end[d]; ++i) {
      w->Var32((entries[i] >> 4) - previous);
      w->U8(static_cast<uint8_t>(entries[i] & 15));
      previous = entries[i] >> 4;
    }
    uint8_t twos = 0;
    for (int l = 0; l < Impl::kGateLevelCount; ++l)
      twos |= static_cast<uint8_t>((g.need[d * Impl::kGateLevelCount + l] == 2) << l);
    w->U8(twos);
  }
}

namespace {

// Postings checked per call on restore (runs.h): a check is a few instructions.
constexpr size_t kPostingsPerRun = 1 << 12;

}  // namespace

[[gnu::noinline]] bool SimilarIndex::Impl::ReadDoc(ByteReader* r, size_t rule_count,
                                                   const size_t field_terms[kFieldCount],
                                                   Doc* doc, DocScratch* scratch) {
  doc->rule_index = r->U32();
  doc->stemmer = r->U8();
  const uint32_t phrasings = r->U32();
  if (!r->ok() || doc->rule_index >= rule_count || doc->stemmer >= kStemmerCount ||
      phrasings > 4096) {
    return false;
  }
  scratch->phrasings.resize(phrasings);
  for (auto& p : scratch->phrasings) {
    scratch->ids.clear();
    p.clear();
    if (!ReadTerms(r, static_cast<uint32_t>(words.size()), &scratch->ids)) return false;
    for (const TermFreq& t : scratch->ids) p.push_back(t.id());
  }
  for (int f = 0; f < kFieldCount; ++f) {
    doc->terms_begin[f] = static_cast<uint32_t>(doc_terms.size());
    if (!ReadTerms(r, static_cast<uint32_t>(field_terms[f]), &doc_terms)) return false;
  }
  doc->terms_begin[kFieldCount] = static_cast<uint32_t>(doc_terms.size());
  AddWords(doc, scratch->phrasings);
  return true;
}

bool SimilarIndex::Deserialize(ByteReader* r, const SimilarOptions& options,
                               size_t rule_count, std::unique_ptr<SimilarIndex>* out) {
  out->reset();
  auto impl = std::make_unique<Impl>();
  Impl& x = *impl;
  x.options = options;
  x.weights = EffectiveWeights(options);
  const uint8_t bits = r->U8();
  SimilarWeights weights;
  for (double& v : weights) v = r->F64();
  if (!r->ok()) return false;
  const bool same_options = bits == OptionBits(options) && weights == x.weights;
  const uint32_t stemmer_count = r->U32();
  if (!r->ok() || stemmer_count == 0 ||
      stemmer_count > static_cast<uint32_t>(kStemmerCount))
    return r->Fail();
  for (uint32_t i = 0; i < stemmer_count; ++i) {
    const uint8_t s = r->U8();
    if (s >= kStemmerCount) return r->Fail();
    x.stemmers.push_back(s);
  }
  x.stop_words = StopWordsFor(x.stemmers);
  // The dictionaries: the words' keys, the bigrams (of word pairs), the grams' keys.
  // (Called once per restore: its loops run in calls, runs.h.)
  auto read_keys = [r](IdMap64* map) {
    std::vector<uint64_t> keys;
    if (!r->Vec(&keys) || keys.size() > kMaxIds) return r->Fail();
    map->Reserve(keys.size());
    // A repeated key fails.
    if (!ForEachRun(keys.size(), [&](size_t i) { return map->Add(keys[i]) == i; }))
      return r->Fail();
    return true;
  };
  if (!read_keys(&x.words) || !x.bigrams.Deserialize(r, x.words.size()) ||
      !read_keys(&x.chars)) {
    return false;
  }
  const size_t field_terms[kFieldCount] = {x.words.size(), x.words.size(),
                                           x.bigrams.size(), x.chars.size()};
  const uint32_t doc_count = r->U32();
  const uint32_t term_total = r->U32(), word_total = r->U32();
  // (A term takes 2 bytes at least, a word 1, besides a claim's 3 counts.)
  if (!r->ok() || doc_count > rule_count || doc_count > kMaxIds ||
      term_total > r->remaining() / 2 ||
      word_total > r->remaining() + 3 * static_cast<uint64_t>(doc_count)) {
    return r->Fail();
  }
  x.docs.resize(doc_count);
  x.doc_terms.reserve(term_total);
  x.doc_words.reserve(word_total);
  Impl::DocScratch scratch;
  for (Impl::Doc& doc : x.docs) {
    if (!x.ReadDoc(r, rule_count, field_terms, &doc, &scratch)) return r->Fail();
  }
  if (x.doc_terms.size() != term_total || x.doc_words.size() != word_total)
    return r->Fail();
  for (int f = 0; f < kFieldCount; ++f) {
    PostingLists& p = x.postings[f];
    if (!r->Vec(&p.begin) || !r->Vec(&p.items)) return false;
    // Every posting names a document, and every term's run is in range; the
    // frequencies are the documents' (checked against them, term by term, would
    // cost what deriving them does; a wrong one only changes a score).
    if (p.begin.size() != field_terms[f] + 1 || p.begin[0] != 0 ||
        p.begin.back() != p.items.size()) {
      return r->Fail();
    }
    const bool ordered = ForEachRun(
        p.begin.size() - 1, [&](size_t t) { return p.begin[t] <= p.begin[t + 1]; });
    const Posting* items = p.items.data();
    const bool valid = ForEachRun(
        p.items.size(),
        [&](size_t i) { return items[i].id() < doc_count && items[i].count() != 0; },
        kPostingsPerRun);
    if (!ordered || !valid) return r->Fail();
  }
  // The gate (SerializeGate), laid out by BuildGate on the first check.
  Impl::Gate& g = x.gate;
  g.need.assign(static_cast<size_t>(doc_count) * Impl::kGateLevelCount, 1);
  g.kept_begin.assign(1, 0);
  const bool gate_read = ForEachRun(doc_count, [&](size_t d) {
    const uint32_t n = r->Var32();
    if (!r->ok() || n > r->remaining() / 2) return false;
    uint64_t id = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t gap = r->Var32();
      const uint8_t levels = r->U8();
      id += gap;
      if (!r->ok() || (i > 0 && gap == 0) || id >= x.words.size() || levels == 0 ||
          levels > 15) {
        return false;
      }
      g.kept.push_back(static_cast<uint32_t>(id) << 4 | levels);
    }
    const uint8_t twos = r->U8();
    if (!r->ok() || twos > 15) return false;
    for (int l = 0; l < Impl::kGateLevelCount; ++l)
      g.need[d * Impl::kGateLevelCount + l] = (twos >> l & 1) ? 2 : 1;
    g.kept_begin.push_back(static_cast<uint32_t>(g.kept.size()));
    return true;
  });
  if (!gate_read) return r->Fail();
  g.kept_from_form = true;
  if (!same_options) return true;  // valid, but for other options: the caller rebuilds
  x.Finish();
  out->reset(new SimilarIndex(std::move(impl)));
  return true;
}

std::vector<SimilarHit> SimilarIndex::Search(const NormalizedText& post, size_t k,
                                             const std::vector<uint32_t>& withheld,
                                             double min_score) const {
  Impl& x = *impl_;
  std::vector<SimilarHit> hits;
  if (k == 0 || x.docs.empty()) return hits;
  x.NewStamp();
  const uint32_t stamp = x.stamp;

  // The post's terms: stemmed words (in each language of the list), bigrams of
  // consecutive content words, character grams. Unknown stems still count in the
  // post's total weight (they are what the claim does not cover).
  enum { kWords, kBigrams, kChars };
  // Forget the previous post's terms.
  std::vector<uint64_t>* present[] = {&x.word_present, &x.bigram_present};
  for (uint32_t g : x.post_terms[kChars]) x.char_count[g] = 0;
  x.post_terms[kChars].clear();
  for (int kind = kWords; kind <= kBigrams; ++kind) {
    std::vector<uint64_t>& bits = *present[kind];
    // Bit by bit, or the whole set at once where that is fewer stores (a long
    // post's words, in a set of a few hundred 8-byte words).
    if (x.post_terms[kind].size() * 8 >= bits.size()) {
      std::fill(bits.begin(), bits.end(), 0);
    } else {
      for (uint32_t id : x.post_terms[kind]) Unmark(&bits, id);
    }
    x.post_terms[kind].clear();
  }
  x.unknown_stems.clear();
  x.TrimCache(post.words.size());
  // The post's content words in order, by their cached terms' records (4 bytes
  // each, not the 32 of a cache entry: a post may have 300k words).
  std::vector<uint32_t> content;
  content.reserve(post.words.size());
  // The keys of a run of words first, then their lookups: a rare word's lookup is a
  // cache miss or two, and without the hashing between them the processor overlaps
  // more of them. (Runs, not all the post's words at once: a post may
  // have 300k words.)
  auto word_at = [&](const ByteRange& r) {
    return std::string_view(post.text).substr(r.begin, r.end - r.begin);
  };
  const char* const text_end = post.text.data() + post.text.size();
  constexpr size_t kKeyRun = 256;
  Impl::WordKey keys[kKeyRun];
  for (size_t begin = 0; begin < post.words.size(); begin += kKeyRun) {
    const size_t end = std::min(post.words.size(), begin + kKeyRun);
    for (size_t i = begin; i < end; ++i)
      keys[i - begin] = x.KeyOf(word_at(post.words[i]), text_end);
    for (size_t i = begin; i < end; ++i) {
      const uint32_t terms = x.Lookup(word_at(post.words[i]), keys[i - begin]);
      if (terms != kNone) content.push_back(terms);
    }
  }
  double post_word_weight = 0;
  const size_t stemmer_count = x.stemmers.size();
  for (size_t s = 0; s < stemmer_count; ++s) {
    for (const uint32_t terms : content) {
      const uint32_t id = x.StemIdAt(terms, s);
      if (id != kNone) {
        if (!Marked(x.word_present, id)) {
          Mark(&x.word_present, id);
          x.word_qtf[id] = 0;
          x.post_terms[kWords].push_back(id);
          post_word_weight += x.WordIdf(id);
        }
        x.word_qtf[id] += 1;
      } else {
        const uint64_t key = x.StemKeyAt(terms, s);
        if (std::find(x.unknown_stems.begin(), x.unknown_stems.end(), key) ==
            x.unknown_stems.end()) {
          x.unknown_stems.push_back(key);
          post_word_weight += x.Idf(kClaimField, kNone);
        }
      }
    }
  }
  // (The post's bigrams come after the gate, which has no use for them.)
  auto mark_bigrams = [&] {
    if (!x.options.word_bigrams) return;
    for (size_t s = 0; s < stemmer_count; ++s) {
      uint32_t previous = kNone;
      for (const uint32_t terms : content) {
        const uint32_t id = x.StemIdAt(terms, s);
        if (previous != kNone && id != kNone) {
          const uint32_t b = x.FindBigram(BigramKey(previous, id));
          if (b != kNone) {
            if (!Marked(x.bigram_present, b)) {
              Mark(&x.bigram_present, b);
              x.bigram_qtf[b] = 0;
              x.post_terms[kBigrams].push_back(b);
            }
            x.bigram_qtf[b] += 1;
          }
        }
        previous = id;
      }
    }
  };
  // The post's distinct grams in order of first sight, and their counts. Whether a
  // gram is new is a coin toss (a bench post's 1,500 grams are 1,000 distinct), so
  // no branch on it: each gram is written after the distinct ones so far, and
  // their end moves past it only if it is new.
  size_t distinct = 0;
  for (const uint32_t terms : content) {
    const uint32_t* grams = x.GramsAt(terms);
    const uint32_t count = grams[0];
    if (distinct + count > x.gram_sight.size())
      x.gram_sight.resize(2 * (distinct + count));
    uint32_t* const sight = x.gram_sight.data();
    for (uint32_t i = 1; i <= count; ++i) {
      const uint32_t g = grams[i];
      sight[distinct] = g;
      distinct += x.char_count[g]++ == 0;
    }
  }
  x.post_terms[kChars].assign(x.gram_sight.begin(), x.gram_sight.begin() + distinct);
  if (x.char_idf.size() != x.chars.size()) x.BuildCharIdf();
  // Each gram's squared weight (the gate's cosine bound) and the post's norm.
  // (Their weights themselves, char_weight, only the posts past the gate and the
  // claims the gate holds to their tight bound need: set_char_weights.)
  auto char_weight_of = [&](uint32_t g) { return x.char_count[g] * x.CharIdf(g); };
  double char_norm = 0;
  x.post_char_sq.resize(distinct);
  float* const char_sq = x.post_char_sq.data();
  for (size_t i = 0; i < distinct; ++i) {
    const double w = char_weight_of(x.gram_sight[i]);
    const float weight = static_cast<float>(w);
    char_sq[i] = weight * weight;
    char_norm += w * w;
  }
  char_norm = std::sqrt(char_norm);

  // Stage 1: BM25 per field, each field scaled by the most the post could score in
  // it, so fields and posts of any length are comparable.
  struct FieldTerms {
    Field field;
    const std::vector<uint32_t>* ids;
    const std::vector<float>* qtf;  // by id; null: count
    const std::vector<uint32_t>* count;
  };
  const FieldTerms fields[] = {
      {kClaimField, &x.post_terms[kWords], &x.word_qtf, nullptr},
      {kTitleField, &x.post_terms[kWords], &x.word_qtf, nullptr},
      {kBigramField, &x.post_terms[kBigrams], &x.bigram_qtf, nullptr},
      {kCharField, &x.post_terms[kChars], nullptr, &x.char_count},
  };
  const bool field_on[kFieldCount] = {true, x.options.title_field, x.options.word_bigrams,
                                      x.options.char_ngrams};
  auto term_weight = [&](Field f, uint32_t id, float qtf) {
    return std::min(qtf, 3.0f) * x.Idf(f, id) * (kK1 + 1);  // a repeated word adds little
  };
  auto scored = [&](Field f, uint32_t id) {
    return x.postings[f].df(id) > 0 && (f != kCharField || x.CharScored(id));
  };
  // Each term's BM25 weight q * idf * (k1 + 1) in field `ft` (0: not scored), and
  // the most the post could score in the field. The claim and title fields come
  // first (the gate reads them), the bigram and character fields after it.
  // (Inlined at each of its four calls: clang, the wasm build, made it a function
  // of its own, which read what it captures from wasm memory. The generated code
  // of a warm check at 10k rules in Node, 200 bench posts: 557.3k -> 542.8k x86
  // instructions; natively, GCC's build, 383.0k -> 379.7k.)
  double field_max[kFieldCount] = {0, 0, 0, 0};
  auto weigh = [&](const FieldTerms& ft) __attribute__((always_inline)) {
    std::vector<float>& post_weight = x.post_weight[ft.field];
    post_weight.clear();
    if (!field_on[ft.field]) return;
    std::vector<float>& weight = x.term_weight[ft.field];
    for (uint32_t id : *ft.ids) {
      weight[id] = 0;
      if (scored(ft.field, id)) {
        const float qtf =
            ft.qtf != nullptr ? (*ft.qtf)[id] : static_cast<float>((*ft.count)[id]);
        weight[id] = static_cast<float>(term_weight(ft.field, id, qtf));
        field_max[ft.field] += weight[id];
      }
      post_weight.push_back(weight[id]);
    }
  };
  weigh(fields[kClaimField]);
  weigh(fields[kTitleField]);

  // Leaves the `most` largest of `weights` (all, if there are fewer) first in
  // sort_scratch, in no order, and returns how many. (Selecting, then sorting the
  // few selected, is O(n): partial_sort's heap was a tenth of a long post's search.)
  auto select_heaviest = [&](const std::vector<float>& weights, size_t most) {
    std::vector<float>& w = x.sort_scratch;
    w = weights;
    most = std::min(most, w.size());
    std::nth_element(w.begin(), w.begin() + most, w.end(), std::greater<float>());
    return most;
  };
  // The post's heaviest claim and title terms and squared character-gram weights,
  // best first, as prefix sums: sums[n] bounds what n terms a claim shares with the
  // post can weigh (the candidates' bound below).
  auto prefix_sums = [&](const std::vector<float>& weights, size_t most,
                         std::vector<double>* sums) {
    most = select_heaviest(weights, most);
    std::vector<float>& w = x.sort_scratch;
    std::sort(w.begin(), w.begin() + most, std::greater<float>());
    sums->assign(1, 0.0);
    for (size_t j = 0; j < most; ++j) sums->push_back(sums->back() + w[j]);
  };
  // The sum of the `most` largest of `weights`, or a little more: the one prefix
  // sum the gate reads, unsorted, as a bound. Most posts end at the gate (87% of the
  // bench's at 10k rules), so the sort (of all a short post's terms, when the largest
  // claim has more) is left to the posts it lets through.
  auto top_sum = [&](const std::vector<float>& weights, size_t most) {
    return LargestSumBound(weights, most);
  };
  auto top = [](const std::vector<double>& sums, size_t n) {
    return sums[std::min(n, sums.size() - 1)];
  };
  auto share = [&](double part, double whole) {
    return whole > 0 ? std::min(1.0, part / whole) : 0.0;
  };
  const double z_needed = std::log(min_score / (1 - min_score)) - 1e-6;

  // The gate (see Impl::Gate): with a min_score, the features other than the
  // shares of covered words are bounded from the post alone, as the candidates'
  // bound below does, but for the largest claim; the claims must make up the rest
  // from f1, f3 and f9. Only those the post holds a gate word of can, and most
  // posts reach none that does: they stop here, without the postings walk.
  // (The gate's sums are for the largest claim; the candidates' bound below makes
  // its prefix sums for its own claims, on the few posts the gate lets through.)
  // Whether the post holds word `id` (the claims' coverage, CoverageOf).
  auto post_holds = [&](uint32_t id) { return Marked(x.word_present, id); };
  // The contribution of a term to a document's first-stage score in a field: its
  // weight (the term's q * idf * (k1 + 1), scaled or not, computed once per term),
  // its frequency `tf` in the document and the document's BM25 normalisation in
  // the field (DocState::norm).
  auto contribution = [](double weight, float tf, float norm) {
    return weight * tf / (tf + norm);
  };
  // The post's character grams' weights, which char_cosine reads: set once, for
  // the posts past the gate or a claim the gate tests tightly (most posts are
  // ended before either).
  bool char_weights_set = false;
  auto set_char_weights = [&] {
    if (char_weights_set) return;
    for (uint32_t g : x.post_terms[kChars])
      x.char_weight[g] = static_cast<float>(char_weight_of(g));
    char_weights_set = true;
  };
  // The re-ranker's word features (1-4, 9, 10): how much of the claim, of its
  // phrasings and of its title the post covers, by idf, and the words they share.
  // They are cheap (a claim has few words, its totals are precomputed), so the
  // bound below uses them exactly. Returns the number of shared claim words.
  // (features_of: from a coverage the caller has; word_features takes it.)
  auto features_of = [&](const Impl::Doc& doc, const Impl::WordView& words,
                         const Impl::Coverage& c, SimilarWeights* features) {
    auto& f = *features;
    f[1] = c.best_phrasing;
    f[10] = c.both_ways;
    f[2] = post_word_weight > 0 ? c.claim_part / post_word_weight : 0;
    f[9] = std::min(c.shared, 10.0) / 10;
    // A claim without a fact-check title is its own title: the model learnt from
    // claims that all have one, and a missing title is no evidence against a match.
    if (words.title_count == 0) {
      f[3] = doc.claim_idf > 0 ? c.claim_part / doc.claim_idf : 0;
      f[4] = f[2];
    } else {
      f[3] = doc.title_idf > 0 ? c.title_part / doc.title_idf : 0;
      f[4] = post_word_weight > 0 ? c.title_part / post_word_weight : 0;
    }
    return c.shared;
  };
  auto word_features = [&](const Impl::Doc& doc, const Impl::WordView& words,
                           SimilarWeights* features) {
    return features_of(doc, words, x.CoverageOf(doc, words, post_holds, post_word_weight),
                       features);
  };
  // Thin evidence (Impl::Coverage::thin), from the features.
  auto thin_evidence = [](double shared, const SimilarWeights& f) {
    return shared < kMinSharedWords && f[1] < 1;
  };

  // Candidate `doc`'s BM25 sum in field `f` over the terms it shares with the post
  // (0 if the post has no scored term in the field): its part of the exact first
  // stage and, scaled by field_max, the re-ranker's f7 and f8.
  auto field_sum = [&](uint32_t doc, Field f) {
    double sum = 0;
    if (field_max[f] > 0) {
      const std::vector<float>& weight = x.term_weight[f];
      const float norm = x.doc_state[doc].norm[f];
      auto add = [&](auto&& in_post) {
        for (const TermFreq& t : x.Terms(x.docs[doc], f)) {
          if (in_post(t.id())) sum += contribution(weight[t.id()], t.tf(), norm);
        }
      };
      if (f == kCharField) {
        add([&](uint32_t id) { return x.char_count[id] != 0; });
      } else {
        const std::vector<uint64_t>& marks =
            f == kBigramField ? x.bigram_present : x.word_present;
        add([&](uint32_t id) { return Marked(marks, id); });
      }
    }
    return sum;
  };
  auto scaled = [&](double sum, Field f) {
    return field_max[f] > 0 ? sum / field_max[f] : 0.0;
  };
  // The re-ranker's f7 and f8 from a claim's claim and title sums (field_sum).
  auto bm25_shares = [&](const Impl::Doc& doc, double claim_sum, double title_sum,
                         SimilarWeights* f) {
    (*f)[7] = scaled(claim_sum, kClaimField);
    // A claim without a fact-check title is its own title (word_features).
    (*f)[8] =
        x.Terms(doc, kTitleField).empty() ? (*f)[7] : scaled(title_sum, kTitleField);
  };
  // The re-ranker's f6: the cosine of the claim's and the post's character grams.
  auto char_cosine = [&](const Impl::Doc& doc) {
    if (!(char_norm > 0 && doc.char_norm > 0)) return 0.0;
    set_char_weights();
    double dot = 0;
    for (const TermFreq& t : x.Terms(doc, kCharField)) {
      if (x.char_count[t.id()] != 0)
        dot += t.tf() * x.Idf(kCharField, t.id()) * x.char_weight[t.id()];
    }
    return dot / (char_norm * doc.char_norm);
  };
  // A claim's tight bound of the re-ranker's z, from its word features in *f
  // (word_features): f6, f7 and f8 exactly (a pass over its grams and words, which
  // its exact score would make anyway), f5 alone bounded (in [0, 1]). At least the
  // claim's true z: below z_needed, it is no hit.
  auto tight_z = [&](uint32_t d, SimilarWeights* features) {
    const Impl::Doc& doc = x.docs[d];
    auto& f = *features;
    f[6] = char_cosine(doc);
    bm25_shares(doc, field_sum(d, kClaimField), field_sum(d, kTitleField), &f);
    const SimilarWeights& w = x.weights;
    double tight = w[0] + std::max(0.0, w[5]);
    for (int j : {1, 2, 3, 4, 6, 7, 8, 9, 10}) tight += w[j] * f[j];
    return tight;
  };
  if (min_score > kThinEvidenceScore && x.options.rerank && withheld.empty()) {
    if (!x.gate.built) x.BuildGate();
    Impl::Gate& gate = x.gate;
    const SimilarWeights& w = x.weights;
    const double cosine =
        char_norm > 0
            ? share(std::sqrt(top_sum(x.post_char_sq, gate.most_terms[kCharField])),
                    char_norm)
            : 0;
    const double claim_bm25 =
        share(top_sum(x.post_weight[kClaimField], gate.most_terms[kClaimField]),
              field_max[kClaimField]);
    const double title_bm25 =
        std::max(claim_bm25,
                 share(top_sum(x.post_weight[kTitleField], gate.most_terms[kTitleField]),
                       field_max[kTitleField]));
    // f2, f4: a claim's (or title's) covered idf over the post's; f10 at most 1.
    const double over_post =
        post_word_weight > 0 ? gate.most_word_idf / post_word_weight : 0;
    const double base = w[0] + std::max(0.0, w[5]) + std::max(0.0, w[6] * cosine) +
                        std::max(0.0, w[7] * claim_bm25) +
                        std::max(0.0, w[8] * title_bm25) +
                        (std::max(0.0, w[2]) + std::max(0.0, w[4])) * over_post +
                        std::max(0.0, w[10]) * std::min(1.0, over_post);
    const double needed = z_needed - base;  // from f1, f3, f9
    if (gate.bounds != nullptr) {
      for (const Impl::Doc& doc : x.docs) {
        const Impl::WordView words = x.Words(doc);
        gate.bounds->push_back(
            {doc.rule_index,
             base + x.GateWords(doc, words, x.CoverageOf(doc, words, post_holds))});
      }
      return hits;
    }
    int level = Impl::kGateLevelCount - 1;
    while (level >= 0 && Impl::kGateLevels[level] > needed - 1e-6) --level;
    if (level >= 0) {
      const std::vector<uint32_t>& begin = gate.begin[level];
      const std::vector<uint32_t>& docs = gate.docs[level];
      // (Summed first: a post over the budget costs only this pass.)
      const std::vector<uint32_t>& post_words = x.post_terms[kWords];
      size_t postings = 0;
      for (uint32_t id : post_words) postings += begin[id + 1] - begin[id];
      // Open: a claim may be a hit, search as before.
      bool open = postings > kGatePostingBudget;
      if (open) ++gate.stats.over_budget;
      size_t tested = 0;
      for (size_t k = 0; k < post_words.size() && !open; ++k) {
        const uint32_t id = post_words[k];
        for (uint32_t i = begin[id]; i < begin[id + 1] && !open; ++i) {
          const uint32_t d = docs[i];
          if (gate.stamp[d] != stamp) {
            gate.stamp[d] = stamp;
            gate.count[d] = 0;
          }
          if (++gate.count[d] != gate.need[d * Impl::kGateLevelCount + level]) continue;
          // (A hostile list's many small claims: the walk is bounded, the tests
          // would not be.)
          if (++tested > kGateMostClaims) {
            open = true;
            break;
          }
          const Impl::Doc& doc = x.docs[d];
          const Impl::WordView words = x.Words(doc);
          // Most claims the gate tests fall short by CoverageBound, with no pass
          // over their phrasings: of 800 bench posts' tests, 96% at 10k rules (76%
          // with each phrasing's share taken as 1) and 98% at 100k. Its count of
          // the claim words held tells SurelyThin whether to read them.
          const Impl::Coverage bound = x.CoverageBound(doc, words, post_holds);
          if (Impl::SurelyThin(words, bound.shared, post_holds) ||
              x.GateWords(doc, words, bound) < needed - 1e-6)
            continue;
          // (With the post's word weight: f10, which GateWords does not read but
          // the tight bound below does, from the same pass over the phrasings.)
          const Impl::Coverage coverage =
              x.CoverageOf(doc, words, post_holds, post_word_weight);
          if (coverage.thin() || x.GateWords(doc, words, coverage) < needed - 1e-6)
            continue;
          // The claim's own tight bound, where the gate's bounds the cosine and
          // BM25 shares for the largest claim from the post alone: at 10k rules
          // half the posts the gate let through went on to the walk for a claim
          // that fails it (and then no candidate was viable).
          SimilarWeights f{};
          features_of(doc, words, coverage, &f);
          open = tight_z(d, &f) >= z_needed;
        }
      }
      if (!open) {
        ++gate.stats.ended;
        return hits;
      }
      ++gate.stats.passed;
    }
  }

  set_char_weights();
  mark_bigrams();
  weigh(fields[kBigramField]);
  weigh(fields[kCharField]);
  double weight_sum = 0;
  for (int f = 0; f < kFieldCount; ++f) {
    if (field_max[f] > 0) weight_sum += kFieldWeight[f];
  }
  if (weight_sum == 0) return hits;  // nothing in common with any claim
  // The scored terms go to the postings walk's buckets, by the bit length of their
  // document frequency (the walk takes the rarest first), in field and post order.
  auto& by_rarity = x.by_rarity;
  for (auto& bucket : by_rarity) bucket.clear();
  for (const FieldTerms& ft : fields) {
    if (!field_on[ft.field]) continue;
    const PostingLists& p = x.postings[ft.field];
    const std::vector<float>& weight = x.term_weight[ft.field];
    for (uint32_t id : *ft.ids) {
      if (!scored(ft.field, id)) continue;
      // floor(log2(df)); df > 0, as the term is scored.
      const int bits = 63 - __builtin_clzll(static_cast<unsigned long long>(p.df(id)));
      by_rarity[bits].push_back({ft.field, p.begin[id], p.begin[id + 1], weight[id]});
    }
  }

  // Candidates: the documents in the postings of the post's terms, rarest terms
  // first, within kPostingBudget, ranked by the part of the score those terms give.
  double scale[kFieldCount];  // (a field with a term in the buckets has field_max > 0)
  for (int f = 0; f < kFieldCount; ++f)
    scale[f] = field_max[f] > 0 ? kFieldWeight[f] / field_max[f] : 0;
  for (auto& bucket : by_rarity) {
    for (TermRef& t : bucket) t.weight = scale[t.field] * t.weight;
  }
  x.touched.clear();
  size_t walked = 0;
  bool budget_left = true;
  for (const auto& bucket : by_rarity) {
    for (const TermRef& t : bucket) {
      const size_t df = t.end - t.begin;
      if (walked > 0 && walked + df > kPostingBudget) {
        budget_left = false;
        break;
      }
      walked += df;
      const Posting* items = x.postings[t.field].items.data();
      for (uint32_t i = t.begin; i < t.end; ++i) {
        const Posting posting = items[i];
        const uint32_t doc = posting.id();
        Impl::DocState& d = x.doc_state[doc];
        if (d.stamp != stamp) {
          d.stamp = stamp;
          d.score = 0;
          x.touched.push_back(doc);
        }
        d.score +=
            static_cast<float>(contribution(t.weight, posting.tf(), d.norm[t.field]));
      }
    }
    if (!budget_left) break;
  }

  struct Candidate {
    uint32_t doc, rule;
    double first;
  };
  auto by_first = [&](const Candidate& a, const Candidate& b) {
    if (a.first != b.first) return a.first > b.first;
    return a.rule < b.rule;
  };
  std::vector<Candidate> candidates;
  candidates.reserve(x.touched.size());
  for (uint32_t d : x.touched) {
    const Impl::DocState& state = x.doc_state[d];
    if (!withheld.empty() &&
        std::binary_search(withheld.begin(), withheld.end(), state.rule))
      continue;
    candidates.push_back({d, state.rule, state.score});
  }
  const size_t rerank = std::max(k, kCandidates);
  size_t keep = std::min(candidates.size(), kExactPerCandidate * rerank);
  // The best `keep`, selected (partial_sort's heap over a long post's thousand
  // candidates cost more). by_first is a total order, rule indices being distinct,
  // so the selection is exactly that of sorting all the candidates. Its order does
  // not matter: what follows ranks the selected by their exact scores, ties by rule.
  if (keep < candidates.size()) {
    std::nth_element(candidates.begin(), candidates.begin() + keep, candidates.end(),
                     by_first);
    candidates.resize(keep);
  }

  // With a minimum score (a check passes its threshold), the candidates that cannot
  // reach it are never scored in full, and most posts stop here. A candidate's
  // bound of the re-ranker's z takes the word features exactly and bounds the rest
  // from the post alone: the claim shares at most as many terms with the post as
  // it has, so its part of the post's weight in a field is at most that of the
  // post's heaviest terms (prefix sums below; BM25's tf / (tf + norm) is below 1,
  // and the cosine's dot product is at most the two norms over the shared grams);
  // the bigram coverage's weight is negative. A claim with thin evidence is held
  // to kThinEvidenceScore. A claim whose bound reaches min_score gets a second,
  // tight one: its f6, f7 and f8 exactly (a pass over its words and grams, which
  // its exact score would make anyway), f5 alone bounded. Short posts need it: a
  // tweet has fewer terms than a claim, so the first bound takes its cosine and
  // BM25 shares as 1, and without the second every claim not thin went on to the
  // exact scoring. Every bound is at least the true value, so the hits at or above
  // min_score are exactly those of the full search.
  std::vector<char> viable(candidates.size(), 1);
  if (min_score > kThinEvidenceScore && x.options.rerank && !candidates.empty()) {
    // The prefix sums, made for the first candidate that is not thin (often none
    // is), as long as any candidate's terms.
    bool sums_made = false;
    auto make_sums = [&] {
      size_t most[kFieldCount] = {0, 0, 0, 0};
      for (const Candidate& c : candidates) {
        const Impl::Doc& doc = x.docs[c.doc];
        for (int f : {kClaimField, kTitleField, kCharField})
          most[f] = std::max(most[f], x.Terms(doc, f).size());
      }
      // (A field that is off has no weights: its sums are 0.)
      prefix_sums(x.post_weight[kClaimField], most[kClaimField], &x.top_claim);
      prefix_sums(x.post_weight[kTitleField], most[kTitleField], &x.top_title);
      prefix_sums(x.post_char_sq, most[kCharField], &x.top_char_sq);
      sums_made = true;
    };
    const SimilarWeights& w = x.weights;
    bool any = false;
    for (size_t i = 0; i < candidates.size(); ++i) {
      viable[i] = 0;
      const Impl::Doc& doc = x.docs[candidates[i].doc];
      const Impl::WordView words = x.Words(doc);
      if (Impl::SurelyThin(words, post_holds)) continue;
      SimilarWeights f{};
      if (thin_evidence(word_features(doc, words, &f), f)) continue;
      if (!sums_made) make_sums();
      const size_t claim_count = x.Terms(doc, kClaimField).size();
      const size_t title_count = x.Terms(doc, kTitleField).size();
      const double cosine =
          char_norm > 0 && doc.char_norm > 0
              ? share(std::sqrt(top(x.top_char_sq, x.Terms(doc, kCharField).size())),
                      char_norm)
              : 0;
      const double claim_bm25 =
          share(top(x.top_claim, claim_count), field_max[kClaimField]);
      const double title_bm25 =
          title_count == 0 ? claim_bm25
                           : share(top(x.top_title, title_count), field_max[kTitleField]);
      double z = w[0] + std::max(0.0, w[5]) + std::max(0.0, w[6] * cosine) +
                 std::max(0.0, w[7] * claim_bm25) + std::max(0.0, w[8] * title_bm25);
      for (int j : {1, 2, 3, 4, 9, 10}) z += w[j] * f[j];
      if (z < z_needed) continue;
      viable[i] = tight_z(candidates[i].doc, &f) >= z_needed;
      any = any || viable[i];
    }
    if (!any) return hits;
  }

  // The exact first-stage score of each, from the claim's side: every field, every
  // term the post shares with it.
  std::vector<std::array<double, kFieldCount>> field_score(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    Candidate& c = candidates[i];
    double s = 0;
    for (const FieldTerms& ft : fields) {
      const Field f = ft.field;
      const double sum = field_sum(c.doc, f);
      if (field_max[f] > 0) s += kFieldWeight[f] * sum / field_max[f];
      field_score[i][f] = sum;
    }
    c.first = s / weight_sum;
  }
  std::vector<size_t> order(candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  keep = std::min(order.size(), rerank);
  std::partial_sort(
      order.begin(), order.begin() + keep, order.end(),
      [&](size_t a, size_t b) { return by_first(candidates[a], candidates[b]); });
  order.resize(keep);

  // Stage 2: features and the logistic re-ranker.
  for (size_t i : order) {
    if (!viable[i]) continue;  // its score is below min_score
    const Candidate& c = candidates[i];
    const Impl::Doc& doc = x.docs[c.doc];
    SimilarHit hit;
    hit.rule_index = doc.rule_index;
    auto& f = hit.features;
    f[0] = 1;
    const double shared = word_features(doc, x.Words(doc), &f);
    if (!x.Terms(doc, kBigramField).empty()) {
      double b_part = 0, b_all = 0;
      for (const TermFreq& t : x.Terms(doc, kBigramField)) {
        double idf = x.Idf(kBigramField, t.id());
        b_all += idf;
        if (Marked(x.bigram_present, t.id())) b_part += idf;
      }
      f[5] = b_all > 0 ? b_part / b_all : 0;
    }
    f[6] = char_cosine(doc);
    bm25_shares(doc, field_score[i][kClaimField], field_score[i][kTitleField], &f);
    if (x.options.rerank) {
      double z = 0;
      for (int j = 0; j < kSimilarFeatureCount; ++j) z += x.weights[j] * f[j];
      hit.score = Sigmoid(z);
      if (thin_evidence(shared, f)) hit.score = std::min(hit.score, kThinEvidenceScore);
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
  while (!hits.empty() && hits.back().score < min_score) hits.pop_back();
  return hits;
}

std::vector<ByteRange> SimilarIndex::Spans(const NormalizedText& post,
                                           uint32_t rule_index) const {
  Impl& x = *impl_;
  std::vector<ByteRange> out;
  auto it = std::find_if(x.docs.begin(), x.docs.end(),
                         [&](const Impl::Doc& d) { return d.rule_index == rule_index; });
  if (it == x.docs.end()) return out;
  std::vector<uint32_t> vocabulary;
  for (int f : {kClaimField, kTitleField}) {
    for (const TermFreq& t : x.Terms(*it, f)) vocabulary.push_back(t.id());
  }
  std::sort(vocabulary.begin(), vocabulary.end());
  // Runs of matched words; stop words inside a run keep it going.
  int64_t run_first = -1, run_last = -1;
  auto flush = [&]() {
    if (run_first < 0) return;
    out.push_back(
        post.OriginalRange(post.words[run_first].begin, post.words[run_last].end));
    run_first = run_last = -1;
  };
  for (uint32_t i = 0; i < post.words.size(); ++i) {
    const ByteRange& r = post.words[i];
    const std::string w = post.text.substr(r.begin, r.end - r.begin);
    if (!x.IsContent(w)) continue;  // a stop word or URL: neither starts nor ends a run
    uint32_t id = x.words.Find(HashBytes(x.Stem(it->stemmer, w)));
    bool matched =
        id != kNone && std::binary_search(vocabulary.begin(), vocabulary.end(), id);
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

double LargestSumBound(const std::vector<float>& values, size_t most) {
  // Floats order as these keys do (the sign flipped; a negative's other bits too).
  auto key_of = [](float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return bits ^ (static_cast<uint32_t>(static_cast<int32_t>(bits) >> 31) | 0x80000000u);
  };
  const float* from = values.data();
  const size_t count = values.size();
  if (most >= count) {  // all of them
    double sum = 0;
    for (size_t i = 0; i < count; ++i) sum += from[i];
    return sum;
  }
  if (most == 0) return 0;
  // A few (a claim's or a title's most words against a post's): exactly, the
  // largest so far kept in order. A value rarely beats the smallest of them, so
  // the branch is a sure guess; the buckets' tables (4 KB cleared) and two passes
  // cost more here than the inserts. (A warm check at 10k rules asks 14 and 3 of
  // about 180 weights, besides 109 of a thousand character grams.)
  constexpr size_t kFewMost = 16;
  if (most <= kFewMost) {
    float top[kFewMost];
    std::fill(top, top + most, -std::numeric_limits<float>::infinity());
    for (size_t i = 0; i < count; ++i) {
      const float v = from[i];
      if (!(v > top[most - 1])) continue;
      size_t j = most - 1;
      for (; j > 0 && top[j - 1] < v; --j) top[j] = top[j - 1];
      top[j] = v;
    }
    double sum = 0;
    for (size_t j = 0; j < most; ++j) sum += top[j];
    return sum;
  }
  // The keys' range cut into kBuckets (the keys of a post's weights span a few
  // binades, so the boundary's bucket holds values close together, and a small
  // table is cleared), each bucket's count, sum and largest value in one pass; the
  // buckets from the top added while they fit in `most`, then the rest counted at
  // the largest value of the bucket that does not. (Summing the values above the
  // boundary in a pass of their own, one double add after another, was a chain of
  // dependent adds: twice the time in wasm. Selecting the exact values of the
  // boundary's bucket, in rounds, took a third more instructions.)
  constexpr uint32_t kBuckets = 256;
  uint32_t low = UINT32_MAX, high = 0;
  for (size_t i = 0; i < count; ++i) {
    const uint32_t key = key_of(from[i]);
    low = std::min(low, key);
    high = std::max(high, key);
  }
  if (low == high) return static_cast<double>(most) * from[0];  // all equal
  int shift = 0;
  while (((high - low) >> shift) >= kBuckets) ++shift;
  uint32_t counts[kBuckets] = {};
  double sums[kBuckets] = {};
  float largest[kBuckets];
  std::fill(largest, largest + kBuckets, -std::numeric_limits<float>::infinity());
  for (size_t i = 0; i < count; ++i) {
    const uint32_t bucket = (key_of(from[i]) - low) >> shift;
    ++counts[bucket];
    sums[bucket] += from[i];
    largest[bucket] = std::max(largest[bucket], from[i]);
  }
  // (The buckets hold `count` > `need` values: this stops at one.)
  size_t need = most;
  double sum = 0;
  uint32_t b = (high - low) >> shift;
  while (counts[b] <= need) {
    need -= counts[b];
    sum += sums[b];
    if (need == 0) return sum;
    --b;
  }
  return sum + static_cast<double>(need) * largest[b];
}

}  // namespace factlens
