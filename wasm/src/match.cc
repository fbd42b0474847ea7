// Copyright factlens authors.
//
// Three matchers over normalised text, each indexed per list at compile time:
//  - patterns: one RE2 per pattern, compiled from the pattern rewritten by
//    NormalizePattern so that its literals are in the same form as post text;
//  - keywords: terms normalised into word sequences, looked up in a per-post word
//    index, then checked for `none` terms and the `within` proximity window;
//  - urls: canonical page URLs and domains in hash maps, looked up for each URL
//    the normaliser found in the post (and each parent domain of its host).
//  - similar: a SimilarIndex (similar.h) over all rules' claims; its hits at or above
//    the calibrated threshold become kSimilar matches for rules with match.similar.
// Patterns and keyword sets are "items" of the list's prefilter (prefilter.h):
// only the items whose atoms occur in a post are evaluated.
#include "factlens/match.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "factlens/binary.h"
#include "factlens/hash.h"
#include "factlens/prefilter.h"
#include "factlens/runs.h"
#include "re2/re2.h"
#include "re2/regexp.h"

namespace factlens {
namespace {

// Score of a match, by kind: how directly the evidence names the claim. Patterns
// and exact pages are written for one claim; a domain or a bag of words is a
// little less specific.
constexpr double kPatternScore = 0.9;
constexpr double kKeywordScore = 0.8;
constexpr double kUrlScore = 1.0;
constexpr double kDomainScore = 0.85;
constexpr size_t kMaxSpansPerMatch = 8;

// Above this many (estimated, upper-bound) instructions a pattern is compiled at
// load, so that one over RE2's budget still fails the load; below it RE2 cannot
// fail (its budget, 8 MB, allows 349k instructions for the smaller, reverse
// program), and compiling can wait. Proximity patterns such as `a.{0,80}b`
// (estimate 6k, program 800) stay lazy; `\pL{2}` and up are compiled at load.
constexpr int64_t kCompileAtLoadInstructions = 40000;
// The patterns compiled at load, together, in RE2 instructions (forward and
// reverse programs: 8 bytes each, 2-3 us each to compile). Each pattern is
// bounded by RE2's budget, but a list of thousands of them (`\pL{60}` is 140k
// instructions and 0.3 s) would cost minutes and gigabytes; this bounds a load to
// a few seconds and 8 MB of programs.
constexpr int64_t kMaxLoadCompiledInstructions = 1000000;

const re2::RE2::Options& Re2Options() {
  static const re2::RE2::Options* options = [] {
    auto* o = new re2::RE2::Options();
    o->set_log_errors(false);
    o->set_case_sensitive(false);
    o->set_max_mem(8 << 20);
    return o;
  }();
  return *options;
}

// Re2Options, case-sensitive: for the programs LazyRegex::ForCheck runs on the
// lowered text.
const re2::RE2::Options& Re2CaseSensitiveOptions() {
  static const re2::RE2::Options* options = [] {
    auto* o = new re2::RE2::Options(Re2Options());
    o->set_case_sensitive(true);
    return o;
  }();
  return *options;
}

// U+017F (long s) and U+212A (Kelvin sign) in UTF-8: the two code points outside
// ASCII that a case-insensitive ASCII letter (s, k) matches.
constexpr std::string_view kLongS = "\xC5\xBF", kKelvinSign = "\xE2\x84\xAA";

// Where in a post a pattern's matches can lie. A match of a concatenation is its
// pieces' matches one after the other, and every match of a piece with atoms
// (ExtractAtoms, ASCII lower-cased, on normalised text) holds one of them: so a
// match starts at most `before` bytes (MaxMatchBytes of the pieces up to and with
// that one) ahead of where an atom's occurrence ends, and ends at most `after`
// bytes (the piece and those after it) past where one starts. RE2 then searches
// only between the first occurrences' bound and the last ones': an unanchored
// search for a pattern the prefilter picked but the post does not match otherwise
// runs its DFA over the whole post, most of what a check's patterns cost.
struct SearchWindow {
  // An atom, found by looking for its rarest byte (memchr stops less often than on
  // a first letter such as 'a' or 's') and comparing the rest around it.
  struct Atom {
    std::string text;
    size_t key = 0;  // the offset of its rarest byte
  };
  struct Piece {
    std::vector<Atom> atoms;
    int64_t before = -1, after = -1;  // -1: no bound
  };
  std::vector<Piece> pieces;  // at most Prefilter::kMaxGroups, each with a bound
};

constexpr size_t kMaxWindowAtoms = 4;

// Returns how common byte `c` is in normalised text, 0 the rarest: English letter
// frequencies, digits rarer than letters, the space the most common of all; other
// bytes (UTF-8 of other scripts, URL punctuation) count as rare.
int ByteRank(char c) {
  static constexpr char kByCommonness[] = " etaoinsrhldcumfpgwybvkxjqz0123456789";
  const char* at = std::strchr(kByCommonness, c);
  if (c == 0 || at == nullptr) return 0;
  return static_cast<int>(sizeof(kByCommonness)) - static_cast<int>(at - kByCommonness);
}

// Finds `atom` in `t`: sets *first to its first occurrence and, with `want_last`,
// *last to its last (else *last = *first). Returns false if it does not occur.
bool FindAtom(std::string_view t, const SearchWindow::Atom& atom, bool want_last,
              size_t* first, size_t* last) {
  const size_t size = atom.text.size(), key = atom.key;
  if (size > t.size()) return false;
  const char want = atom.text[key];
  bool found = false;
  // Candidate positions of the key byte: from `key` (room before it) to the last
  // place the atom still fits.
  const char* const base = t.data();
  const char* p = base + key;
  const char* const stop = base + (t.size() - size) + key + 1;
  while (p < stop) {
    p = static_cast<const char*>(std::memchr(p, want, static_cast<size_t>(stop - p)));
    if (p == nullptr) break;
    const char* at = p - key;
    // (The ends first, inline: most places holding the key byte differ there.)
    if (at[0] == atom.text[0] && at[size - 1] == atom.text[size - 1] &&
        std::memcmp(at, atom.text.data(), size) == 0) {
      const size_t pos = static_cast<size_t>(at - base);
      if (!found) {
        found = true;
        *first = pos;
        if (!want_last) break;
      }
      *last = pos;
    }
    ++p;
  }
  if (found && !want_last) *last = *first;
  return found;
}

// Returns the search window of the compiled `re` (its own parse, with the flags it
// matches with).
SearchWindow WindowOf(const re2::RE2& re) {
  SearchWindow w;
  if (!re.ok()) return w;
  re2::Regexp* top = re.Regexp();
  while (top->op() == re2::kRegexpCapture) top = top->sub()[0];
  std::vector<re2::Regexp*> subs;
  if (top->op() == re2::kRegexpConcat) {
    subs.assign(top->sub(), top->sub() + top->nsub());
  } else {
    subs.push_back(top);
  }
  std::vector<int64_t> most(subs.size());
  for (size_t i = 0; i < subs.size(); ++i) most[i] = MaxMatchBytes(subs[i]);
  // The sum of most[begin, end), or -1 if one of them has no bound.
  auto span = [&](size_t begin, size_t end) {
    int64_t sum = 0;
    for (size_t i = begin; i < end; ++i) {
      if (most[i] < 0) return int64_t{-1};
      sum += most[i];
    }
    return sum;
  };
  for (size_t i = 0; i < subs.size() && w.pieces.size() < Prefilter::kMaxGroups; ++i) {
    SearchWindow::Piece piece;
    piece.before = span(0, i + 1);
    piece.after = span(i, subs.size());
    if (piece.before < 0 && piece.after < 0) continue;
    RegexpAtoms atoms = ExtractAtoms(subs[i]);
    if (!atoms.usable) continue;
    // Each atom is a scan of the post: a piece of many variants costs more than
    // its window saves.
    if (atoms.groups[0].size() > kMaxWindowAtoms) continue;
    for (std::string& text : atoms.groups[0]) {
      SearchWindow::Atom atom;
      for (char& c : text) c = AsciiLower(c);
      for (size_t k = 1; k < text.size(); ++k) {
        if (ByteRank(text[k]) < ByteRank(text[atom.key])) atom.key = k;
      }
      atom.text = std::move(text);
      piece.atoms.push_back(std::move(atom));
    }
    w.pieces.push_back(std::move(piece));
  }
  return w;
}

// The post's text with ASCII lower-cased, made on first need, for finding atoms
// (which are lower-case) and for the case-sensitive programs (LazyRegex). Normalize
// lower-cases every letter but a canonical URL's path, so a post without URLs is
// used as it is.
class LoweredText {
 public:
  explicit LoweredText(const NormalizedText& post) : post_(post), text_(post.text) {}
  size_t size() const { return text_.size(); }
  std::string_view Get() {
    if (!made_) {
      made_ = true;
      // (Capitals are only in URLs: their words in the text are post_.urls.)
      const bool capitals =
          std::any_of(post_.urls.begin(), post_.urls.end(), [](const std::string& url) {
            return std::any_of(url.begin(), url.end(),
                               [](char c) { return c >= 'A' && c <= 'Z'; });
          });
      if (capitals) {
        lowered_.assign(text_.begin(), text_.end());
        for (char& c : lowered_) c = AsciiLower(c);
        text_ = lowered_;
      }
    }
    return text_;
  }
  // True if the text holds U+017F (long s) or U+212A (Kelvin sign): the two code
  // points outside ASCII that a case-insensitive ASCII letter matches. Normalize
  // folds both in words; a URL's path keeps them as written.
  // (Only a URL can hold them: the test "no post keeps a case form of k or s"
  // checks the rest of the text. A URL's word in the text is its canonical form in
  // post_.urls, so those few bytes are searched, not the whole post: two searches
  // of a bench post were 2.7% of a check against pattern rules in wasm.)
  bool HasAsciiFoldOutsider() {
    if (outsider_ < 0) {
      outsider_ =
          std::any_of(post_.urls.begin(), post_.urls.end(), [](std::string_view url) {
            return url.find(kLongS) != std::string_view::npos ||
                   url.find(kKelvinSign) != std::string_view::npos;
          });
    }
    return outsider_ == 1;
  }

 private:
  const NormalizedText& post_;
  std::string_view text_;
  std::string lowered_;
  bool made_ = false;
  int outsider_ = -1;  // HasAsciiFoldOutsider, once known
};

// Returns `text` with U+017F and U+212A as s and k, and in *starts the place just
// after each of them in the result. The prefilter's atoms are ASCII lower case and a
// case-insensitive pattern matches those two where its s and k stand, so its atoms
// occur in the folded text wherever it matches the text; and where a word-anchored
// atom could start after one of them (RE2's \b sees no word byte there), *starts
// lets it start in the folded text, where the byte before is now a letter.
std::string FoldAsciiFoldOutsiders(std::string_view text, std::vector<uint32_t>* starts) {
  std::string folded;
  folded.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, kLongS.size(), kLongS) == 0) {
      folded += 's';
      i += kLongS.size();
    } else if (text.compare(i, kKelvinSign.size(), kKelvinSign) == 0) {
      folded += 'k';
      i += kKelvinSign.size();
    } else {
      folded += text[i++];
      continue;
    }
    starts->push_back(static_cast<uint32_t>(folded.size()));
  }
  return folded;
}

// True if, for a text without U+017F and U+212A, `pattern` searched case-sensitively
// in the text ASCII-lowered finds exactly the matches (the same bytes) the
// case-insensitive program finds in the text itself. That holds for a pattern of
// ASCII bytes without capitals whose escapes and groups cannot name a capital or
// turn folding off: then each literal letter, class and \w means its lower-case
// letters, and those match in the lowered text where either case stood in the
// original; a case-insensitive ASCII letter matches nothing else but U+017F (s)
// and U+212A (k), which the caller rules out (LoweredText::HasAsciiFoldOutsider).
// Refused, to be searched as before: any byte above 0x7F or capital; an escaped
// letter or digit other than \b \B \w \W \s \S \d \D \A \z (\x41, \101, \pL,
// \Q...\E, \C could name a capital or a case class); a group with flags ("(?"
// not followed by ':', as "(?-i:" turns folding off); a POSIX class ("[:", as
// [[:upper:]] folds to every letter). The test compares both programs on texts
// that hold every case.
bool CaseSensitiveOnLowered(std::string_view pattern) {
  const size_t n = pattern.size();
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(pattern[i]);
    if (c >= 0x80 || (c >= 'A' && c <= 'Z')) return false;
    if (c == '\\') {
      if (++i == n) return false;
      const unsigned char e = static_cast<unsigned char>(pattern[i]);
      if (e >= 0x80) return false;
      if (IsAsciiAlnum(e) && std::string_view("bBwWsSdDAz").find(static_cast<char>(e)) ==
                                 std::string_view::npos) {
        return false;
      }
    } else if (c == '(' && i + 1 < n && pattern[i + 1] == '?') {
      if (i + 2 >= n || pattern[i + 2] != ':') return false;
    } else if (c == '[' && i + 1 < n && pattern[i + 1] == ':') {
      return false;
    }
  }
  return true;
}

// One pattern's RE2 programs, each compiled on first use. Lists holding the same
// normalised pattern share one LazyRegex through the registry below.
//   - Get(): the program as the list means it, case-insensitive (Re2Options). The
//     load's checks and budget of large patterns read this one.
//   - ForCheck(): for a CaseSensitiveOnLowered pattern, a case-sensitive program
//     searched in the post's lowered text (unless the post holds U+017F or
//     U+212A): the same matches, from a program that costs half as much to
//     compile (RE2 builds a class per folded letter, and \w, \W take in U+017F and
//     U+212A) and is smaller to run. The choice depends on the pattern and the
//     post alone. A large pattern, compiled case-insensitively at load for its
//     checks, then holds both (folding only adds to a program).
class LazyRegex {
 public:
  explicit LazyRegex(std::string pattern)
      : pattern_(std::move(pattern)), sensitive_ok_(CaseSensitiveOnLowered(pattern_)) {}
  const std::string& pattern() const { return pattern_; }
  const re2::RE2& Get() const {
    std::call_once(folded_.once, [&] { folded_.Compile(pattern_, Re2Options()); });
    return *folded_.re;
  }
  // Whether either program is compiled (for CompiledList::stats).
  bool compiled() const { return folded_.re != nullptr || plain_.re != nullptr; }

  // The program a check searches with, its window, and whether it searches the
  // lowered text (else the text as it is).
  struct Search {
    const re2::RE2* re;
    const SearchWindow* window;
    bool lowered;
  };
  Search ForCheck(LoweredText* text, bool case_sensitive_allowed) const {
    if (case_sensitive_allowed && sensitive_ok_ && !text->HasAsciiFoldOutsider()) {
      std::call_once(plain_.once,
                     [&] { plain_.Compile(pattern_, Re2CaseSensitiveOptions()); });
      return {plain_.re.get(), &plain_.window, true};
    }
    const re2::RE2& re = Get();
    return {&re, &folded_.window, false};
  }

 private:
  struct Program {
    std::once_flag once;
    std::unique_ptr<re2::RE2> re;
    SearchWindow window;
    void Compile(const std::string& pattern, const re2::RE2::Options& options) {
      re = std::make_unique<re2::RE2>(pattern, options);
      window = WindowOf(*re);
    }
  };
  std::string pattern_;
  const bool sensitive_ok_;
  mutable Program folded_, plain_;
};

// Sets *range to the bytes [begin, end) of the post that hold every match of a
// pattern with window `w` (see SearchWindow); all of it without a window, or for a
// short text. Returns false if no match can be: a piece's atoms do not occur, or
// the bounds leave no room.
bool SearchRange(const SearchWindow& w, LoweredText* lowered, ByteRange* range) {
  constexpr size_t kShortText = 256;  // searched whole: finding atoms costs more
  const size_t n = lowered->size();
  *range = {0, static_cast<uint32_t>(n)};
  // (A post holding U+017F or U+212A: the atoms may be spelt with them there.)
  if (w.pieces.empty() || n < kShortText || lowered->HasAsciiFoldOutsider()) return true;
  const std::string_view t = lowered->Get();
  size_t begin = 0, end = n;
  for (const SearchWindow::Piece& piece : w.pieces) {
    size_t first_end = SIZE_MAX, last_begin = 0;
    bool found = false;
    for (const SearchWindow::Atom& atom : piece.atoms) {
      size_t first, last;
      if (!FindAtom(t, atom, piece.after >= 0, &first, &last)) continue;
      found = true;
      first_end = std::min(first_end, first + atom.text.size());
      last_begin = std::max(last_begin, last);
    }
    if (!found) return false;
    if (piece.before >= 0 && first_end > static_cast<uint64_t>(piece.before))
      begin = std::max(begin, first_end - static_cast<size_t>(piece.before));
    if (piece.after >= 0)
      end = std::min(end, last_begin + static_cast<size_t>(std::min<int64_t>(
                                           piece.after, static_cast<int64_t>(n))));
  }
  if (begin > end) return false;
  *range = {static_cast<uint32_t>(begin), static_cast<uint32_t>(end)};
  return true;
}

// Normalised pattern -> the live LazyRegex for it, while any list holds it.
class RegexRegistry {
 public:
  static RegexRegistry& Get() {
    static RegexRegistry* registry = new RegexRegistry();
    return *registry;
  }
  std::shared_ptr<LazyRegex> Intern(const std::string& pattern) {
    std::lock_guard<std::mutex> lock(mu_);
    std::weak_ptr<LazyRegex>& slot = map_[pattern];
    std::shared_ptr<LazyRegex> live = slot.lock();
    if (!live) {
      live = std::make_shared<LazyRegex>(pattern);
      slot = live;
      if (map_.size() > 1024 && map_.size() > 2 * last_sweep_size_) Sweep();
    }
    return live;
  }

 private:
  void Sweep() {
    for (auto it = map_.begin(); it != map_.end();) {
      it = it->second.expired() ? map_.erase(it) : std::next(it);
    }
    last_sweep_size_ = map_.size();
  }
  std::mutex mu_;
  std::unordered_map<std::string, std::weak_ptr<LazyRegex>> map_;
  size_t last_sweep_size_ = 0;
};

// A pattern of the list: its normalised text lives in Matchers::pattern_text, and
// its LazyRegex is looked up in the registry on first need (when the prefilter
// first picks it, or at load for a pattern that must be checked then): most of a
// large list's patterns are never a candidate, and each interned one costs a
// registry entry, a copy of its text and a shared block.
struct CompiledPattern {
  uint32_t rule_index;
  uint32_t text_begin, text_size;  // in Matchers::pattern_text
  mutable std::shared_ptr<LazyRegex> re;
};

// A keyword term: its normalised words, one space between each, at
// [begin, begin + size) of Matchers::keyword_text; `prefix` makes the last word
// match any word that starts with it (the term was written with a trailing '*').
// One string for every term of a list, not a vector of strings per term: at 100k
// rules the keyword sets took 13 MB natively for 2.7 MB of compiled form, each
// allocation a page write that a restore into a fresh module pays for.
struct Term {
  uint32_t begin = 0, size = 0;
  bool prefix = false;
};

// The terms [begin, begin + count) of Matchers::keyword_terms.
struct TermRun {
  uint32_t begin = 0, count = 0;
  bool empty() const { return count == 0; }
};

struct CompiledKeywordSet {
  uint32_t rule_index;
  TermRun all, any, none;
  int within;
};

// A run of terms, to iterate.
struct TermSpan {
  const Term *first, *last;
  const Term* begin() const { return first; }
  const Term* end() const { return last; }
};

// The number of words of a term's text (words one space apart).
size_t WordCount(std::string_view text) {
  return 1 + static_cast<size_t>(std::count(text.begin(), text.end(), ' '));
}

// Calls `f` on each word of a term's text (words one space apart).
template <typename F>
void ForEachWord(std::string_view text, F&& f) {
  size_t start = 0;
  for (;;) {
    const size_t space = text.find(' ', start);
    if (space == std::string_view::npos) {
      f(text.substr(start));
      return;
    }
    f(text.substr(start, space - start));
    start = space + 1;
  }
}

struct Occurrence {
  uint32_t first_word, last_word;  // inclusive
};

// Word positions of one post, made once per Match call when keyword sets exist,
// for finding where a term's first word occurs. Most posts ask for one or two
// terms (the bench's at 10k rules: 1.8 a post that asks), so hashing every word of
// the post into a table first cost more than the finds: the positions are grouped
// by word length instead (two passes, no hashing), and a find reads the words of
// its first word's length. A post whose finds read more than a few times its words
// (many finds, or a hostile post of words of one length) then gets the table: an
// open-addressing table from each distinct word to its first position, and each
// position's next occurrence of the same word.
class PostWords {
 public:
  explicit PostWords(const NormalizedText& post)
      : post_(post),
        text_end_(post.text.data() + post.text.size()),
        seed_(TextHashSeed()) {
    // Counted, then placed in order: each length's positions increase.
    const size_t n = post.words.size();
    uint32_t at[kLengths + 1] = {};
    for (uint32_t i = 0; i < n; ++i) ++at[LengthOf(i)];
    uint32_t total = 0;
    for (size_t l = 0; l < kLengths; ++l) {
      by_length_begin_[l] = total;
      total += at[l];
      at[l] = by_length_begin_[l];
    }
    by_length_begin_[kLengths] = total;
    by_length_.resize(n);
    for (uint32_t i = 0; i < n; ++i) by_length_[at[LengthOf(i)]++] = i;
  }

  std::string_view Word(uint32_t i) const {
    const ByteRange& w = post_.words[i];
    return std::string_view(post_.text).substr(w.begin, w.end - w.begin);
  }

  // Returns every occurrence in the post of the term of words `text` (one space
  // apart), the last one a prefix if `prefix`, in order.
  std::vector<Occurrence> Find(std::string_view text, bool prefix) {
    std::vector<Occurrence> out;
    const size_t first_end = std::min(text.find(' '), text.size());
    const std::string_view first = text.substr(0, first_end);
    const size_t n = WordCount(text);
    auto rest_matches = [&](uint32_t start) {
      if (start + n > post_.words.size()) return false;
      size_t at = first_end + 1;  // the k-th word's start in `text`
      for (size_t k = 1; k < n; ++k) {
        const size_t end = std::min(text.find(' ', at), text.size());
        const std::string_view term_word = text.substr(at, end - at);
        at = end + 1;
        std::string_view w = Word(start + static_cast<uint32_t>(k));
        bool last = k + 1 == n;
        if (last && prefix ? w.substr(0, term_word.size()) != term_word
                           : w != term_word) {
          return false;
        }
      }
      return true;
    };
    if (n == 1 && prefix) {
      for (uint32_t i = 0; i < post_.words.size(); ++i) {
        if (Word(i).substr(0, first.size()) == first) out.push_back({i, i});
      }
      return out;
    }
    auto add_if_matches = [&](uint32_t start) {
      if (rest_matches(start))
        out.push_back({start, start + static_cast<uint32_t>(n - 1)});
    };
    if (first_.empty()) {
      const size_t l = std::min(first.size(), kLengths - 1);
      const uint32_t begin = by_length_begin_[l], end = by_length_begin_[l + 1];
      scanned_ += end - begin;
      if (scanned_ <= kScanBudget * post_.words.size() + 64) {
        for (uint32_t k = begin; k < end; ++k) {
          if (Word(by_length_[k]) == first) add_if_matches(by_length_[k]);
        }
        return out;
      }
      BuildTable();
    }
    for (uint32_t start = first_[SlotOf(first)]; start != kNoWord; start = next_[start])
      add_if_matches(start);
    return out;
  }

  ByteRange OriginalRange(const Occurrence& o) const {
    return post_.OriginalRange(post_.words[o.first_word].begin,
                               post_.words[o.last_word].end);
  }

 private:
  static constexpr uint32_t kNoWord = UINT32_MAX;
  // Lengths 0 to kLengths - 2 each have their group; longer words share the last.
  static constexpr size_t kLengths = 32;
  // The finds may read this many times the post's words by length before the
  // table is built: a table costs about what ten such reads do.
  static constexpr size_t kScanBudget = 3;

  size_t LengthOf(uint32_t i) const {
    const ByteRange& w = post_.words[i];
    return std::min<size_t>(w.end - w.begin, kLengths - 1);
  }

  void BuildTable() {
    const size_t n = post_.words.size();
    // Room for every word of a usual post at once; a long one's distinct words
    // grow it (a post of 300k repeated words needs a few slots, not a million).
    size_t capacity = 64;
    while (capacity < 2 * n && capacity < (1u << 14)) capacity *= 2;
    first_.assign(capacity, kNoWord);
    mask_ = first_.size() - 1;
    next_.assign(n, kNoWord);
    // Backwards, so that each word's positions chain in increasing order.
    for (uint32_t i = static_cast<uint32_t>(n); i-- > 0;) {
      size_t slot = SlotOf(Word(i), text_end_);
      if (first_[slot] == kNoWord && 2 * ++distinct_ > first_.size()) {
        Grow();  // at most half full; sized by distinct words, not all of them
        slot = SlotOf(Word(i), text_end_);
      }
      next_[i] = first_[slot];
      first_[slot] = i;
    }
  }

  // Returns the slot of `word`: the one holding its first position, or the empty
  // one where it would go (the table is at most half full). The hash is keyed
  // (factlens/hash.h): the words are the page's.
  // `readable_end`: the end of the text `word` lies in (factlens/hash.h's
  // LowBytes), or null.
  size_t SlotOf(std::string_view word, const char* readable_end = nullptr) const {
    for (size_t i = TextHash(word, seed_, readable_end) & mask_;; i = (i + 1) & mask_) {
      if (first_[i] == kNoWord || SameText(Word(first_[i]), word)) return i;
    }
  }

  // Doubles the table, each word to its slot in the larger one.
  void Grow() {
    std::vector<uint32_t> old(2 * first_.size(), kNoWord);
    old.swap(first_);
    mask_ = first_.size() - 1;
    for (uint32_t first : old) {
      if (first != kNoWord) first_[SlotOf(Word(first), text_end_)] = first;
    }
  }

  const NormalizedText& post_;
  const char* text_end_;  // (the post's words are read with LowBytes)
  const uint64_t seed_;
  std::vector<uint32_t> by_length_;         // positions, by length, each in order
  uint32_t by_length_begin_[kLengths + 1];  // each length's first in by_length_
  size_t scanned_ = 0;                      // positions the finds have read
  size_t distinct_ = 0;                     // words in the table
  std::vector<uint32_t> first_;  // by slot: a word's first position (empty: no table)
  std::vector<uint32_t> next_;   // by position: the word's next position
  size_t mask_ = 0;
};

// Returns the term `written` (normalised), its words appended to `text`.
Term MakeTerm(const std::string& written, std::string* text) {
  Term term;
  std::string_view in = written;
  if (!in.empty() && in.back() == '*') {
    term.prefix = true;
    in.remove_suffix(1);
  }
  const std::string normalised = NormalizeToString(in);
  // Words are what lies between spaces, but for an empty last one (a term's words
  // were split so before they were kept together).
  std::string_view words = normalised;
  if (!words.empty() && words.back() == ' ') words.remove_suffix(1);
  term.begin = static_cast<uint32_t>(text->size());
  term.size = static_cast<uint32_t>(words.size());
  text->append(words);
  return term;
}

// Finds the narrowest window holding one occurrence of every group. Returns false
// if some group has none, or the narrowest is wider than `within` (0: any width).
bool BestWindow(const std::vector<std::vector<Occurrence>>& groups, int within,
                std::vector<Occurrence>* chosen) {
  struct Event {
    Occurrence occ;
    size_t group;
  };
  std::vector<Event> events;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty()) return false;
    for (const Occurrence& o : groups[g]) events.push_back({o, g});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.occ.first_word < b.occ.first_word;
  });
  // Sweep by start; keep the latest occurrence of each group. When every group
  // has one, the window they span is a candidate; the latest ones give the
  // narrowest window that ends with the current event.
  std::vector<const Occurrence*> latest(groups.size(), nullptr);
  size_t seen = 0;
  uint32_t best_width = UINT32_MAX;
  for (const Event& e : events) {
    if (latest[e.group] == nullptr) ++seen;
    latest[e.group] = &e.occ;
    if (seen < groups.size()) continue;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (const Occurrence* o : latest) {
      lo = std::min(lo, o->first_word);
      hi = std::max(hi, o->last_word);
    }
    uint32_t width = hi - lo + 1;
    if (width < best_width) {
      best_width = width;
      chosen->clear();
      for (const Occurrence* o : latest) chosen->push_back(*o);
    }
  }
  return within == 0 || best_width <= static_cast<uint32_t>(within);
}

// Returns true if `entry` names a whole domain ("example.com") rather than a page.
bool IsDomainEntry(std::string_view entry) {
  return entry.find("://") == std::string_view::npos &&
         entry.find('/') == std::string_view::npos;
}

std::string_view WithoutQuery(std::string_view canonical) {
  return canonical.substr(0, canonical.find('?'));
}

std::string_view WithoutPort(std::string_view host) {
  return host.substr(0, host.find(':'));
}

}  // namespace

const char* MatchKindName(MatchKind kind) {
  switch (kind) {
    case MatchKind::kPattern:
      return "pattern";
    case MatchKind::kKeywords:
      return "keywords";
    case MatchKind::kUrl:
      return "url";
    case MatchKind::kDomain:
      return "domain";
    case MatchKind::kSimilar:
      return "similar";
  }
  return "pattern";
}

struct CompiledList::Matchers {
  // Items, as the prefilter numbers them: patterns first, then keyword sets.
  std::vector<CompiledPattern> patterns;
  std::string pattern_text;  // the normalised patterns, one after another
  std::vector<CompiledKeywordSet> keyword_sets;
  std::vector<Term> keyword_terms;  // the sets' terms, each set's in one run
  std::string keyword_text;         // the terms' words
  TermSpan Terms(const TermRun& run) const {
    const Term* first = keyword_terms.data() + run.begin;
    return {first, first + run.count};
  }
  std::string_view Text(const Term& t) const {
    return std::string_view(keyword_text).substr(t.begin, t.size);
  }
  // URLs need no prefilter: a post's few URLs are looked up directly.
  std::unordered_map<std::string, std::vector<uint32_t>> pages;    // canonical URL
  std::unordered_map<std::string, std::vector<uint32_t>> domains;  // host, no www.
  // The kSimilar matcher's index: the claims of the rules with match.similar (null
  // if none has). When every rule has match.similar it serves Search too.
  std::unique_ptr<SimilarIndex> similar;
  bool any_similar = false;               // some rule has match.similar
  std::vector<uint8_t> rule_has_similar;  // by rule index
  bool similar_all = false;               // every rule has: `similar` is the search index
  SimilarOptions similar_options;
  // Search's index over every rule's claim, built on the first Search: a reader's
  // engine only matches, and a list of 100k rules few of which use match.similar
  // should not carry an index of all 100k claims for it.
  mutable std::unique_ptr<SimilarIndex> search_index;
  mutable std::once_flag search_index_once;
  Prefilter prefilter;
  bool use_prefilter = true;
  bool use_case_sensitive = true;  // CompileOptions::use_case_sensitive

  std::string_view PatternText(const CompiledPattern& p) const {
    return std::string_view(pattern_text).substr(p.text_begin, p.text_size);
  }
  // Returns the shared program of `p`, interning it on first need.
  const LazyRegex& Regex(const CompiledPattern& p) const {
    if (!p.re) p.re = RegexRegistry::Get().Intern(std::string(PatternText(p)));
    return *p.re;
  }
  void AddPattern(uint32_t rule_index, std::string_view text) {
    patterns.push_back({rule_index, static_cast<uint32_t>(pattern_text.size()),
                        static_cast<uint32_t>(text.size()), nullptr});
    pattern_text.append(text);
  }
};

namespace {

// Moves what the similarity index reads of `rule` (index `r`) into `doc`: the claim,
// then each match.similar phrasing that differs from it, the fact-check's title
// and the languages.
void TakeSimilarDoc(uint32_t r, Rule& rule, SimilarDoc* doc) {
  doc->rule_index = r;
  doc->phrasings.reserve(1 + rule.similar.size());
  doc->phrasings.push_back(std::move(rule.claim));
  for (std::string& p : rule.similar) {
    if (p != doc->phrasings.front()) doc->phrasings.push_back(std::move(p));
  }
  doc->title = std::move(rule.review.title);
  doc->languages = std::move(rule.languages);
}

// Returns the claims to index (each with its match.similar phrasings and its
// fact-check title) of the `count` rules `rule(i)` for which `include(rule)` holds.
// Built from the rules alone, so a list restored from its compiled form gets
// exactly the same index. (`rule(i)` may reuse one Rule: each is read once, and
// its claim, phrasings, title and languages are moved from, not copied: a load
// frees the rules right after, and their copies would raise wasm memory's peak.)
template <typename GetRule, typename Include>
std::vector<SimilarDoc> ClaimDocs(size_t count, GetRule rule_at, Include include) {
  std::vector<SimilarDoc> docs;
  for (uint32_t r = 0; r < count; ++r) {
    Rule& rule = rule_at(r);
    if (!include(rule)) continue;
    TakeSimilarDoc(r, rule, &docs.emplace_back());
  }
  return docs;
}

bool HasSimilar(const Rule& rule) { return !rule.similar.empty(); }

// Sets what the similarity matcher needs to know of the rules, before its index
// (m->rule_has_similar is set).
void ScanSimilarRules(const SimilarOptions& options, CompiledList::Matchers* m) {
  m->similar_options = options;
  size_t with = 0;  // (a loop over every rule, on a restore too: runs.h)
  ForEachRun(m->rule_has_similar.size(), [&](size_t i) {
    with += m->rule_has_similar[i] == 1;
    return true;
  });
  m->any_similar = with > 0;
  m->similar_all = with > 0 && with == m->rule_has_similar.size();
}

// Builds the kSimilar matcher's index from `docs`, the claims of the rules with
// match.similar in rule order: those a load kept as it read the rules, or
// ClaimDocs(..., HasSimilar) of restored ones.
[[gnu::noinline]] void BuildSimilarIndex(const std::vector<SimilarDoc>& docs,
                                         const SimilarOptions& options,
                                         CompiledList::Matchers* m) {
  ScanSimilarRules(options, m);
  m->similar = m->any_similar ? SimilarIndex::Build(docs, options) : nullptr;
}

// ---- rule records -------------------------------------------------------------------
// A rule as the RULE section and CompiledList keep it: strings and arrays with
// Var32 lengths and counts, rating and severity in a byte each, `within` as a Var32.
// (Examples are not kept: matching never uses them.) The strings most rules of a
// list share are kept once, in CompiledList::shared_strings_, and a record names
// them by index: review.publisher, review.date, and review.url's origin
// ("https://host/"; the record keeps the rest). At 100k rules the bench's records
// went from 25.7 to 20.8 MB, each byte of them a first write on restore.

// Writes a record into the bytes sized for it (RecordSize), through a pointer: a
// ByteWriter appending each field to the records' string called into the string
// and memcpy for every few bytes (about 50 fields a rule), and was a tenth of a
// load from text in wasm at 10k rules. Never writes past `end`: a record larger
// than its size (a defect) only makes full() false.
class RecordWriter {
 public:
  RecordWriter(char* at, char* end) : at_(at), end_(end) {}
  void U8(uint8_t v) {
    if (at_ == end_) return Overflow();
    *at_++ = static_cast<char>(v);
  }
  void Var32(uint32_t v) {
    PutVar32(v, [this](uint8_t b) { U8(b); });
  }
  void Append(std::string_view s) {
    if (s.size() > static_cast<size_t>(end_ - at_)) return Overflow();
    if (!s.empty()) std::memcpy(at_, s.data(), s.size());
    at_ += s.size();
  }
  // True if every byte fit and all were written.
  bool full() const { return ok_ && at_ == end_; }

 private:
  void Overflow() {
    ok_ = false;
    at_ = end_;
  }
  char* at_;
  char* end_;
  bool ok_ = true;
};

void PutStr(RecordWriter* w, std::string_view s) {
  w->Var32(static_cast<uint32_t>(s.size()));
  w->Append(s);
}

void PutStrs(RecordWriter* w, const std::vector<std::string>& v) {
  w->Var32(static_cast<uint32_t>(v.size()));
  for (const std::string& s : v) PutStr(w, s);
}

size_t Var32Size(size_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

size_t StrsSize(const std::vector<std::string>& v) {
  size_t n = Var32Size(v.size());
  for (const std::string& s : v) n += Var32Size(s.size()) + s.size();
  return n;
}

// Returns the origin of `url` with the slash after it ("https://host/"), or the
// whole of it if it has no path.
std::string_view UrlOrigin(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t slash = url.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
  return slash == std::string_view::npos ? url : url.substr(0, slash + 1);
}

}  // namespace

// The shared strings of a list being compiled: each string's index in `strings`
// (CompiledList::shared_strings_), added on first sight, and each rule's
// (RecordSize gives them, in rule order; EncodeRecord reads them).
class SharedStringIds {
 public:
  // Per rule: its review URL's origin, its publisher, its date.
  static constexpr int kPerRule = 3;
  explicit SharedStringIds(std::vector<std::string>* strings) : strings_(strings) {}
  uint32_t Id(std::string_view s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    // (Keys view strings of their own in a deque, which never moves them: a
    // lookup builds no string, and 10k rules made 60k of them.)
    keys_.emplace_back(s);
    const uint32_t id = static_cast<uint32_t>(strings_->size());
    strings_->push_back(std::string(s));
    ids_.emplace(keys_.back(), id);
    return id;
  }
  // Gives the rule after the last one its ids; returns them.
  const uint32_t* AddRule(std::string_view origin, std::string_view publisher,
                          std::string_view date) {
    for (std::string_view s : {origin, publisher, date}) rule_ids_.push_back(Id(s));
    return RuleIds(rule_ids_.size() / kPerRule - 1);
  }
  const uint32_t* RuleIds(size_t rule) const { return &rule_ids_[rule * kPerRule]; }

 private:
  std::vector<std::string>* strings_;
  std::deque<std::string> keys_;
  std::unordered_map<std::string_view, uint32_t> ids_;
  std::vector<uint32_t> rule_ids_;
};

namespace {

// Returns the size of rule's record (EncodeRecord), giving its shared strings
// their ids (the rules in order, each once).
size_t RecordSize(const Rule& rule, SharedStringIds* shared) {
  size_t n = 2;
  for (const std::string* s : {&rule.id, &rule.claim, &rule.review.title}) {
    n += Var32Size(s->size()) + s->size();
  }
  const std::string_view origin = UrlOrigin(rule.review.url);
  const uint32_t* ids = shared->AddRule(origin, rule.review.publisher, rule.review.date);
  n += Var32Size(ids[0]) + Var32Size(rule.review.url.size() - origin.size()) +
       rule.review.url.size() - origin.size();
  n += Var32Size(ids[1]) + Var32Size(ids[2]);
  for (const auto* v :
       {&rule.regions, &rule.languages, &rule.patterns, &rule.similar, &rule.urls}) {
    n += StrsSize(*v);
  }
  n += Var32Size(rule.keywords.size());
  for (const KeywordSet& k : rule.keywords) {
    n += StrsSize(k.all) + StrsSize(k.any) + StrsSize(k.none) +
         Var32Size(static_cast<uint32_t>(k.within));
  }
  return n;
}

// At least RecordSize(rule): every string and array with the most a Var32 takes.
size_t RecordSizeBound(const Rule& rule) {
  constexpr size_t kVar = 5;
  size_t n = 2 + 6 * kVar;  // rating, severity; the shared ids, the URL's rest
  for (const std::string* s :
       {&rule.id, &rule.claim, &rule.review.title, &rule.review.url})
    n += kVar + s->size();
  auto strs = [&](const std::vector<std::string>& v) {
    n += kVar;
    for (const std::string& s : v) n += kVar + s.size();
  };
  for (const auto* v :
       {&rule.regions, &rule.languages, &rule.patterns, &rule.similar, &rule.urls}) {
    strs(*v);
  }
  n += kVar;
  for (const KeywordSet& k : rule.keywords) {
    strs(k.all);
    strs(k.any);
    strs(k.none);
    n += kVar;
  }
  return n;
}

// Writes rule's record, its shared strings named by `shared_ids` (RecordSize's).
void EncodeRecord(const Rule& rule, const uint32_t* shared_ids, RecordWriter* w) {
  PutStr(w, rule.id);
  PutStr(w, rule.claim);
  w->U8(static_cast<uint8_t>(rule.rating));
  w->U8(static_cast<uint8_t>(rule.severity));
  PutStrs(w, rule.regions);
  PutStrs(w, rule.languages);
  PutStrs(w, rule.patterns);
  PutStrs(w, rule.similar);
  PutStrs(w, rule.urls);
  const std::string_view origin = UrlOrigin(rule.review.url);
  w->Var32(shared_ids[0]);
  PutStr(w, std::string_view(rule.review.url).substr(origin.size()));
  PutStr(w, rule.review.title);
  w->Var32(shared_ids[1]);
  w->Var32(shared_ids[2]);
  // Keyword sets as written: stance detection reads their terms.
  w->Var32(static_cast<uint32_t>(rule.keywords.size()));
  for (const KeywordSet& k : rule.keywords) {
    PutStrs(w, k.all);
    PutStrs(w, k.any);
    PutStrs(w, k.none);
    w->Var32(static_cast<uint32_t>(k.within));
  }
}

// Reads one record into *rule, or only checks it if `rule` is null, with the list's
// shared strings `shared`. Sets *has_similar. Returns false if the record is
// malformed; every count is bounded by the bytes left, so hostile bytes cannot make
// it allocate without end.
bool DecodeRecord(ByteReader* r, const std::vector<std::string>& shared, Rule* rule,
                  bool* has_similar) {
  auto str = [&](std::string* out) {
    const uint32_t n = r->Var32();
    std::string_view v;
    if (!r->ok() || !r->View(n, &v)) return r->Fail();
    if (out != nullptr) out->assign(v.data(), v.size());
    return true;
  };
  auto strs = [&](std::vector<std::string>* out, uint32_t* count) {
    const uint32_t n = r->Var32();
    if (!r->ok() || n > r->remaining()) return r->Fail();  // a byte each at least
    if (count != nullptr) *count = n;
    if (out != nullptr) out->resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      if (!str(out != nullptr ? &(*out)[i] : nullptr)) return false;
    }
    return true;
  };
  auto shared_str = [&](std::string* out) {
    const uint32_t i = r->Var32();
    if (!r->ok() || i >= shared.size()) return r->Fail();
    if (out != nullptr) *out = shared[i];
    return true;
  };
  Rule* o = rule;
  if (!str(o ? &o->id : nullptr) || !str(o ? &o->claim : nullptr)) return false;
  const uint8_t rating = r->U8(), severity = r->U8();
  if (!r->ok() || rating >= kRatingCount || severity >= kSeverityCount) return r->Fail();
  if (o != nullptr) {
    o->rating = static_cast<Rating>(rating);
    o->severity = static_cast<Severity>(severity);
  }
  uint32_t similar = 0;
  if (!strs(o ? &o->regions : nullptr, nullptr) ||
      !strs(o ? &o->languages : nullptr, nullptr) ||
      !strs(o ? &o->patterns : nullptr, nullptr) ||
      !strs(o ? &o->similar : nullptr, &similar) ||
      !strs(o ? &o->urls : nullptr, nullptr)) {
    return false;
  }
  std::string url_rest;
  if (!shared_str(o ? &o->review.url : nullptr) || !str(o ? &url_rest : nullptr) ||
      !str(o ? &o->review.title : nullptr) ||
      !shared_str(o ? &o->review.publisher : nullptr) ||
      !shared_str(o ? &o->review.date : nullptr)) {
    return false;
  }
  if (o != nullptr) o->review.url += url_rest;
  *has_similar = similar > 0;
  const uint32_t sets = r->Var32();
  if (!r->ok() || sets > r->remaining()) return r->Fail();
  if (o != nullptr) o->keywords.resize(sets);
  for (uint32_t k = 0; k < sets; ++k) {
    KeywordSet* set = o != nullptr ? &o->keywords[k] : nullptr;
    if (!strs(set ? &set->all : nullptr, nullptr) ||
        !strs(set ? &set->any : nullptr, nullptr) ||
        !strs(set ? &set->none : nullptr, nullptr)) {
      return false;
    }
    const uint32_t within = r->Var32();
    if (!r->ok() || within > INT_MAX) return r->Fail();
    if (set != nullptr) set->within = static_cast<int>(within);
  }
  return true;
}

}  // namespace

namespace {

// Picks the atom groups of a keyword set: a post matching the set holds every
// `all` term (one group each, its word fewest sets of this list use, then the
// longest: likely the rarest) and one of the `any` terms (one group of one word
// per term). A prefix term's last word is matched as the prefix it is.
std::vector<std::vector<std::string>> KeywordAtoms(
    const CompiledKeywordSet& ks, const CompiledList::Matchers& m,
    const std::unordered_map<std::string_view, uint32_t>& word_use) {
  // A word is a better atom the fewer keyword sets use it, then the longer it is.
  // (Its use is looked up once, and the sort moves these small records, not
  // strings: the sort's code is small, which matters as V8 optimises it during
  // the first load, on the core the load would otherwise have.)
  struct Choice {
    uint32_t use, size;
    std::string_view word;
  };
  auto choice = [&](std::string_view w) {
    return Choice{word_use.at(w), static_cast<uint32_t>(w.size()), w};
  };
  auto better = [](const Choice& a, const Choice& b) {
    if (a.use != b.use) return a.use < b.use;
    return a.size > b.size;
  };
  auto best_word = [&](const Term& t) {
    bool first = true;
    Choice best{};
    ForEachWord(m.Text(t), [&](std::string_view w) {
      const Choice c = choice(w);
      if (first || better(c, best)) best = c;
      first = false;
    });
    return best;
  };
  std::vector<Choice> all;
  all.reserve(ks.all.count);
  for (const Term& t : m.Terms(ks.all)) all.push_back(best_word(t));
  std::sort(all.begin(), all.end(), better);
  if (all.size() >= Prefilter::kMaxGroups) all.resize(Prefilter::kMaxGroups - 1);
  std::vector<std::vector<std::string>> groups;
  for (const Choice& c : all) groups.push_back({std::string(c.word)});
  if (!ks.any.empty()) {
    std::vector<std::string> any;
    for (const Term& t : m.Terms(ks.any)) any.emplace_back(best_word(t).word);
    groups.push_back(std::move(any));
  }
  return groups;
}

// What the large patterns compiled at load have cost so far (each counted once).
struct LoadBudget {
  int64_t instructions = 0;
  std::unordered_set<const LazyRegex*> compiled;
};

// Compiles one rule's patterns, keyword sets and URLs into the matchers. Its own
// function, called once per rule (the wasm build keeps Binaryen from inlining it:
// CMakeLists.txt): V8 optimises a wasm function only for its later calls (wasm has
// no on-stack replacement), so a loop over 10k rules inside Compile would run in
// the baseline tier to the end, while Compile's optimised code, compiled on the
// only other core meanwhile, would never run.
// With `check_syntax` (a list whose ParseList left the patterns' syntax to
// Compile), it also fails on a pattern RE2 rejects as written: Compile then
// reports it as ParseList would have.
[[gnu::noinline]] Status CompileRuleMatchers(uint32_t r, const Rule& rule,
                                             int parse_flags, bool check_syntax,
                                             LoadBudget* budget,
                                             CompiledList::Matchers* m) {
  auto where = [&](const std::string& field) {
    return "rules[" + std::to_string(r) + "] (id \"" + rule.id + "\"): match." + field;
  };
  // ParseForAtoms parses an ASCII pattern first as ParseList's syntax check does
  // (re2::Regexp::LikePerl, which holds ClassNL): when normalising leaves the
  // pattern as written, that parse is the check (its own verdict, plain_rejected:
  // the folded parse that follows a failed one is not).
  const bool plain_is_check =
      (parse_flags & re2::Regexp::FoldCase) &&
      (parse_flags & ~re2::Regexp::FoldCase) == re2::Regexp::LikePerl;
  for (size_t p = 0; p < rule.patterns.size(); ++p) {
    const std::string& written = rule.patterns[p];
    std::string normalised = NormalizePattern(written);
    const bool parse_checks = plain_is_check && normalised == written &&
                              std::all_of(written.begin(), written.end(), [](char c) {
                                return static_cast<unsigned char>(c) < 0x80;
                              });
    auto syntax_error = [&](const std::string& message) {
      return Status(ErrorKind::kFormat,
                    where("patterns[" + std::to_string(p) + "]") + ": " + message);
    };
    if (check_syntax && !parse_checks) {
      const std::string message = PatternSyntaxError(written);
      if (!message.empty()) return syntax_error(message);
    }
    re2::RegexpStatus status;
    bool large = false, plain_rejected = false;
    re2::Regexp* parsed =
        ParseForAtoms(normalised, parse_flags, kCompileAtLoadInstructions, &large,
                      &status, &plain_rejected);
    if (check_syntax && parse_checks && plain_rejected) {
      if (parsed != nullptr) parsed->Decref();
      return syntax_error(PatternSyntaxError(written));
    }
    if (parsed == nullptr) {
      return Status(ErrorKind::kFormat,
                    where("patterns[" + std::to_string(p) + "]") + ": " + status.Text());
    }
    // Straight into the prefilter (its Build sorts what it was given, so the
    // order of adding does not matter): a large list's atoms are never all
    // held twice.
    const uint32_t item = static_cast<uint32_t>(m->patterns.size());
    const RegexpAtoms atoms = ExtractAtoms(parsed);
    if (atoms.usable) {
      m->prefilter.AddItem(item, atoms.groups, atoms.word_start);
    } else {
      m->prefilter.AddAlwaysItem(item);
    }
    parsed->Decref();
    m->AddPattern(r, normalised);
    if (large) {
      const LazyRegex* lazy = &m->Regex(m->patterns.back());
      // Possibly over budget: compile now (forward and reverse programs, the
      // reverse one being what an unanchored search with a span needs).
      const re2::RE2& re = lazy->Get();
      if (!re.ok() || re.ReverseProgramSize() < 0) {
        bool too_large =
            !re.ok() ? re.error_code() == re2::RE2::ErrorPatternTooLarge : true;
        std::string error =
            re.ok() ? "pattern too large - reverse compile failed" : re.error();
        return Status(too_large ? ErrorKind::kLimit : ErrorKind::kFormat,
                      where("patterns[" + std::to_string(p) + "]") + ": " + error);
      }
      if (budget->compiled.insert(lazy).second) {
        budget->instructions += re.ProgramSize() + re.ReverseProgramSize();
        if (budget->instructions > kMaxLoadCompiledInstructions) {
          return Status(
              ErrorKind::kLimit,
              where("patterns[" + std::to_string(p) + "]") +
                  ": the list's large patterns need more than " +
                  std::to_string(kMaxLoadCompiledInstructions) +
                  " RE2 instructions together (this one brings them to " +
                  std::to_string(budget->instructions) +
                  "); use fewer Unicode classes such as \\pL or counted repeats");
        }
      }
    }
  }
  for (const KeywordSet& set : rule.keywords) {
    CompiledKeywordSet ks{r, {}, {}, {}, set.within};
    auto add_terms = [&](const std::vector<std::string>& written, TermRun* run) {
      run->begin = static_cast<uint32_t>(m->keyword_terms.size());
      run->count = static_cast<uint32_t>(written.size());
      for (const std::string& t : written)
        m->keyword_terms.push_back(MakeTerm(t, &m->keyword_text));
    };
    add_terms(set.all, &ks.all);
    add_terms(set.any, &ks.any);
    add_terms(set.none, &ks.none);
    // A term that normalises to nothing ("!!!") could never match: say so now
    // rather than silently never matching.
    for (const TermRun* run : {&ks.all, &ks.any, &ks.none}) {
      for (const Term& t : m->Terms(*run)) {
        if (t.size == 0 || m->keyword_text[t.begin] == ' ') {
          return Status(ErrorKind::kFormat,
                        where("keywords") + ": a term has no letters or digits");
        }
      }
    }
    m->keyword_sets.push_back(ks);
  }
  for (size_t u = 0; u < rule.urls.size(); ++u) {
    const std::string& entry = rule.urls[u];
    if (IsDomainEntry(entry)) {
      std::string canonical = CanonicalizeUrl("https://" + entry);
      if (canonical.empty() || canonical.find('.') == std::string::npos) {
        return Status(ErrorKind::kFormat, where("urls[" + std::to_string(u) + "]") +
                                              ": \"" + entry + "\" is not a domain");
      }
      m->domains[std::string(WithoutPort(CanonicalHost(canonical)))].push_back(r);
    } else {
      std::string canonical = CanonicalizeUrl(entry);
      if (canonical.empty()) {
        return Status(ErrorKind::kFormat, where("urls[" + std::to_string(u) + "]") +
                                              ": \"" + entry +
                                              "\" is not an http(s) URL");
      }
      m->pages[canonical].push_back(r);
    }
  }
  return Status::Ok();
}

// Adds the keyword sets to the prefilter (the patterns are already in, added as
// they were parsed) and builds it. Not inlined into Compile, as CompileRuleMatchers
// says.
[[gnu::noinline]] void BuildPrefilter(CompiledList::Matchers* m) {
  Prefilter& pf = m->prefilter;
  std::unordered_map<std::string_view, uint32_t> word_use;
  for (const CompiledKeywordSet& ks : m->keyword_sets) {
    for (const TermRun* run : {&ks.all, &ks.any}) {
      for (const Term& t : m->Terms(*run)) {
        ForEachWord(m->Text(t), [&](std::string_view w) { ++word_use[w]; });
      }
    }
  }
  const uint32_t base = static_cast<uint32_t>(m->patterns.size());
  for (uint32_t k = 0; k < m->keyword_sets.size(); ++k) {
    const CompiledKeywordSet& ks = m->keyword_sets[k];
    if (ks.all.empty() && ks.any.empty()) {
      pf.AddAlwaysItem(base + k);
    } else {
      // A keyword is a whole post word (or its start, with *): after a space.
      pf.AddWordItem(base + k, KeywordAtoms(ks, *m, word_use));
    }
  }
  pf.Build(static_cast<uint32_t>(m->patterns.size() + m->keyword_sets.size()));
}

}  // namespace

CompiledList::CompiledList() : matchers_(std::make_unique<Matchers>()) {}
CompiledList::~CompiledList() = default;

Status CompiledList::Compile(RuleList list, std::unique_ptr<CompiledList>* out,
                             const SimilarOptions& similar) {
  CompileOptions options;
  options.similar = similar;
  return Compile(std::move(list), options, out);
}

Status CompiledList::Compile(RuleList list, const CompileOptions& options,
                             std::unique_ptr<CompiledList>* out) {
  size_t record_bytes = 0;
  for (const Rule& rule : list.rules) record_bytes += RecordSizeBound(rule);
  Builder builder(options, list.rules.size(), record_bytes,
                  list.pattern_syntax_unchecked);
  for (uint32_t r = 0; r < list.rules.size(); ++r) {
    Status s = builder.Add(list.rules[r]);
    if (!s.ok()) {
      // ParseList's errors come first: a pattern RE2 rejects as written, in this
      // rule (then it is why this one failed) or a later one (the earlier ones
      // passed).
      if (list.pattern_syntax_unchecked) {
        Status syntax = FirstPatternSyntaxError(list.rules, r);
        if (!syntax.ok()) return syntax;
      }
      return s;
    }
    // What the builder did not take is freed now: the rules and their records
    // are never both whole in memory (wasm memory keeps its peak).
    list.rules[r] = Rule();
  }
  std::vector<Rule>().swap(list.rules);
  *out = builder.Finish(std::move(list.info));
  return Status::Ok();
}

struct CompiledList::Builder::State {
  std::unique_ptr<CompiledList> compiled{new CompiledList()};
  CompileOptions options;
  size_t expected_rules = 0, record_bytes_bound = 0;
  bool pattern_syntax_unchecked = false;
  int parse_flags = Re2Options().ParseFlags();
  SharedStringIds shared{&compiled->shared_strings_};
  LoadBudget budget;
  bool spent = false;
  // What the similarity index reads of the rules with match.similar, in rule
  // order: a SimilarDoc each (as ClaimDocs makes them), not the Rule it came
  // from. A load's wasm memory peaks at the end of the parse, with the list text
  // still in memory, and a Rule kept there for its claim carried a dozen empty
  // members.
  std::vector<SimilarDoc> similar_docs;
};

CompiledList::Builder::Builder(const CompileOptions& options, size_t expected_rules,
                               size_t record_bytes_bound, bool pattern_syntax_unchecked)
    : state_(new State()) {
  State& st = *state_;
  st.options = options;
  st.expected_rules = expected_rules;
  st.record_bytes_bound = record_bytes_bound;
  st.pattern_syntax_unchecked = pattern_syntax_unchecked;
  Matchers& m = *st.compiled->matchers_;
  m.use_prefilter = options.use_prefilter;
  m.use_case_sensitive = options.use_case_sensitive;
  st.compiled->rule_offsets_.reserve(expected_rules + 1);
  m.rule_has_similar.reserve(expected_rules);
}

CompiledList::Builder::~Builder() = default;

Status CompiledList::Builder::Add(Rule& rule) {
  State& st = *state_;
  if (st.spent) return Status(ErrorKind::kFormat, "the list builder failed before");
  CompiledList& c = *st.compiled;
  Matchers& m = *c.matchers_;
  const uint32_t r = static_cast<uint32_t>(c.rule_count());
  Status s = CompileRuleMatchers(r, rule, st.parse_flags, st.pattern_syntax_unchecked,
                                 &st.budget, &m);
  if (!s.ok()) {
    st.spent = true;
    return s;
  }
  // The records are reserved for the rules expected at the mean record size so
  // far, an eighth over, not grown by doubling: each doubling copies them all into
  // fresh memory beside the old block (a 20 MB string at 100k rules). Never past
  // the bound, which a few large rules first could not then stretch; a short
  // estimate grows them by half at least.
  const size_t size = RecordSize(rule, &st.shared);
  std::string& records = c.rule_records_;
  if (records.size() + size > records.capacity()) {
    const size_t need = records.size() + size;
    // (In 64 bits: a mean of megabytes times the rules expected passes 32.)
    const uint64_t total =
        uint64_t{need / (r + 1)} * std::max<uint64_t>(st.expected_rules, r + 1);
    const size_t estimate =
        static_cast<size_t>(std::min<uint64_t>(total + total / 8, st.record_bytes_bound));
    records.reserve(std::max({need, records.capacity() * 3 / 2, estimate}));
  }
  if (!c.AddRule(rule, size, &st.shared)) {
    st.spent = true;
    return Status(ErrorKind::kFormat, "rule " + rule.id +
                                          ": its record is not the size counted for it "
                                          "(a defect in factlens; please report it)");
  }
  const bool similar = HasSimilar(rule);
  m.rule_has_similar.push_back(similar);
  if (similar) TakeSimilarDoc(r, rule, &st.similar_docs.emplace_back());
  return Status::Ok();
}

std::unique_ptr<CompiledList> CompiledList::Builder::Finish(ListInfo info) {
  State& st = *state_;
  Matchers& m = *st.compiled->matchers_;
  BuildSimilarIndex(st.similar_docs, st.options.similar, &m);
  std::vector<SimilarDoc>().swap(st.similar_docs);
  BuildPrefilter(&m);
  st.compiled->info_ = std::move(info);
  st.spent = true;
  return std::move(st.compiled);
}

CompiledList::Stats CompiledList::stats() const {
  Stats s;
  const Matchers& m = *matchers_;
  s.patterns = m.patterns.size();
  s.keyword_sets = m.keyword_sets.size();
  s.atoms = m.prefilter.atom_count();
  s.automaton_states = m.prefilter.state_count();
  s.always_checked = m.prefilter.always_count();
  for (const CompiledPattern& p : m.patterns)
    s.programs_compiled += p.re && p.re->compiled();
  return s;
}

// ------------------------------------------------------------- compiled form --
//
// Sections written by Export (all little-endian, strings length-prefixed):
//   LIST  list info; RULE  the rule count, then the rule records as CompiledList
//   keeps them (without examples; kept as they are on import);
//   PATT  normalised patterns; KEYW  keyword sets as normalised word sequences;
//   URLS  canonical pages and domains; PREF  the prefilter's scan form (prefilter.h);
//   SIMI  the similarity index (similar.h).
// A further matcher adds its own section; Import refuses a blob missing any.

namespace {

// A run of terms as the KEYW section has them: a count, then each term's prefix
// flag and words (a count, then each word).
void WriteTerms(ByteWriter* w, const CompiledList::Matchers& m, const TermRun& run) {
  w->U32(run.count);
  for (const Term& t : m.Terms(run)) {
    w->U8(t.prefix ? 1 : 0);
    const std::string_view text = m.Text(t);
    w->U32(static_cast<uint32_t>(WordCount(text)));
    ForEachWord(text, [&](std::string_view word) { w->Str(word); });
  }
}

// Reads what WriteTerms wrote into m's terms and text. Words hold no space (they
// are joined by spaces) and a term's first is not empty, so the words read are the
// words written back.
bool ReadTerms(ByteReader* r, CompiledList::Matchers* m, TermRun* run) {
  uint32_t n = r->U32();
  if (!r->ok() || n > 256) return r->Fail();
  run->begin = static_cast<uint32_t>(m->keyword_terms.size());
  run->count = n;
  std::string_view word;
  for (uint32_t i = 0; i < n; ++i) {
    Term t;
    t.prefix = r->U8() != 0;
    const uint32_t words = r->U32();
    // Each word takes at least its 4-byte length.
    if (!r->ok() || words == 0 || words > r->remaining() / 4) return r->Fail();
    t.begin = static_cast<uint32_t>(m->keyword_text.size());
    for (uint32_t k = 0; k < words; ++k) {
      if (!r->StrView(&word) || word.find(' ') != std::string_view::npos ||
          (k == 0 && word.empty())) {
        return r->Fail();
      }
      if (k > 0) m->keyword_text += ' ';
      m->keyword_text.append(word);
    }
    t.size = static_cast<uint32_t>(m->keyword_text.size() - t.begin);
    m->keyword_terms.push_back(t);
  }
  return true;
}

// Writes `index` in the order of its keys: a hash table's own order depends on
// how it was filled (a restore reserves for all its keys at once, a load grows it
// key by key), and the same list should always give the same bytes.
void WriteIndex(ByteWriter* w,
                const std::unordered_map<std::string, std::vector<uint32_t>>& index) {
  using Entry = std::unordered_map<std::string, std::vector<uint32_t>>::value_type;
  std::vector<const Entry*> entries;
  entries.reserve(index.size());
  for (const Entry& entry : index) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(),
            [](const Entry* a, const Entry* b) { return a->first < b->first; });
  w->U32(static_cast<uint32_t>(entries.size()));
  for (const Entry* entry : entries) {
    w->Str(entry->first);
    w->Vec(entry->second);
  }
}

bool ReadIndex(ByteReader* r, size_t rule_count,
               std::unordered_map<std::string, std::vector<uint32_t>>* index) {
  uint32_t n = r->U32();
  if (!r->ok() || n > (1u << 26)) return r->Fail();
  index->reserve(n);
  return ForEachRun(n, [&](size_t) {
    std::string key;
    std::vector<uint32_t> rules;
    if (!r->Str(&key) || !r->Vec(&rules)) return false;
    for (uint32_t rule : rules) {
      if (rule >= rule_count) return r->Fail();
    }
    (*index)[std::move(key)] = std::move(rules);
    return true;
  });
}

}  // namespace

std::vector<CompiledSectionWriter> CompiledList::ExportSections() const {
  const Matchers& m = *matchers_;
  std::vector<CompiledSectionWriter> out;
  out.push_back({SectionTag("LIST"), [this](ByteWriter* w) {
                   const ListInfo& i = info_;
                   for (const std::string* s :
                        {&i.format, &i.id, &i.name, &i.publisher_name, &i.publisher_url,
                         &i.issued, &i.expires}) {
                     w->Str(*s);
                   }
                   w->I64(i.version);
                   w->I64(i.issued_unix);
                   w->I64(i.expires_unix);
                 }});
  out.push_back({SectionTag("RULE"),
                 [this](ByteWriter* w) {
                   w->U32(static_cast<uint32_t>(rule_count()));
                   w->Strs(shared_strings_);
                 },
                 rule_offsets_.back(),  // the records' size, held or kept
                 [this](const std::function<void(std::string_view)>& put) {
                   if (!kept_reader_) {
                     put(rule_records_);
                     return true;
                   }
                   // A part at a time through the kept reader, as Import read them.
                   const size_t size = rule_offsets_.back();
                   for (size_t at = 0; at < size; at += kImportWindow) {
                     const size_t n = std::min(kImportWindow, size - at);
                     const std::string_view part = kept_reader_(kept_records_at_ + at, n);
                     if (part.size() != n) return false;
                     put(part);
                   }
                   return true;
                 }});
  out.push_back({SectionTag("PATT"), [&m](ByteWriter* w) {
                   w->U32(static_cast<uint32_t>(m.patterns.size()));
                   for (const CompiledPattern& p : m.patterns) {
                     w->U32(p.rule_index);
                     w->Str(m.PatternText(p));
                   }
                 }});
  out.push_back({SectionTag("KEYW"), [&m](ByteWriter* w) {
                   w->U32(static_cast<uint32_t>(m.keyword_sets.size()));
                   // The terms' and their text's totals: a restore makes each array
                   // once, of its size (grown by doubling, they wrote twice theirs
                   // to fresh memory: 100k rules, 5.2 MB for 2.7 MB).
                   w->U32(static_cast<uint32_t>(m.keyword_terms.size()));
                   w->U32(static_cast<uint32_t>(m.keyword_text.size()));
                   for (const CompiledKeywordSet& ks : m.keyword_sets) {
                     w->U32(ks.rule_index);
                     w->I64(ks.within);
                     WriteTerms(w, m, ks.all);
                     WriteTerms(w, m, ks.any);
                     WriteTerms(w, m, ks.none);
                   }
                 }});
  out.push_back({SectionTag("URLS"), [&m](ByteWriter* w) {
                   WriteIndex(w, m.pages);
                   WriteIndex(w, m.domains);
                 }});
  out.push_back({SectionTag("PREF"), [&m](ByteWriter* w) { m.prefilter.Serialize(w); }});
  out.push_back({SectionTag("SIMI"), [&m](ByteWriter* w) {
                   w->U8(m.similar != nullptr);
                   if (m.similar != nullptr) m.similar->Serialize(w);
                 }});
  return out;
}

Status CompiledList::Import(const CompiledSectionSpans& sections,
                            const CompiledFormReader& read, const CompileOptions& options,
                            std::unique_ptr<CompiledList>* out, bool keep_reader) {
  std::unique_ptr<CompiledList> compiled(new CompiledList());
  Matchers& m = *compiled->matchers_;
  m.use_prefilter = options.use_prefilter;
  m.use_case_sensitive = options.use_case_sensitive;
  auto bad = [](const char* section, const std::string& why) {
    return Status(ErrorKind::kFormat,
                  std::string("compiled list: section ") + section + ": " + why);
  };
  for (const char* name : {"LIST", "RULE", "PATT", "KEYW", "URLS", "PREF", "SIMI"}) {
    char tag[5] = {name[0], name[1], name[2], name[3], 0};
    if (sections.count(SectionTag(tag)) == 0) return bad(name, "missing");
  }
  // A reader over section `name`, bringing it in a window at a time (see
  // ByteReader::Streaming): only what is kept is written to fresh memory.
  auto section = [&](const char(&name)[5]) {
    const CompiledSectionSpan& span = sections.at(SectionTag(name));
    return ByteReader::Streaming(span.size, kImportWindow,
                                 [&read, offset = span.offset](size_t at, size_t n) {
                                   return read(offset + at, n);
                                 });
  };
  {
    ByteReader r = section("LIST");
    ListInfo& i = compiled->info_;
    for (std::string* s : {&i.format, &i.id, &i.name, &i.publisher_name, &i.publisher_url,
                           &i.issued, &i.expires}) {
      r.Str(s);
    }
    i.version = r.I64();
    i.issued_unix = r.I64();
    i.expires_unix = r.I64();
    if (!r.ok() || !r.at_end()) return bad("LIST", "malformed");
  }
  {
    // The records are kept as they are: read straight into their place, then
    // checked there, or, with a kept reader, checked where they are and left there.
    ByteReader in = section("RULE");
    const uint32_t n = in.U32();
    if (!in.ok() || n > in.remaining()) return bad("RULE", "bad rule count");
    if (!in.Strs(&compiled->shared_strings_)) return bad("RULE", "malformed");
    std::string& records = compiled->rule_records_;
    ByteReader copied{std::string_view()};
    size_t records_start = 0;  // where the records start in the reader's count
    if (keep_reader) {
      records_start = in.pos();
      compiled->kept_reader_ = read;
      compiled->kept_records_at_ = sections.at(SectionTag("RULE")).offset + records_start;
    } else {
      records.reserve(in.remaining());
      if (!in.AppendTo(&records, in.remaining())) return bad("RULE", "truncated");
      copied = ByteReader(records);
    }
    ByteReader& r = keep_reader ? in : copied;
    std::vector<uint32_t>& offsets = compiled->rule_offsets_;
    offsets.reserve(n + 1);
    m.rule_has_similar.reserve(n);
    // (This loop and the others over a section's items run in calls: runs.h.)
    const bool decoded = ForEachRun(n, [&](size_t) {
      bool has_similar = false;
      if (!DecodeRecord(&r, compiled->shared_strings_, nullptr, &has_similar))
        return false;
      offsets.push_back(static_cast<uint32_t>(r.pos() - records_start));
      m.rule_has_similar.push_back(has_similar);
      return true;
    });
    if (!decoded) return bad("RULE", "malformed");
    if (!r.at_end()) return bad("RULE", "trailing bytes");
  }
  const size_t rule_count = compiled->rule_count();
  {
    ByteReader r = section("PATT");
    uint32_t n = r.U32();
    if (!r.ok() || n > r.remaining() / 8) return bad("PATT", "bad count");
    m.patterns.reserve(n);
    m.pattern_text.reserve(r.remaining());
    const bool read = ForEachRun(n, [&](size_t) {
      uint32_t rule = r.U32();
      std::string_view pattern;
      if (!r.StrView(&pattern) || rule >= rule_count) return false;
      // The program is checked when first compiled: a pattern that fails to
      // compile then simply never matches (Match skips it), it cannot crash.
      m.AddPattern(rule, pattern);
      return true;
    });
    if (!read) return bad("PATT", "malformed");
    if (!r.at_end()) return bad("PATT", "trailing bytes");
  }
  {
    ByteReader r = section("KEYW");
    const uint32_t n = r.U32(), terms = r.U32(), text = r.U32();
    // (A set takes 24 bytes at least, a term 9, a byte of text one.)
    if (!r.ok() || n > r.remaining() / 24 || terms > r.remaining() / 9 ||
        text > r.remaining()) {
      return bad("KEYW", "bad count");
    }
    m.keyword_sets.resize(n);
    m.keyword_terms.reserve(terms);
    m.keyword_text.reserve(text);
    const bool read = ForEachRun(n, [&](size_t i) {
      CompiledKeywordSet& ks = m.keyword_sets[i];
      ks.rule_index = r.U32();
      ks.within = static_cast<int>(r.I64());
      return ReadTerms(&r, &m, &ks.all) && ReadTerms(&r, &m, &ks.any) &&
             ReadTerms(&r, &m, &ks.none) && ks.rule_index < rule_count && ks.within >= 0;
    });
    if (!read) return bad("KEYW", "malformed");
    if (!r.at_end()) return bad("KEYW", "trailing bytes");
    if (m.keyword_terms.size() != terms || m.keyword_text.size() != text)
      return bad("KEYW", "malformed");
  }
  {
    ByteReader r = section("URLS");
    if (!ReadIndex(&r, rule_count, &m.pages) || !ReadIndex(&r, rule_count, &m.domains) ||
        !r.at_end()) {
      return bad("URLS", "malformed");
    }
  }
  {
    ByteReader r = section("PREF");
    if (!m.prefilter.Deserialize(&r) || !r.at_end()) return bad("PREF", "malformed");
    if (m.prefilter.item_count() != m.patterns.size() + m.keyword_sets.size()) {
      return bad("PREF", "item count does not match the matchers");
    }
  }
  {
    ByteReader r = section("SIMI");
    ScanSimilarRules(options.similar, &m);
    const bool has_index = r.U8() != 0;
    if (!r.ok() || has_index != m.any_similar) return bad("SIMI", "malformed");
    if (has_index &&
        !SimilarIndex::Deserialize(&r, options.similar, rule_count, &m.similar)) {
      return bad("SIMI", "malformed");
    }
    if (!r.at_end()) return bad("SIMI", "malformed");
    // Written with other similarity options (evaluation only): rebuilt from the
    // restored rules, which gives the index a load from text would.
    if (has_index && m.similar == nullptr) {
      Rule scratch;
      const CompiledList& c = *compiled;
      auto decoded = [&](uint32_t i) -> Rule& {
        c.DecodeRule(i, &scratch);
        return scratch;
      };
      BuildSimilarIndex(ClaimDocs(rule_count, decoded, HasSimilar), options.similar, &m);
    }
  }
  *out = std::move(compiled);
  return Status::Ok();
}

std::vector<RuleMatch> CompiledList::Match(const NormalizedText& post) const {
  const Matchers& m = *matchers_;
  std::vector<RuleMatch> out;

  // The items that could match: all of them without the prefilter.
  const uint32_t item_count =
      static_cast<uint32_t>(m.patterns.size() + m.keyword_sets.size());
  std::vector<uint32_t> candidates;
  LoweredText lowered(post);
  if (m.use_prefilter) {
    if (lowered.HasAsciiFoldOutsider()) {
      std::vector<uint32_t> folded_starts;
      const std::string folded = FoldAsciiFoldOutsiders(post.text, &folded_starts);
      candidates = m.prefilter.Candidates(folded, folded_starts);
    } else {
      candidates = m.prefilter.Candidates(post.text);
    }
  } else {
    candidates.resize(item_count);
    for (uint32_t i = 0; i < item_count; ++i) candidates[i] = i;
  }
  const uint32_t first_keyword_item = static_cast<uint32_t>(m.patterns.size());
  auto split = std::lower_bound(candidates.begin(), candidates.end(), first_keyword_item);

  // Patterns: up to kMaxSpansPerMatch non-overlapping hits per pattern, searched
  // for only where they can lie (SearchWindow; RE2 still sees the whole text around
  // the range, for \b, ^ and $).
  for (auto it = candidates.begin(); it != split; ++it) {
    const CompiledPattern& p = m.patterns[*it];
    const LazyRegex::Search search = m.Regex(p).ForCheck(&lowered, m.use_case_sensitive);
    const re2::RE2& re = *search.re;
    if (!re.ok()) continue;  // checked at load when it could fail; never crash
    // (Without the prefilter, the whole post: the reference the tests compare with.)
    ByteRange range{0, static_cast<uint32_t>(post.text.size())};
    if (m.use_prefilter && !SearchRange(*search.window, &lowered, &range)) continue;
    // The lowered text has the post's bytes where it is not the post's text.
    const std::string_view searched = search.lowered ? lowered.Get() : post.text;
    re2::StringPiece text(searched.data(), searched.size()), hit;
    size_t pos = range.begin;
    RuleMatch match{p.rule_index, MatchKind::kPattern, kPatternScore, {}};
    while (pos <= range.end && match.spans.size() < kMaxSpansPerMatch &&
           re.Match(text, pos, range.end, re2::RE2::UNANCHORED, &hit, 1)) {
      size_t begin = static_cast<size_t>(hit.data() - searched.data());
      size_t end = begin + hit.size();
      if (end > begin) match.spans.push_back(post.OriginalRange(begin, end));
      pos = end > begin ? end : end + 1;
    }
    if (!match.spans.empty()) out.push_back(std::move(match));
  }

  // Keyword sets.
  if (split != candidates.end() && !post.words.empty()) {
    PostWords words(post);
    for (auto it = split; it != candidates.end(); ++it) {
      const CompiledKeywordSet& ks = m.keyword_sets[*it - first_keyword_item];
      const TermSpan none = m.Terms(ks.none);
      bool excluded = std::any_of(none.begin(), none.end(), [&](const Term& t) {
        return !words.Find(m.Text(t), t.prefix).empty();
      });
      if (excluded) continue;
      std::vector<std::vector<Occurrence>> groups;
      bool missing = false;
      for (const Term& t : m.Terms(ks.all)) {
        groups.push_back(words.Find(m.Text(t), t.prefix));
        if (groups.back().empty()) {
          missing = true;
          break;
        }
      }
      if (missing) continue;
      if (!ks.any.empty()) {
        std::vector<Occurrence> any;
        for (const Term& t : m.Terms(ks.any)) {
          std::vector<Occurrence> found = words.Find(m.Text(t), t.prefix);
          any.insert(any.end(), found.begin(), found.end());
        }
        if (any.empty()) continue;
        groups.push_back(std::move(any));
      }
      std::vector<Occurrence> chosen;
      if (!BestWindow(groups, ks.within, &chosen)) continue;
      RuleMatch match{ks.rule_index, MatchKind::kKeywords, kKeywordScore, {}};
      std::sort(chosen.begin(), chosen.end(),
                [](const Occurrence& a, const Occurrence& b) {
                  return a.first_word < b.first_word;
                });
      for (const Occurrence& o : chosen) match.spans.push_back(words.OriginalRange(o));
      out.push_back(std::move(match));
    }
  }

  // URLs and domains. Spans: the URL's word in the post.
  if ((!m.pages.empty() || !m.domains.empty()) && !post.urls.empty()) {
    auto url_span = [&](const std::string& canonical) {
      for (const ByteRange& w : post.words) {
        if (std::string_view(post.text).substr(w.begin, w.end - w.begin) == canonical) {
          return post.OriginalRange(w.begin, w.end);
        }
      }
      return ByteRange{0, 0};
    };
    for (const std::string& url : post.urls) {
      auto add = [&](const std::vector<uint32_t>& rules, MatchKind kind, double score) {
        for (uint32_t r : rules) {
          out.push_back({r, kind, score, {url_span(url)}});
        }
      };
      auto page = m.pages.find(url);
      if (page == m.pages.end()) page = m.pages.find(std::string(WithoutQuery(url)));
      if (page != m.pages.end()) add(page->second, MatchKind::kUrl, kUrlScore);
      // The host and each parent domain: "a.b.example.com", "b.example.com", ...
      std::string_view host = WithoutPort(CanonicalHost(url));
      while (!host.empty()) {
        auto domain = m.domains.find(std::string(host));
        if (domain != m.domains.end())
          add(domain->second, MatchKind::kDomain, kDomainScore);
        size_t dot = host.find('.');
        if (dot == std::string_view::npos) break;
        host.remove_prefix(dot + 1);
      }
    }
  }

  // Claim similarity, for the rules that asked for it.
  std::vector<SimilarHit> hits;
  if (m.any_similar) {
    hits = m.similar->Search(post, kSimilarMatches, {}, SimilarIndex::kDefaultThreshold);
  }
  for (const SimilarHit& hit : hits) {  // all at or above the threshold
    if (!m.rule_has_similar[hit.rule_index]) continue;
    out.push_back({hit.rule_index, MatchKind::kSimilar, hit.score,
                   m.similar->Spans(post, hit.rule_index)});
  }

  // One match per rule and kind (several patterns or URLs of one rule merge).
  std::sort(out.begin(), out.end(), [](const RuleMatch& a, const RuleMatch& b) {
    return a.rule_index != b.rule_index ? a.rule_index < b.rule_index : a.kind < b.kind;
  });
  std::vector<RuleMatch> merged;
  for (RuleMatch& match : out) {
    if (!merged.empty() && merged.back().rule_index == match.rule_index &&
        merged.back().kind == match.kind) {
      RuleMatch& into = merged.back();
      for (const ByteRange& s : match.spans) {
        if (into.spans.size() >= kMaxSpansPerMatch) break;
        into.spans.push_back(s);
      }
      into.score = std::max(into.score, match.score);
    } else {
      merged.push_back(std::move(match));
    }
  }
  for (RuleMatch& match : merged) {
    std::sort(match.spans.begin(), match.spans.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.begin < b.begin; });
    match.spans.erase(std::unique(match.spans.begin(), match.spans.end(),
                                  [](const ByteRange& a, const ByteRange& b) {
                                    return a.begin == b.begin && a.end == b.end;
                                  }),
                      match.spans.end());
  }
  return merged;
}

std::vector<SimilarHit> CompiledList::Search(
    const NormalizedText& post, size_t k, const std::vector<uint32_t>& withheld) const {
  const Matchers& m = *matchers_;
  if (m.similar_all) return m.similar->Search(post, k, withheld);
  std::call_once(m.search_index_once, [&] {
    Rule scratch;
    auto decoded = [&](uint32_t i) -> Rule& {
      DecodeRule(i, &scratch);
      return scratch;
    };
    auto every = [](const Rule&) { return true; };
    m.search_index =
        SimilarIndex::Build(ClaimDocs(rule_count(), decoded, every), m.similar_options);
  });
  return m.search_index->Search(post, k, withheld);
}

// (Not inlined into Compile's loop: see CompileRuleMatchers.)
[[gnu::noinline]] bool CompiledList::AddRule(const Rule& rule, size_t size,
                                             SharedStringIds* shared) {
  const size_t at = rule_records_.size();
  rule_records_.resize(at + size);
  RecordWriter w(rule_records_.data() + at, rule_records_.data() + at + size);
  EncodeRecord(rule, shared->RuleIds(rule_count()), &w);
  // (RecordSize counts what EncodeRecord writes, field by field.)
  if (!w.full()) {
    rule_records_.resize(at);
    return false;
  }
  rule_offsets_.push_back(static_cast<uint32_t>(rule_records_.size()));
  return true;
}

std::string_view CompiledList::RuleRecord(uint32_t index) const {
  const size_t at = rule_offsets_[index], size = rule_offsets_[index + 1] - at;
  if (!kept_reader_) return std::string_view(rule_records_).substr(at, size);
  const std::string_view record = kept_reader_(kept_records_at_ + at, size);
  return record.size() == size ? record : std::string_view();
}

void CompiledList::DecodeRule(uint32_t index, Rule* out) const {
  *out = Rule();
  ByteReader r(RuleRecord(index));
  bool has_similar = false;
  // Checked when written or imported. A kept reader that fails (its JavaScript
  // buffer gone) gives an empty record, and the rule stays empty: never a crash.
  if (!DecodeRecord(&r, shared_strings_, out, &has_similar)) *out = Rule();
}

const Rule& CompiledList::rule(uint32_t index) const {
  if (rule_cache_.size() != rule_count()) rule_cache_.resize(rule_count());
  std::unique_ptr<Rule>& cached = rule_cache_[index];
  if (cached == nullptr) {
    cached = std::make_unique<Rule>();
    DecodeRule(index, cached.get());
  }
  return *cached;
}

std::string_view CompiledList::rule_id(uint32_t index) const {
  ByteReader r(RuleRecord(index));
  std::string_view id;
  const uint32_t n = r.Var32();
  if (!r.ok() || !r.View(n, &id)) return {};  // checked when written or imported
  return id;
}

}  // namespace factlens
