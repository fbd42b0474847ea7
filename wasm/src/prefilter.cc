// Copyright factlens authors.
//
// Atom extraction follows the idea of RE2's own prefilter (re2/prefilter.cc), on the
// parsed Regexp so that no program has to be compiled: for each node, either the
// exact, small set of strings it can match, or a set of strings one of which every
// match contains. RE2's Prefilter::FromRegexp is private and wants a compiled RE2;
// ours needs only the parse, which is what makes lazy compilation possible.
#include "factlens/prefilter.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <iterator>
#include <set>
#include <utility>

#include "factlens/normalize.h"
#include "factlens/runs.h"
#include "re2/regexp.h"
#include "util/utf.h"

namespace factlens {
namespace {

constexpr size_t kMaxExact = 16;       // strings in an exact set
constexpr size_t kMaxExactBytes = 64;  // length of one exact string
constexpr int kMaxClassRunes = 4;      // small classes enumerate their runes

// Zero-width marks inside the strings of an Info (never in UTF-8, so never a
// literal's byte), which ExtractAtoms reads and removes: kBoundaryMark is a \b
// (with a word byte after it, the byte before is not one), kAfterNonWordMark says
// the byte before is not a word byte (or there is none): after ^, or after a
// piece whose matches all end with one (EndsOf). An atom that starts with either
// (so) is word-anchored: Prefilter::AddItem.
constexpr char kBoundaryMark = '\xFF', kAfterNonWordMark = '\xFE';
bool IsMark(char c) { return c == kBoundaryMark || c == kAfterNonWordMark; }
// RE2's \w, ASCII only: what \b is about.
bool IsRe2WordByte(char c) { return IsAsciiAlnum(c) || c == '_'; }
// Bytes of `s` that are not marks: its length as an atom.
size_t RealSize(const std::string& s) {
  return s.size() - static_cast<size_t>(std::count_if(s.begin(), s.end(), IsMark));
}
// True if `s` has no byte but marks (an empty atom).
bool OnlyMarks(const std::string& s) { return std::all_of(s.begin(), s.end(), IsMark); }
// True if `a` and `b` together are longer than an exact string may be (their sizes
// bound their lengths, so most pairs need no count of marks).
bool TooLong(const std::string& a, const std::string& b) {
  return a.size() + b.size() > kMaxExactBytes &&
         RealSize(a) + RealSize(b) > kMaxExactBytes;
}

// Appends rune `r` to *s as UTF-8, ASCII lower-cased. (In place, an ASCII rune a
// byte: a pattern's literal strings are most of what ExtractAtoms reads, and a
// string made per rune was 1.5% of a 10k-rule load's instructions natively.)
void AppendRuneUtf8(re2::Rune r, std::string* s) {
  if (static_cast<uint32_t>(r) < 0x80) {
    s->push_back(AsciiLower(static_cast<char>(r)));
    return;
  }
  char buf[re2::UTFmax];
  const int n = re2::runetochar(buf, &r);
  s->append(buf, n);  // (no byte of a longer form is ASCII)
}

std::string RuneUtf8(re2::Rune r) {
  std::string s;
  AppendRuneUtf8(r, &s);
  return s;
}

struct Info {
  enum Kind { kExact, kRequired, kNothing } kind = kNothing;
  std::set<std::string> strs;

  static Info Exact(std::set<std::string> s) {
    Info i;
    i.kind = kExact;
    i.strs = std::move(s);
    return i;
  }
  static Info Nothing() { return Info(); }
};

// Returns `info` as a required set (any match contains one of its strings); an
// empty string among them means "no guarantee".
Info AsRequired(Info info) {
  if (info.kind == Info::kNothing) return info;
  if (info.strs.empty() ||
      std::any_of(info.strs.begin(), info.strs.end(),
                  [](const std::string& s) { return OnlyMarks(s); })) {
    return Info::Nothing();
  }
  info.kind = Info::kRequired;
  return info;
}

// Orders guarantees: a longer shortest atom filters better, then fewer atoms.
bool Better(const Info& a, const Info& b) {
  if (b.kind == Info::kNothing) return a.kind != Info::kNothing;
  if (a.kind == Info::kNothing) return false;
  auto shortest = [](const Info& i) {
    size_t m = SIZE_MAX;
    for (const std::string& s : i.strs) m = std::min(m, RealSize(s));
    return m;
  };
  size_t sa = std::min<size_t>(shortest(a), 8), sb = std::min<size_t>(shortest(b), 8);
  if (sa != sb) return sa > sb;
  return a.strs.size() < b.strs.size();
}

Info Walk(re2::Regexp* re, int depth);

// What every match of a node ends with: a byte that is not a word byte (RE2's
// \w), the same or nothing (it may match empty), or anything (unknown).
enum class Ends { kUnknown, kNonWord, kNonWordOrEmpty };

// The last rune of a literal: a non-word ASCII byte, or outside ASCII (its last
// UTF-8 byte is a continuation byte), unless case folding could make it ASCII.
Ends EndsOfRune(re2::Rune r, int flags) {
  if (r < 0x80)
    return IsRe2WordByte(static_cast<char>(r)) ? Ends::kUnknown : Ends::kNonWord;
  return (flags & re2::Regexp::FoldCase) ? Ends::kUnknown : Ends::kNonWord;
}

Ends EndsOf(re2::Regexp* re, int depth) {
  if (depth > 200) return Ends::kUnknown;
  switch (re->op()) {
    case re2::kRegexpNoMatch:
      return Ends::kNonWord;  // (no match at all)
    case re2::kRegexpEmptyMatch:
    case re2::kRegexpBeginLine:
    case re2::kRegexpEndLine:
    case re2::kRegexpBeginText:
    case re2::kRegexpEndText:
    case re2::kRegexpWordBoundary:
    case re2::kRegexpNoWordBoundary:
      return Ends::kNonWordOrEmpty;
    case re2::kRegexpLiteral:
      return EndsOfRune(re->rune(), re->parse_flags());
    case re2::kRegexpLiteralString:
      return re->nrunes() == 0
                 ? Ends::kNonWordOrEmpty
                 : EndsOfRune(re->runes()[re->nrunes() - 1], re->parse_flags());
    case re2::kRegexpCharClass:
      // (A folded class holds its other case forms already.)
      for (re2::RuneRange r : *re->cc()) {
        auto meets = [&](re2::Rune lo, re2::Rune hi) { return r.lo <= hi && r.hi >= lo; };
        if (meets('0', '9') || meets('A', 'Z') || meets('a', 'z') || meets('_', '_'))
          return Ends::kUnknown;
      }
      return Ends::kNonWord;
    case re2::kRegexpCapture:
    case re2::kRegexpPlus:
      return EndsOf(re->sub()[0], depth + 1);
    case re2::kRegexpConcat:
      // The last piece that matched something ends the match.
      for (int i = re->nsub() - 1; i >= 0; --i) {
        const Ends e = EndsOf(re->sub()[i], depth + 1);
        if (e != Ends::kNonWordOrEmpty) return e;
      }
      return Ends::kNonWordOrEmpty;
    case re2::kRegexpAlternate: {
      Ends all = Ends::kNonWord;
      for (int i = 0; i < re->nsub(); ++i) {
        const Ends e = EndsOf(re->sub()[i], depth + 1);
        if (e == Ends::kUnknown) return e;
        if (e == Ends::kNonWordOrEmpty) all = e;
      }
      return all;
    }
    case re2::kRegexpStar:
    case re2::kRegexpQuest:
    case re2::kRegexpRepeat: {
      if (re->op() == re2::kRegexpRepeat && re->max() == 0) return Ends::kNonWordOrEmpty;
      const Ends e = EndsOf(re->sub()[0], depth + 1);
      if (re->op() == re2::kRegexpRepeat && re->min() >= 1) return e;
      return e == Ends::kUnknown ? e : Ends::kNonWordOrEmpty;
    }
    default:  // any character, any byte, have match
      return Ends::kUnknown;
  }
}

// With `pieces`, the required pieces are moved there and, unless every piece is
// exact, Nothing is returned: the caller (ExtractAtoms) would only use the best
// piece when there is none, and the best one is always among them.
Info Concat(re2::Regexp** subs, int n, int depth, std::vector<Info>* pieces = nullptr) {
  Info best;  // the best required set seen among finished pieces
  Info run = Info::Exact({""});
  bool all_exact = true;
  // Whether the byte before subs[i] is sure not to be a word byte (what the
  // pieces before it end with); a run that starts there starts with the mark.
  bool after_non_word = false;
  auto retire = [&](Info piece) {
    piece = AsRequired(std::move(piece));
    if (pieces != nullptr) {
      if (piece.kind == Info::kRequired) pieces->push_back(std::move(piece));
    } else if (Better(piece, best)) {
      best = std::move(piece);
    }
  };
  for (int i = 0; i < n; ++i) {
    Info sub = Walk(subs[i], depth + 1);
    const bool sub_after_non_word = after_non_word;
    const Ends ends = EndsOf(subs[i], depth + 1);
    if (ends != Ends::kNonWordOrEmpty) after_non_word = ends == Ends::kNonWord;
    if (sub.kind == Info::kExact && run.kind == Info::kExact && sub.strs.size() == 1) {
      // One string (a literal, or a mark): appended to each of run's in place
      // (the common case; distinct strings stay distinct with one suffix). A
      // mark only counts at the start of a run: after anything else it is
      // left out, as ExtractAtoms would drop it.
      const std::string& b = *sub.strs.begin();
      bool too_long = false;
      for (const std::string& a : run.strs) too_long |= TooLong(a, b);
      if (OnlyMarks(b) && !(run.strs.size() == 1 && OnlyMarks(*run.strs.begin()))) {
        continue;
      }
      if (!too_long) {
        if (!b.empty()) {
          std::set<std::string> joined;
          while (!run.strs.empty()) {
            auto node = run.strs.extract(run.strs.begin());
            node.value() += b;
            joined.insert(std::move(node));
          }
          run.strs.swap(joined);
        }
        continue;
      }
    }
    if (sub.kind == Info::kExact && run.kind == Info::kExact &&
        run.strs.size() * sub.strs.size() <= kMaxExact) {
      std::set<std::string> cross;
      bool too_long = false;
      for (const std::string& a : run.strs) {
        for (const std::string& b : sub.strs) {
          if (TooLong(a, b)) too_long = true;
          cross.insert(a + b);
        }
      }
      if (!too_long) {
        run.strs = std::move(cross);
        continue;
      }
    }
    all_exact = false;
    retire(std::move(run));
    if (sub.kind == Info::kExact) {
      run = std::move(sub);  // may grow with what follows
      if (sub_after_non_word) {
        std::set<std::string> marked;
        for (const std::string& a : run.strs) marked.insert(kAfterNonWordMark + a);
        run.strs.swap(marked);
      }
    } else {
      retire(std::move(sub));
      run = Info::Exact({after_non_word ? std::string(1, kAfterNonWordMark) : ""});
    }
  }
  if (all_exact) return run;
  retire(std::move(run));
  return best;
}

Info Walk(re2::Regexp* re, int depth) {
  if (depth > 200) return Info::Nothing();  // parse depth is bounded; be safe anyway
  switch (re->op()) {
    case re2::kRegexpEmptyMatch:
    case re2::kRegexpEndLine:
    case re2::kRegexpEndText:
    case re2::kRegexpNoWordBoundary:
      return Info::Exact({""});
    case re2::kRegexpBeginLine:  // (after a newline or at the start)
    case re2::kRegexpBeginText:
      return Info::Exact({std::string(1, kAfterNonWordMark)});
    case re2::kRegexpWordBoundary:
      return Info::Exact({std::string(1, kBoundaryMark)});
    case re2::kRegexpLiteral:
      // A non-ASCII literal still marked for case folding could match another
      // case form we would not list: give no guarantee rather than a wrong one.
      if (re->rune() >= 0x80 && (re->parse_flags() & re2::Regexp::FoldCase)) {
        return Info::Nothing();
      }
      return Info::Exact({RuneUtf8(re->rune())});
    case re2::kRegexpLiteralString: {
      if (re->parse_flags() & re2::Regexp::FoldCase) {
        for (int i = 0; i < re->nrunes(); ++i) {
          if (re->runes()[i] >= 0x80) return Info::Nothing();
        }
      }
      std::string s;
      s.reserve(re->nrunes());
      for (int i = 0; i < re->nrunes(); ++i) AppendRuneUtf8(re->runes()[i], &s);
      Info one;  // (not Exact({s}): an initializer list would copy s)
      one.kind = Info::kExact;
      one.strs.insert(std::move(s));
      if (one.strs.begin()->size() > kMaxExactBytes) return AsRequired(std::move(one));
      return one;
    }
    case re2::kRegexpConcat:
      return Concat(re->sub(), re->nsub(), depth);
    case re2::kRegexpAlternate: {
      std::vector<Info> subs;
      bool all_exact = true;
      size_t total = 0;
      for (int i = 0; i < re->nsub(); ++i) {
        subs.push_back(Walk(re->sub()[i], depth + 1));
        if (subs.back().kind != Info::kExact) all_exact = false;
        total += subs.back().strs.size();
      }
      Info out;
      if (all_exact && total <= kMaxExact) {
        out.kind = Info::kExact;
      } else {
        out.kind = Info::kRequired;
        for (Info& s : subs) {
          s = AsRequired(std::move(s));
          if (s.kind == Info::kNothing) return Info::Nothing();
        }
      }
      for (Info& s : subs) out.strs.insert(s.strs.begin(), s.strs.end());
      return out;
    }
    case re2::kRegexpQuest: {
      Info sub = Walk(re->sub()[0], depth + 1);
      if (sub.kind != Info::kExact || sub.strs.size() >= kMaxExact)
        return Info::Nothing();
      sub.strs.insert("");
      return sub;
    }
    case re2::kRegexpPlus:
      return AsRequired(Walk(re->sub()[0], depth + 1));
    case re2::kRegexpRepeat:
      if (re->min() == 0) return Info::Nothing();
      return AsRequired(Walk(re->sub()[0], depth + 1));
    case re2::kRegexpCapture:
      return Walk(re->sub()[0], depth + 1);
    case re2::kRegexpCharClass: {
      re2::CharClass* cc = re->cc();
      if (cc->size() > kMaxClassRunes) return Info::Nothing();
      std::set<std::string> runes;
      for (re2::RuneRange r : *cc) {
        for (re2::Rune c = r.lo; c <= r.hi; ++c) runes.insert(RuneUtf8(c));
      }
      return Info::Exact(std::move(runes));
    }
    default:  // star, any char, any byte, no match, have match
      return Info::Nothing();
  }
}

int64_t SatAdd(int64_t a, int64_t b) {
  constexpr int64_t kCap = INT64_MAX / 4;
  return (a > kCap - b) ? kCap : a + b;
}
int64_t SatMul(int64_t a, int64_t b) {
  constexpr int64_t kCap = INT64_MAX / 4;
  if (a == 0 || b == 0) return 0;
  return (a > kCap / b) ? kCap : a * b;
}

// Estimate's recursion over the tree; `leaf` gives the cost of a literal, a string
// or a class (what case folding changes: see FoldedEstimateBound).
template <typename Leaf>
int64_t EstimateNodes(re2::Regexp* re, int depth, const Leaf& leaf) {
  if (depth > 1000) return INT64_MAX / 4;
  switch (re->op()) {
    case re2::kRegexpLiteral:
    case re2::kRegexpLiteralString:
    case re2::kRegexpCharClass:
      return leaf(re);
    case re2::kRegexpAnyChar:
      return 32;
    case re2::kRegexpConcat:
    case re2::kRegexpAlternate: {
      int64_t sum = re->nsub();
      for (int i = 0; i < re->nsub(); ++i)
        sum = SatAdd(sum, EstimateNodes(re->sub()[i], depth + 1, leaf));
      return sum;
    }
    case re2::kRegexpStar:
    case re2::kRegexpPlus:
    case re2::kRegexpQuest:
    case re2::kRegexpCapture:
      return SatAdd(EstimateNodes(re->sub()[0], depth + 1, leaf), 4);
    case re2::kRegexpRepeat: {
      int64_t copies = std::max(re->min(), re->max()) + 1;
      return SatAdd(SatMul(EstimateNodes(re->sub()[0], depth + 1, leaf) + 2, copies), 4);
    }
    default:
      return 2;
  }
}

int64_t ClassRanges(re2::Regexp* re) {
  int64_t ranges = 0;
  for (re2::RuneRange r : *re->cc()) {
    (void)r;
    ++ranges;
  }
  return ranges;
}

// Per-node upper bounds on RE2's instructions: a UTF-8 rune is at most 4 byte
// ranges; one rune range of a class splits into a bounded number of UTF-8
// sequences (at most 4 lengths x a few continuation splits), bounded by 32.
int64_t Estimate(re2::Regexp* re) {
  return EstimateNodes(re, 0, [](re2::Regexp* leaf) -> int64_t {
    switch (leaf->op()) {
      case re2::kRegexpLiteral:
        return 8;
      case re2::kRegexpLiteralString:
        return SatMul(8, leaf->nrunes());
      default:
        return SatAdd(SatMul(ClassRanges(leaf), 32), 4);
    }
  });
}

}  // namespace

RegexpAtoms ExtractAtoms(re2::Regexp* re, size_t min_atom_bytes) {
  while (re->op() == re2::kRegexpCapture) re = re->sub()[0];
  // A top-level concatenation guarantees each of its pieces: keep the best few,
  // so that a post must hold an atom of every one (AND of ORs).
  std::vector<Info> pieces;
  Info info = re->op() == re2::kRegexpConcat ? Concat(re->sub(), re->nsub(), 0, &pieces)
                                             : Walk(re, 0);
  info = AsRequired(std::move(info));
  if (pieces.empty() && info.kind == Info::kRequired) pieces.push_back(info);
  auto usable = [&](const Info& i) {
    if (i.kind != Info::kRequired) return false;
    for (const std::string& s : i.strs) {
      if (RealSize(s) < min_atom_bytes) return false;
    }
    return true;
  };
  pieces.erase(std::remove_if(pieces.begin(), pieces.end(),
                              [&](const Info& i) { return !usable(i); }),
               pieces.end());
  std::stable_sort(pieces.begin(), pieces.end(), Better);
  RegexpAtoms out;
  for (const Info& i : pieces) {
    if (out.groups.size() == Prefilter::kMaxGroups) break;
    // The atoms without their marks; word-anchored if they start with a mark that
    // says so, in every string that gives the same atom.
    std::vector<std::string>& texts = out.groups.emplace_back();
    std::vector<bool>& anchored = out.word_start.emplace_back();
    texts.reserve(i.strs.size());
    anchored.reserve(i.strs.size());
    bool marked = false;
    for (const std::string& s : i.strs) {
      if (std::none_of(s.begin(), s.end(), IsMark)) {
        texts.push_back(s);
        anchored.push_back(false);
        continue;
      }
      marked = true;
      size_t k = 0;
      bool boundary = false, after_non_word = false;
      for (; k < s.size() && IsMark(s[k]); ++k)
        (s[k] == kBoundaryMark ? boundary : after_non_word) = true;
      std::string& text = texts.emplace_back(s, k);
      text.erase(std::remove_if(text.begin(), text.end(), IsMark), text.end());
      anchored.push_back(after_non_word ||
                         (boundary && k < s.size() && IsRe2WordByte(s[k])));
    }
    // Unmarked, or all marked alike (the usual \b or ^ first), they are in order
    // and distinct, as the set was.
    auto ordered = [&] {
      for (size_t a = 1; a < texts.size(); ++a) {
        if (!(texts[a - 1] < texts[a])) return false;
      }
      return true;
    };
    if (marked && !ordered()) {
      std::vector<uint32_t> order(texts.size());
      for (uint32_t a = 0; a < order.size(); ++a) order[a] = a;
      std::sort(order.begin(), order.end(),
                [&](uint32_t a, uint32_t b) { return texts[a] < texts[b]; });
      std::vector<std::string> sorted;
      std::vector<bool> sorted_anchored;
      for (uint32_t a : order) {
        if (!sorted.empty() && sorted.back() == texts[a]) {
          sorted_anchored.back() = sorted_anchored.back() && anchored[a];
        } else {
          sorted.push_back(std::move(texts[a]));
          sorted_anchored.push_back(anchored[a]);
        }
      }
      texts.swap(sorted);
      anchored.swap(sorted_anchored);
    }
  }
  out.usable = !out.groups.empty();
  return out;
}

int64_t EstimateProgramSize(re2::Regexp* re) { return Estimate(re); }

namespace {

int64_t RuneBytes(re2::Rune r) {
  return r < 0x80 ? 1 : r < 0x800 ? 2 : r < 0x10000 ? 3 : 4;
}

// MaxMatchBytes of one rune of a literal with `flags`.
int64_t LiteralBytes(re2::Rune r, int flags) {
  if (flags & re2::Regexp::Latin1) return 1;
  if (flags & re2::Regexp::FoldCase) {
    const bool ascii_caseless = r < 0x80 && !((r | 0x20) >= 'a' && (r | 0x20) <= 'z');
    return ascii_caseless ? 1 : 4;
  }
  return RuneBytes(r);
}

constexpr int64_t kUnbounded = -1;
constexpr int64_t kMaxBytesCap = int64_t{1} << 40;

int64_t MaxBytesNodes(re2::Regexp* re, int depth) {
  if (depth > 1000) return kUnbounded;
  const int flags = re->parse_flags();
  int64_t n = 0;
  switch (re->op()) {
    case re2::kRegexpLiteral:
      return LiteralBytes(re->rune(), flags);
    case re2::kRegexpLiteralString:
      for (int i = 0; i < re->nrunes(); ++i) n += LiteralBytes(re->runes()[i], flags);
      return n;
    case re2::kRegexpCharClass: {
      if (flags & re2::Regexp::Latin1) return 1;
      for (re2::RuneRange r : *re->cc()) n = std::max(n, RuneBytes(r.hi));
      return n;
    }
    case re2::kRegexpAnyChar:
      return (flags & re2::Regexp::Latin1) ? 1 : 4;
    case re2::kRegexpAnyByte:
      return 1;
    case re2::kRegexpConcat:
    case re2::kRegexpAlternate:
      for (int i = 0; i < re->nsub(); ++i) {
        const int64_t sub = MaxBytesNodes(re->sub()[i], depth + 1);
        if (sub == kUnbounded) return kUnbounded;
        n = re->op() == re2::kRegexpConcat ? SatAdd(n, sub) : std::max(n, sub);
      }
      return n >= kMaxBytesCap ? kUnbounded : n;
    case re2::kRegexpCapture:
    case re2::kRegexpQuest:
      return MaxBytesNodes(re->sub()[0], depth + 1);
    case re2::kRegexpStar:
    case re2::kRegexpPlus:
    case re2::kRegexpRepeat: {
      const int64_t sub = MaxBytesNodes(re->sub()[0], depth + 1);
      if (sub == 0) return 0;  // repeats of the empty-width only
      if (sub == kUnbounded || re->op() != re2::kRegexpRepeat || re->max() < 0)
        return kUnbounded;
      n = SatMul(sub, re->max());
      return n >= kMaxBytesCap ? kUnbounded : n;
    }
    default:  // empty-width assertions, empty match, no match, have match
      return 0;
  }
}

}  // namespace

int64_t MaxMatchBytes(re2::Regexp* re) { return MaxBytesNodes(re, 0); }

namespace {

// True if parsing with case folding could not change what ExtractAtoms finds in a
// normalised post: only ASCII literals and classes (the scan lower-cases; folding
// adds their other case, and the two forms no post holds), no node already folded
// by (?i).
bool FoldFree(re2::Regexp* re, int depth) {
  if (depth > 200 || (re->parse_flags() & re2::Regexp::FoldCase)) return false;
  switch (re->op()) {
    case re2::kRegexpLiteral:
      return re->rune() < 0x80;
    case re2::kRegexpLiteralString:
      for (int i = 0; i < re->nrunes(); ++i) {
        if (re->runes()[i] >= 0x80) return false;
      }
      return true;
    case re2::kRegexpCharClass: {
      // ASCII ranges, and a last range from ASCII to the end of Unicode (a negated
      // class such as \W): folding only takes the two forms out of it, and such a
      // class is too large to give atoms either way.
      re2::CharClass* cc = re->cc();
      for (auto it = cc->begin(); it != cc->end(); ++it) {
        const bool last = std::next(it) == cc->end();
        if (it->hi >= 0x80 && !(last && it->lo <= 0x80 && it->hi == re2::Runemax)) {
          return false;
        }
      }
      return true;
    }
    default:
      for (int i = 0; i < re->nsub(); ++i) {
        if (!FoldFree(re->sub()[i], depth + 1)) return false;
      }
      return true;
  }
}

}  // namespace

bool FoldFree(re2::Regexp* re) { return FoldFree(re, 0); }

// An upper bound on Estimate of the tree `re` (FoldFree, parsed without folding)
// would have had, parsed with folding. Folding changes only the letters with a
// third case form, k and s: each becomes a class of three runes (estimated 100)
// and splits the string it was in, adding at most two pieces to a concatenation.
// So a literal rune is bounded by 11 (8, and up to 3 for pieces) and k or s by 104
// (11(n-m) + 104m covers 8(n-m) + 100m + 2m + 1 whenever n >= 1). An ASCII range
// of a class gains at most two ranges of the other case, and the class at most
// four for the two other forms of k and s (added, or cut out of a negated class's
// last range): 3r + 4 ranges for r.
int64_t FoldedEstimateBound(re2::Regexp* re) {
  auto rune_cost = [](re2::Rune r) -> int64_t {
    r |= 0x20;  // ASCII lower case
    return r == 'k' || r == 's' ? 104 : 11;
  };
  return EstimateNodes(re, 0, [&](re2::Regexp* leaf) -> int64_t {
    switch (leaf->op()) {
      case re2::kRegexpLiteral:
        return rune_cost(leaf->rune());
      case re2::kRegexpLiteralString: {
        int64_t sum = 0;
        for (int i = 0; i < leaf->nrunes(); ++i)
          sum = SatAdd(sum, rune_cost(leaf->runes()[i]));
        return sum;
      }
      default:
        return SatAdd(SatMul(3 * ClassRanges(leaf) + 4, 32), 4);
    }
  });
}

re2::Regexp* ParseForAtoms(std::string_view pattern, int flags,
                           int64_t large_instructions, bool* large,
                           re2::RegexpStatus* status, bool* plain_rejected) {
  const re2::StringPiece text(pattern.data(), pattern.size());
  // A byte outside ASCII is (but for a capture's name) in a literal or a class that
  // FoldFree refuses, as in lists in most languages but English: such a pattern
  // goes straight to the folded parse, without a parse that would be dropped.
  const bool ascii = std::all_of(pattern.begin(), pattern.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x80;
  });
  if ((flags & re2::Regexp::FoldCase) && ascii) {
    re2::Regexp* plain = re2::Regexp::Parse(
        text, static_cast<re2::Regexp::ParseFlags>(flags & ~re2::Regexp::FoldCase),
        status);
    if (plain == nullptr && plain_rejected != nullptr) *plain_rejected = true;
    // The bound holds node by node; the margin covers the rest (the two parses
    // may factor an alternation differently around k and s). Lists' patterns are
    // bounded at hundreds to a few thousand instructions, far below it.
    if (plain != nullptr && FoldFree(plain) &&
        FoldedEstimateBound(plain) <= large_instructions / 2) {
      *large = false;
      return plain;
    }
    // (A syntax error is reported by the parse below, as RE2 will see it.)
    if (plain != nullptr) plain->Decref();
  }
  re2::Regexp* folded =
      re2::Regexp::Parse(text, static_cast<re2::Regexp::ParseFlags>(flags), status);
  if (folded != nullptr) *large = Estimate(folded) > large_instructions;
  return folded;
}

// ------------------------------------------------------------------ automaton --

void Prefilter::AddItem(uint32_t item,
                        const std::vector<std::vector<std::string>>& groups,
                        const std::vector<std::vector<bool>>& word_start) {
  AddItem(item, groups, [&](size_t g, size_t k) {
    return g < word_start.size() && k < word_start[g].size() && word_start[g][k];
  });
}

void Prefilter::AddWordItem(uint32_t item,
                            const std::vector<std::vector<std::string>>& groups) {
  AddItem(item, groups, [](size_t, size_t) { return true; });
}

template <typename WordStart>
void Prefilter::AddItem(uint32_t item,
                        const std::vector<std::vector<std::string>>& groups,
                        const WordStart& word_start) {
  // An empty atom is in every text, an empty group in none: either way the item
  // must simply always be checked.
  size_t used = std::min(groups.size(), kMaxGroups);
  bool degenerate = used == 0;
  for (size_t g = 0; g < used; ++g) {
    if (groups[g].empty()) degenerate = true;
    for (const std::string& a : groups[g]) degenerate |= a.empty();
  }
  if (degenerate || item >= kItemLimit) {  // (an item past the keys' range: always)
    AddAlwaysItem(item);
    return;
  }
  if (item_groups_.size() <= item) item_groups_.resize(item + 1, 0);
  item_groups_[item] = static_cast<uint8_t>(used);
  for (size_t g = 0; g < used; ++g) {
    for (size_t j = 0; j < groups[g].size(); ++j) {
      const std::string& a = groups[g][j];
      const bool word = word_start(g, j);
      const uint32_t begin = static_cast<uint32_t>(pending_text_.size());
      pending_text_.append(a);
      uint64_t head = 0;
      for (size_t k = begin; k < pending_text_.size(); ++k) {
        pending_text_[k] = AsciiLower(pending_text_[k]);
        if (k - begin < 8)
          head |= uint64_t{static_cast<uint8_t>(pending_text_[k])}
                  << (56 - 8 * (k - begin));
      }
      pending_.push_back({head, begin, static_cast<uint32_t>(a.size()),
                          static_cast<uint32_t>(item * kMaxGroups + g), word});
    }
  }
}

void Prefilter::AddAlwaysItem(uint32_t item) { always_.push_back(item); }

void Prefilter::Build(uint32_t item_count) {
  item_count_ = item_count;
  item_groups_.resize(item_count, 0);
  const std::string_view text(pending_text_);
  auto atom_of = [&](const Pending& p) { return text.substr(p.begin, p.size); };
  // The atoms of the scan, then the word-anchored ones (two tries); each by atom,
  // then key. Heads that differ order their atoms as the bytes do (a zero pad
  // sorts first, as a shorter string does).
  std::sort(pending_.begin(), pending_.end(), [&](const Pending& a, const Pending& b) {
    if (a.word != b.word) return b.word;
    if (a.head != b.head) return a.head < b.head;
    const int order = atom_of(a).compare(atom_of(b));
    return order != 0 ? order < 0 : a.key < b.key;
  });
  pending_.erase(std::unique(pending_.begin(), pending_.end(),
                             [&](const Pending& a, const Pending& b) {
                               return a.key == b.key && a.word == b.word &&
                                      atom_of(a) == atom_of(b);
                             }),
                 pending_.end());

  // Distinct atoms in sorted order: atom k is pending_[atom_first[k],
  // atom_first[k + 1]). (The scan's, then the word-anchored ones from word_begin
  // on.)
  std::vector<std::string_view> atoms;
  std::vector<uint32_t> atom_first;
  size_t word_begin = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    const std::string_view atom = atom_of(pending_[i]);
    const bool first_word = pending_[i].word && (i == 0 || !pending_[i - 1].word);
    if (atoms.empty() || atoms.back() != atom || first_word) {
      if (!pending_[i].word) word_begin = atoms.size() + 1;
      atoms.push_back(atom);
      atom_first.push_back(static_cast<uint32_t>(i));
    }
  }
  atom_first.push_back(static_cast<uint32_t>(pending_.size()));
  // Per item and group (a Pending key), first the number of items its atoms
  // name, summed (the group of an item with the least is its lead group: the
  // fewest items to walk when its atoms are seen); then, for the other groups,
  // their atom counts; then where their atoms go in item_rest_, and for the lead
  // group where the item's record starts.
  std::vector<uint32_t> slot(size_t{item_count} * kMaxGroups, 0);
  for (size_t k = 0; k + 1 < atom_first.size(); ++k) {
    const uint32_t named = atom_first[k + 1] - atom_first[k];
    for (uint32_t i = atom_first[k]; i < atom_first[k + 1]; ++i)
      slot[pending_[i].key] += named;  // (at most pending_.size())
  }
  std::vector<uint8_t> lead(item_count, 0);
  for (uint32_t item = 0; item < item_count; ++item) {
    const uint32_t* weight = &slot[size_t{item} * kMaxGroups];
    for (uint32_t g = 1; g < item_groups_[item]; ++g) {
      if (weight[g] < weight[lead[item]]) lead[item] = static_cast<uint8_t>(g);
    }
  }
  std::fill(slot.begin(), slot.end(), 0);
  for (const Pending& p : pending_) ++slot[p.key];
  item_rest_.clear();
  for (uint32_t item = 0; item < item_count; ++item) {
    if (item_groups_[item] < 2) continue;
    uint32_t* at = &slot[size_t{item} * kMaxGroups];
    // (A lead key holds the record's start in the bits an item has: an item whose
    // record would start past them is always checked, as AddItem does past
    // kItemLimit items. No list within ParseLimits comes near.)
    if (item_rest_.size() >= kItemLimit) {
      item_groups_[item] = 0;
      always_.push_back(item);
      continue;
    }
    at[lead[item]] = static_cast<uint32_t>(item_rest_.size());
    item_rest_.push_back(item);
    item_rest_.push_back(item_groups_[item] - 1u);
    for (uint32_t g = 0; g < item_groups_[item]; ++g) {
      if (g == lead[item]) continue;
      item_rest_.push_back(at[g]);
      at[g] = static_cast<uint32_t>(item_rest_.size());
      item_rest_.resize(item_rest_.size() + item_rest_.back());
    }
  }
  // Each atom's keys; it is an item's other atom where it is in its other groups.
  atom_items_.clear();
  std::vector<uint32_t> atom_item_begin;
  for (size_t k = 0; k + 1 < atom_first.size(); ++k) {
    const uint32_t name = static_cast<uint32_t>(atom_items_.size());
    atom_item_begin.push_back(name);
    for (uint32_t i = atom_first[k]; i < atom_first[k + 1]; ++i) {
      const uint32_t item = pending_[i].key / kMaxGroups;
      const uint32_t g = pending_[i].key % kMaxGroups;
      uint32_t& at = slot[pending_[i].key];
      if (item_groups_[item] == 0) {
        continue;  // (always checked)
      } else if (item_groups_[item] == 1) {
        atom_items_.push_back(item << 4 | kOneGroup);
      } else if (g == lead[item]) {
        atom_items_.push_back(at << 4 | kLeadGroup);
      } else {
        item_rest_[at++] = name;
      }
    }
    if (atom_items_.size() == name) atom_items_.push_back(kNoItems);
    atom_items_.back() |= kLastKey;
  }
  std::sort(always_.begin(), always_.end());
  always_.erase(std::unique(always_.begin(), always_.end()), always_.end());
  atom_count_ = static_cast<uint32_t>(atoms.size());
  // The pending atoms are read: freed before the tries are built, where a load of
  // the bench's 10k rules peaks (their text stays: the atoms point into it).
  std::vector<Pending>().swap(pending_);
  std::vector<uint8_t>().swap(item_groups_);
  std::vector<uint32_t>().swap(slot);
  tails_.clear();
  // (Each trie reads its part of the atoms in place: copies of them were more of
  // the load's peak.)
  auto part = [&](size_t begin, size_t end, std::vector<uint32_t>* nodes) {
    return BuildTrie(atoms.data() + begin, atom_item_begin.data() + begin, end - begin,
                     nodes == &nodes_, nodes);
  };
  state_count_ = part(0, word_begin, &nodes_);
  word_state_count_ = part(word_begin, atoms.size(), &word_nodes_);
  FillRootRow();
  SetDenseStates(SIZE_MAX);
  tails_.shrink_to_fit();
  pending_text_.clear();
  pending_text_.shrink_to_fit();
}

namespace {
// The shortest cut of an atom longer than that. The shortest prefix that sets an
// atom apart is often 3-5 bytes (most of the cuts of the bench's lists), and
// posts hold such prefixes every few bytes: at 10k rules, 474 tail tests a bench
// post, 96% of them failing, each after the scan left its tight loop. With cuts
// of 6 bytes at least: 63 tests, 46 failing, for 15k more states at 100k rules
// (of 0.3M).
constexpr size_t kMinCut = 6;
}  // namespace

uint32_t Prefilter::BuildTrie(const std::string_view* atoms,
                              const uint32_t* atom_item_begin, size_t atom_count,
                              bool links, std::vector<uint32_t>* out) {
  // Each atom's cut: one byte past its longest common prefix with its sorted
  // neighbours (which are the atoms sharing most of it), and kMinCut bytes at
  // least. Cut atoms are distinct, and no cut atom is a proper prefix of another
  // unless it is a whole atom.
  auto common = [](std::string_view a, std::string_view b) {
    size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    return n;
  };
  std::vector<uint32_t> cut(atom_count);
  {
    size_t before = 0;
    for (size_t a = 0; a < atom_count; ++a) {
      const size_t after = a + 1 < atom_count ? common(atoms[a], atoms[a + 1]) : 0;
      cut[a] = static_cast<uint32_t>(
          std::min(atoms[a].size(), std::max({before + 1, after + 1, kMinCut})));
      before = after;
    }
  }

  // The trie of the cut atoms, built from the sorted atoms: a node's children are
  // created in byte order. Nodes get depth-first ids here and are renumbered
  // breadth-first below.
  struct BuildEdge {
    uint32_t from;
    uint8_t byte;
    uint32_t to;
  };
  std::vector<BuildEdge> edges;
  std::vector<uint32_t> term(1, kNone), depth(1, 0);
  std::vector<uint32_t> path;  // node at each depth along the previous cut atom
  std::string_view prev;
  for (uint32_t a = 0; a < atom_count; ++a) {
    std::string_view s = atoms[a].substr(0, cut[a]);
    const size_t shared = common(s, prev);
    path.resize(shared + 1);
    path[0] = 0;
    for (size_t k = shared; k < s.size(); ++k) {
      uint32_t node = static_cast<uint32_t>(term.size());
      term.push_back(kNone);
      depth.push_back(static_cast<uint32_t>(k + 1));
      edges.push_back({path[k], static_cast<uint8_t>(s[k]), node});
      path.push_back(node);
    }
    term[path[s.size()]] = a;
    prev = s;
  }
  const uint32_t n = static_cast<uint32_t>(term.size());

  // Breadth-first numbering by a counting sort on depth: stable, so siblings stay
  // in byte order and parents come before children.
  std::vector<uint32_t> id(n);
  {
    uint32_t max_depth = 0;
    for (uint32_t d : depth) max_depth = std::max(max_depth, d);
    std::vector<uint32_t> first(max_depth + 2, 0);
    for (uint32_t d : depth) ++first[d + 1];
    for (uint32_t d = 0; d <= max_depth; ++d) first[d + 1] += first[d];
    for (uint32_t i = 0; i < n; ++i) id[i] = first[depth[i]]++;
  }

  // Edges by breadth-first state, each state's in increasing byte order (edges
  // were created in sorted-atom order).
  std::vector<uint32_t> edge_begin(n + 1, 0);
  for (const BuildEdge& e : edges) ++edge_begin[id[e.from] + 1];
  for (uint32_t i = 0; i < n; ++i) edge_begin[i + 1] += edge_begin[i];
  std::vector<uint8_t> edge_byte(edges.size());
  std::vector<uint32_t> edge_next(edges.size());
  {
    std::vector<uint32_t> fill(edge_begin.begin(), edge_begin.end() - 1);
    for (const BuildEdge& e : edges) {
      uint32_t at = fill[id[e.from]]++;
      edge_byte[at] = static_cast<uint8_t>(e.byte);
      edge_next[at] = id[e.to];
    }
  }
  std::vector<BuildEdge>().swap(edges);
  std::vector<uint32_t> atom_at(n, kNone);
  for (uint32_t i = 0; i < n; ++i) atom_at[id[i]] = term[i];
  std::vector<uint32_t>().swap(term);
  std::vector<uint32_t>().swap(depth);
  std::vector<uint32_t>().swap(id);

  // Failure and dictionary links, in breadth-first order (parents first); a
  // trie walked from word starts has none (every failure link is the root).
  std::vector<uint32_t> fail(n, 0), dict(n, kNone);
  uint32_t root_next[256] = {};
  for (uint32_t e = edge_begin[0]; e < edge_begin[1]; ++e) {
    root_next[edge_byte[e]] = edge_next[e];
  }
  for (uint32_t s = 0; s < n && links; ++s) {
    for (uint32_t e = edge_begin[s]; e < edge_begin[s + 1]; ++e) {
      uint32_t child = edge_next[e];
      uint8_t c = edge_byte[e];
      uint32_t f = 0;
      if (s != 0) {
        uint32_t t = fail[s];
        for (;;) {
          if (t == 0) {
            f = root_next[c];
            break;
          }
          uint32_t found = kNone;
          for (uint32_t k = edge_begin[t]; k < edge_begin[t + 1]; ++k) {
            if (edge_byte[k] == c) {
              found = edge_next[k];
              break;
            }
          }
          if (found != kNone) {
            f = found;
            break;
          }
          t = fail[t];
        }
      }
      fail[child] = f;
      dict[child] = atom_at[f] != kNone ? f : dict[f];
    }
  }

  // The scan form: records in breadth-first order, states renamed to offsets.
  auto head_of = [&](uint32_t s) {
    const uint32_t count = edge_begin[s + 1] - edge_begin[s];
    // Atoms are lower-cased, so a state has fewer than 256 edges.
    uint32_t head = count;
    if (count == 1) head |= uint32_t{edge_byte[edge_begin[s]]} << 8;
    if (atom_at[s] != kNone || dict[s] != kNone) head |= kOutputBit;
    if (atom_at[s] != kNone && cut[atom_at[s]] < atoms[atom_at[s]].size())
      head |= kTailBit;
    return head;
  };
  std::vector<uint32_t> at(n + 1, 0);
  for (uint32_t s = 0; s < n; ++s) at[s + 1] = at[s] + RecordWords(head_of(s));
  std::vector<uint32_t>& nodes = *out;
  nodes.assign(at[n], 0);
  for (uint32_t s = 0; s < n; ++s) {
    const uint32_t head = head_of(s);
    const uint32_t count = head & 0xFF;
    uint32_t* record = &nodes[at[s]];
    record[kFail] = at[fail[s]];
    record[kHead] = head;
    uint32_t* output = record + OutputAt(head);
    if (head & kOutputBit) {
      output[kAtom] = atom_at[s] == kNone ? kNone : atom_item_begin[atom_at[s]];
      output[kDict] = dict[s] == kNone ? kNone : at[dict[s]];
    }
    if (head & kTailBit) {
      const std::string_view tail = atoms[atom_at[s]].substr(cut[atom_at[s]]);
      output[kTailBegin] = static_cast<uint32_t>(tails_.size());
      output[kTailSize] = static_cast<uint32_t>(tail.size());
      tails_.append(tail);
    }
    uint32_t* edges = record + kEdges;
    if (count == 1) {
      edges[0] = at[edge_next[edge_begin[s]]];
    } else if (count > 1) {
      const uint32_t groups = (count + 7) / 8;
      uint8_t* bytes = reinterpret_cast<uint8_t*>(edges);
      uint32_t* next = edges + groups * 2;
      for (uint32_t k = 0; k < groups * 8; ++k) {
        bytes[k] = edge_byte[edge_begin[s] + std::min(k, count - 1)];
      }
      for (uint32_t k = 0; k < count; ++k) next[k] = at[edge_next[edge_begin[s] + k]];
    }
  }
  return n;
}

void Prefilter::MakeDense(const std::vector<uint32_t>& nodes, uint32_t record_count,
                          bool failure_links, size_t states, DenseRows* d) {
  *d = DenseRows();
  if (nodes.empty() || nodes.size() >= kDenseExit) return;
  // The classes: one per byte on some dense state's edge, 0 for every other byte
  // (from a dense state, such a byte leads where the root's row says: the root or
  // nowhere). The records in order, as far as their rows fit: a large list's
  // tries have a hundred times the states that do, and this runs on every restore.
  std::vector<uint32_t>& offsets = d->node;  // each dense record's, in order
  auto add_class = [&](uint8_t b) {
    if (d->byte_class[b] == 0 && d->class_count < 256)
      d->byte_class[b] = static_cast<uint8_t>(d->class_count++);
  };
  // (The loop over the states runs in calls, runs.h. A record takes two words at
  // least.)
  uint32_t at = 0;
  ForEachRun(nodes.size(), [&](size_t) {
    if (at >= nodes.size() || offsets.size() >= std::min(states, size_t{record_count}))
      return false;
    ForEachEdge(nodes, at, [&](uint8_t byte, uint32_t) { add_class(byte); });
    if ((offsets.size() + 1) * d->class_count * sizeof(uint32_t) > kDenseBytes)
      return false;  // (its classes stay: unused columns)
    offsets.push_back(at);
    at += RecordWords(nodes[at + kHead]);
    return true;
  });
  // Edge bytes are lower-cased, so some byte is on no edge and class 0 is its; a
  // (hostile) form whose edges use every byte value is read sparse.
  const uint32_t classes = d->class_count;
  const size_t n = offsets.size();
  if (classes == 256 || n == 0) {
    *d = DenseRows();
    return;
  }
  d->end = at;  // the first record not dense, or the end
  d->row.assign(d->end, 0);
  d->entries.assign(n * classes, 0);
  for (size_t r = 0; r < n; ++r) d->row[offsets[r]] = static_cast<uint32_t>(r * classes);
  auto entry = [&](uint32_t target) {
    return target < d->end && !(nodes[target + kHead] & kOutputBit) ? d->row[target]
                                                                    : target | kDenseExit;
  };
  // Rows in breadth-first order: a state's failure state is shallower, so its row
  // is filled first. The root's row: its edges, else the root (the scan) or
  // nowhere (the walk), both entry 0.
  ForEachRun(n, [&](size_t r) {
    const uint32_t here = offsets[r];
    uint32_t* out = &d->entries[r * classes];
    if (failure_links && r != 0) {
      const uint32_t* fail_row = &d->entries[d->row[nodes[here + kFail]]];
      std::copy(fail_row, fail_row + classes, out);
    }
    ForEachEdge(nodes, here, [&](uint8_t byte, uint32_t next) {
      out[d->byte_class[byte]] = entry(next);
    });
    return true;
  });
  // A capital takes its small letter's class, so a step reads the text's byte as
  // it is: no lower-casing on the hot path (Candidates' instructions on 800 bench
  // posts at 10k rules: 136 -> 128M). After the rows: edges are lower-cased, and
  // an edge on a capital (only a hostile form has one) stays one no step takes.
  for (int b = 'A'; b <= 'Z'; ++b) d->byte_class[b] = d->byte_class[b | 0x20];
  d->count = n;
}

void Prefilter::SetDenseStates(size_t states) {
  MakeDense(nodes_, state_count_, /*failure_links=*/true, states, &dense_);
  MakeDense(word_nodes_, word_state_count_, /*failure_links=*/false, states,
            &word_dense_);
}

void Prefilter::FillRootRow() {
  std::memset(root_next_, 0, sizeof(root_next_));
  std::memset(word_root_next_, 0, sizeof(word_root_next_));
  if (!nodes_.empty())
    ForEachEdge(nodes_, 0, [&](uint8_t byte, uint32_t next) { root_next_[byte] = next; });
  if (!word_nodes_.empty()) {
    ForEachEdge(word_nodes_, 0,
                [&](uint8_t byte, uint32_t next) { word_root_next_[byte] = next; });
  }
  // Capitals as their small letters (see SetDenseStates).
  for (int b = 'A'; b <= 'Z'; ++b) {
    root_next_[b] = root_next_[b | 0x20];
    word_root_next_[b] = word_root_next_[b | 0x20];
  }
}

namespace {

// IsAsciiAlnum as a table: the word-anchored walk asks it of every byte of a post
// (a load instead of two range tests: Candidates' 128 -> 122M instructions on 800
// bench posts at 10k rules).
struct AlnumTable {
  bool of[256] = {};
  constexpr AlnumTable() {
    for (int c = 0; c < 256; ++c) of[c] = IsAsciiAlnum(static_cast<unsigned char>(c));
  }
};
constexpr AlnumTable kAlnum;

// The state a sparse record (head `head`, edges at `edges`) goes to on byte `c`,
// or 0 (the root: no record has an edge to it) if it has no edge on `c`.
inline uint32_t EdgeOn(const uint32_t* edges, uint32_t head, uint8_t c) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
  const uint32_t count = head & 0xFF;
  if (count == 1) return (head >> 8 & 0xFF) == c ? edges[0] : 0;
  // 8 edge bytes at a time: the lowest zero byte of bytes ^ c is the first edge
  // on c (the bit trick flags no byte below a true zero).
  const uint32_t groups = (count + 7) / 8;
  const uint64_t spread = kOnes * c;
  for (uint32_t g = 0; g < groups; ++g) {
    uint64_t word;
    std::memcpy(&word, edges + g * 2, 8);
    const uint64_t x = word ^ spread;
    const uint64_t zero = (x - kOnes) & ~x & kHighs;
    if (zero != 0)
      return edges[groups * 2 + g * 8 + static_cast<uint32_t>(__builtin_ctzll(zero)) / 8];
  }
  return 0;
}

}  // namespace

// 8 bytes at a time while 8 are left: the word-anchored walk passes over every
// letter and digit of a post this way (one byte at a time, 8 instructions a byte,
// it was 3% of a check's instructions at 10k rules).
size_t AsciiAlnumRunEnd(std::string_view view, size_t i) {
  const auto* text = reinterpret_cast<const uint8_t*>(view.data());
  const size_t n = view.size();
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    std::memcpy(&x, text + i, 8);
    // Per byte, its low 7 bits plus 0x80 - c set bit 7 exactly when they are c or
    // more (no carry leaves a byte: 0x7F + 0x50 < 0x100), so a range [lo, hi] is
    // "lo or more and not hi + 1 or more". A byte with bit 7 set is no ASCII
    // letter or digit.
    const uint64_t low = x & ~kHighs;
    const uint64_t digit =
        (low + kOnes * (0x80 - '0')) & ~(low + kOnes * (0x80 - '9' - 1));
    const uint64_t small = low | kOnes * 0x20;  // a capital as its small letter
    const uint64_t letter =
        (small + kOnes * (0x80 - 'a')) & ~(small + kOnes * (0x80 - 'z' - 1));
    const uint64_t other = ~((digit | letter) & ~x) & kHighs;
    if (other != 0) return i + static_cast<size_t>(__builtin_ctzll(other)) / 8;
  }
  while (i < n && kAlnum.of[text[i]]) ++i;
  return i;
}

// Steps the automaton through its dense states (entries `dense`, columns by
// `byte_class`) on `text` (`n` bytes), from byte `i` (< n) and the dense state
// whose row is at `row` on. Returns the last byte stepped on, with *entry the
// entry that step read: kDenseExit set if it left the dense states or reached a
// state with atoms, where it stops; else it stopped at the text's end. Most of a
// post's bytes take this loop. It is a loop of its own so that its few values stay
// in registers: as the scan's one loop, which calls out for the atoms found, it
// kept the byte's index and the tables' pointers on the stack and loaded them
// again at every step (natively, the bench's 10k pattern rules: 131.7k -> 115.5k
// instructions a check in Candidates; V8's wasm code was no faster).
inline size_t Prefilter::DenseSteps(const uint32_t* dense, const uint8_t* byte_class,
                                    const uint8_t* text, size_t n, size_t i, uint32_t row,
                                    uint32_t* entry) {
  for (;; ++i) {
    const uint32_t v = dense[row + byte_class[text[i]]];
    if (v >= kDenseExit || i + 1 == n) {
      *entry = v;
      return i;
    }
    row = v;
  }
}

std::vector<uint32_t> Prefilter::Candidates(
    std::string_view text, const std::vector<uint32_t>& extra_word_starts) const {
  std::vector<uint32_t> out(always_);
  if (atom_count_ == 0) return out;
  const size_t words = (atom_items_.size() + 63) / 64;
  if (atom_seen_.size() != words) atom_seen_.assign(words, 0);
  if (item_state_.size() != item_count_) item_state_.assign(item_count_, 0);
  if (++epoch_ == 0) {  // wrapped: forget every stamp
    std::fill(item_state_.begin(), item_state_.end(), 0);
    epoch_ = 1;
  }
  // Always-checked items are in `out` already: marked decided, atoms never add
  // them again.
  for (uint32_t i : always_) item_state_[i] = epoch_;
  atoms_found_.clear();
  leads_found_.clear();
  // True if the text after position `end` starts with the tail of the atom of
  // `record` (lower-cased).
  auto tail_follows = [&](size_t end, const uint32_t* output) {
    const uint32_t size = output[kTailSize];
    if (size > text.size() - end) return false;
    const char* tail = tails_.data() + output[kTailBegin];
    for (uint32_t k = 0; k < size; ++k) {
      if (AsciiLower(text[end + k]) != tail[k]) return false;
    }
    return true;
  };
  // The atom of the record at `record` (head `head`), whose cut ends at text
  // position `i`, if it has one and its tail follows: its items' groups are
  // satisfied. An atom seen before may have a suffix whose tail did not follow
  // then, so the caller walks a dictionary chain to its end. (Inlined, as
  // walk_from below is, for the same reason.)
  auto found = [&](const uint32_t* record, uint32_t head, size_t i)
      __attribute__((always_inline)) {
    const uint32_t a = record[OutputAt(head) + kAtom];
    if (a == kNone || (atom_seen_[a / 64] >> (a % 64) & 1) ||
        ((head & kTailBit) && !tail_follows(i + 1, record + OutputAt(head)))) {
      return;
    }
    atom_seen_[a / 64] |= uint64_t{1} << (a % 64);
    atoms_found_.push_back(a);
    for (uint32_t k = a;; ++k) {
      const uint32_t key = atom_items_[k];
      const uint32_t value = key >> 4 & (kItemLimit - 1);
      if ((key & 15) == kOneGroup) {
        if (item_state_[value] != epoch_) {
          item_state_[value] = epoch_;
          out.push_back(value);
        }
      } else if ((key & 15) == kLeadGroup) {
        leads_found_.push_back(value);  // (decided after the scan, once)
      }
      if (key & kLastKey) break;
    }
  };

  // The atoms anywhere: the automaton, one step a byte.
  if (state_count_ > 1) {
    const uint32_t* nodes = nodes_.data();
    const uint32_t* dense = dense_.entries.data();
    const uint32_t* dense_row = dense_.row.data();
    const uint8_t* byte_class = dense_.byte_class;
    const uint32_t dense_end = dense_.end;
    // One step on byte `c` from sparse state *s (or the root, when no state is
    // dense), through failure links as far as needed (one may lead to a dense
    // state); returns whether an atom's cut ends at the state reached.
    auto sparse_step = [&](uint8_t c, uint32_t* state) {
      uint32_t s = *state;
      uint32_t head;
      for (;;) {
        if (s < dense_end) {  // one step, the failure links already followed
          const uint32_t v = dense[dense_row[s] + byte_class[c]];
          if (v >= kDenseExit) {
            s = v & ~kDenseExit;
            head = nodes[s + kHead];
          } else {
            s = dense_.node[v / dense_.class_count];
            head = 0;
          }
          break;
        }
        if (s == 0) {  // (the root, when no state is dense)
          s = root_next_[c];
          head = nodes[s + kHead];
          break;
        }
        const uint32_t* record = nodes + s;
        head = record[kHead];
        if ((head & 0xFF) != 0) {
          const uint32_t next =
              EdgeOn(record + kEdges, head, static_cast<uint8_t>(AsciiLower(c)));
          if (next != 0) {
            s = next;
            head = nodes[s + kHead];
            break;
          }
        }
        s = record[kFail];
      }
      *state = s;
      return (head & kOutputBit) != 0;
    };
    // (The text as it is: capitals share their small letters' classes and root
    // edges.)
    const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
    const size_t n = text.size();
    uint32_t s = 0;
    for (size_t i = 0; i < n; ++i) {
      if (s < dense_end) {
        uint32_t v;
        i = DenseSteps(dense, byte_class, bytes, n, i, dense_row[s], &v);
        // (Below kDenseExit: the text's end, where the state no longer matters.)
        if (v < kDenseExit) continue;
        s = v & ~kDenseExit;
        if (!(nodes[s + kHead] & kOutputBit)) continue;
      } else if (!sparse_step(bytes[i], &s)) {
        continue;
      }
      // Every atom whose cut ends here: this state's, then its dictionary chain's.
      for (const uint32_t* record = nodes + s;;) {
        const uint32_t head_here = record[kHead];
        found(record, head_here, i);
        const uint32_t dict = record[OutputAt(head_here) + kDict];
        if (dict == kNone) break;
        record = nodes + dict;
      }
    }
  }

  // The word-anchored atoms: a walk down their trie from each place a word can
  // start, until the text leaves it. Each state on the way is a prefix of the
  // text from there, so its own atom is all it holds (no failure links, no
  // dictionary chains).
  if (word_state_count_ > 1) {
    const uint32_t* nodes = word_nodes_.data();
    const size_t n = text.size();
    // From the text's start and after each byte that is not an ASCII letter or
    // digit (RE2's non-word bytes, '_', and the space before a word). The bytes
    // of a run of letters and digits are passed over (AsciiAlnumRunEnd): no walk
    // can start inside it.
    const uint32_t* dense = word_dense_.entries.data();
    const uint32_t* dense_row = word_dense_.row.data();
    const uint8_t* byte_class = word_dense_.byte_class;
    const uint32_t dense_end = word_dense_.end;
    // Inlined: clang (the wasm build) kept it a function of its own, called at
    // every word start, and what it captures by reference (the tables' pointers,
    // the text) lived in wasm memory to be loaded again in each call. With `found`
    // above, the generated code of a warm check at 10k rules in Node, 200 bench
    // posts: 580.6k -> 567.7k x86 instructions (natively, where GCC had inlined
    // them, 473.5k -> 473.0k).
    auto walk_from = [&](size_t i) __attribute__((always_inline)) {
      uint32_t s;
      if (dense_end == 0) {  // no dense states
        s = word_root_next_[static_cast<uint8_t>(text[i])];
        if (s == 0) return;
      } else {
        s = 0;  // the root, dense
      }
      for (;;) {
        if (s < dense_end) {
          // Through the dense states, until a byte leads nowhere (the walk ends),
          // to a state with an atom or out of them (on below), or the text ends.
          uint32_t row = dense_row[s], v;
          for (;;) {
            v = dense[row + byte_class[static_cast<uint8_t>(text[i])]];
            if (v == 0) return;
            if (v >= kDenseExit) break;
            if (++i == n) return;
            row = v;
          }
          s = v & ~kDenseExit;
        }
        // State `s`, reached on byte i.
        const uint32_t* record = nodes + s;
        const uint32_t head = record[kHead];
        if (head & kOutputBit) found(record, head, i);
        if (++i == n || (head & 0xFF) == 0) return;
        if (s >= dense_end) {
          s = EdgeOn(record + kEdges, head, static_cast<uint8_t>(AsciiLower(text[i])));
          if (s == 0) return;
        }
      }
    };
    for (size_t start = 0; start < n; ++start) {
      walk_from(start);
      start = AsciiAlnumRunEnd(text, start);
    }
    for (uint32_t start : extra_word_starts) {
      if (start < n) walk_from(start);
    }
  }
  // The items whose lead group was seen: candidates if each other group's was.
  auto seen = [&](uint32_t a) { return (atom_seen_[a / 64] >> (a % 64) & 1) != 0; };
  for (const uint32_t at : leads_found_) {
    const uint32_t* record = item_rest_.data() + at;
    const uint32_t item = record[0];
    if (item_state_[item] == epoch_) continue;
    item_state_[item] = epoch_;
    const uint32_t* group = record + 2;
    bool all = true;
    for (uint32_t g = 0; g < record[1] && all; ++g) {
      const uint32_t* end = group + 1 + group[0];
      all = std::any_of(group + 1, end, seen);
      group = end;
    }
    if (all) out.push_back(item);
  }
  for (uint32_t a : atoms_found_) atom_seen_[a / 64] = 0;
  std::sort(out.begin(), out.end());
  return out;
}

void Prefilter::Serialize(ByteWriter* w) const {
  w->U32(item_count_);
  w->Vec(nodes_);
  w->Vec(word_nodes_);
  w->Str(tails_);
  w->Vec(atom_items_);
  w->Vec(item_rest_);
  w->Vec(always_);
}

bool Prefilter::Deserialize(ByteReader* r) {
  item_count_ = r->U32();
  if (!r->Vec(&nodes_) || !r->Vec(&word_nodes_) || !r->Str(&tails_) ||
      !r->Vec(&atom_items_) || !r->Vec(&item_rest_) || !r->Vec(&always_)) {
    return false;
  }
  if (!Validate()) {
    nodes_.clear();
    word_nodes_.clear();
    state_count_ = word_state_count_ = 0;
    atom_count_ = 0;
    FillRootRow();
    SetDenseStates(0);
    return false;
  }
  FillRootRow();
  SetDenseStates(SIZE_MAX);
  atom_seen_.clear();
  atoms_found_.clear();
  item_state_.clear();
  epoch_ = 0;
  return true;
}

bool Prefilter::Validate() {
  // Each atom's keys end with kLastKey, the last key of all included, so a walk
  // from an atom's first key stays in range.
  if (item_count_ > kItemLimit) return false;
  if (!atom_items_.empty() && !(atom_items_.back() & kLastKey)) return false;
  // Bits of the first keys of atoms (the names records may use), and in
  // ValidateTrie of states and states with an atom: checks of links read bits,
  // not records.
  std::vector<uint64_t> atom_starts((atom_items_.size() + 63) / 64, 0);
  uint32_t atoms = 0;
  // (Once per restore: the loops run in calls, runs.h.)
  const bool keys_valid = ForEachRun(atom_items_.size(), [&](size_t k) {
    const uint32_t key = atom_items_[k];
    const uint32_t value = key >> 4 & (kItemLimit - 1);
    switch (key & 15) {
      case kOneGroup:
        if (value >= item_count_) return false;
        break;
      case kLeadGroup:  // (a record's start: checked below)
      case kNoItems:
        break;
      default:
        return false;
    }
    if (k == 0 || (atom_items_[k - 1] & kLastKey))
      atom_starts[k / 64] |= uint64_t{1} << (k % 64);
    atoms += key >> 31;
    return true;
  });
  if (!keys_valid) return false;
  // The records of item_rest_ must tile it, each of an item below item_count_,
  // 1 to kMaxGroups - 1 groups and 1 or more atoms a group, each an atom's name;
  // a lead key must name a record's start.
  const size_t rest_size = item_rest_.size();
  std::vector<uint64_t> record_starts((rest_size + 63) / 64, 0);
  size_t next_record = 0;
  const bool records_valid = ForEachRun(rest_size, [&](size_t at) {
    if (at < next_record) return true;
    if (rest_size - at < 2) return false;
    const uint32_t groups = item_rest_[at + 1];
    if (item_rest_[at] >= item_count_ || groups == 0 || groups >= kMaxGroups)
      return false;
    record_starts[at / 64] |= uint64_t{1} << (at % 64);
    size_t p = at + 2;
    for (uint32_t g = 0; g < groups; ++g) {
      if (p >= rest_size) return false;
      const uint32_t count = item_rest_[p];
      if (count == 0 || count > rest_size - p - 1) return false;
      for (size_t j = p + 1; j <= p + count; ++j) {
        const uint32_t a = item_rest_[j];
        if (a >= atom_items_.size() || !(atom_starts[a / 64] >> (a % 64) & 1))
          return false;
      }
      p += 1 + count;
    }
    next_record = p;
    return true;
  });
  if (!records_valid) return false;
  const bool leads_valid = ForEachRun(atom_items_.size(), [&](size_t k) {
    const uint32_t key = atom_items_[k];
    const uint32_t value = key >> 4 & (kItemLimit - 1);
    return (key & 15) != kLeadGroup ||
           (value < rest_size && (record_starts[value / 64] >> (value % 64) & 1));
  });
  if (!leads_valid) return false;
  if (!ForEachRun(always_.size(), [&](size_t i) { return always_[i] < item_count_; }))
    return false;
  state_count_ = ValidateTrie(nodes_, atom_starts);
  word_state_count_ = ValidateTrie(word_nodes_, atom_starts);
  if (state_count_ == 0 || word_state_count_ == 0) return false;
  atom_count_ = atoms;
  return true;
}

uint32_t Prefilter::ValidateTrie(const std::vector<uint32_t>& nodes,
                                 const std::vector<uint64_t>& atom_starts) const {
  auto bit = [](const std::vector<uint64_t>& bits, size_t i) {
    return (bits[i / 64] >> (i % 64) & 1) != 0;
  };
  auto set = [](std::vector<uint64_t>* bits, size_t i) {
    (*bits)[i / 64] |= uint64_t{1} << (i % 64);
  };
  auto is_atom = [&](uint32_t a) {
    return a < atom_items_.size() && bit(atom_starts, a);
  };
  // One pass over the records, which must tile `nodes` exactly. The trie is in
  // breadth-first order and a state's edges in byte order, so the k-th edge met
  // leads to the (k+1)-th record, a later one: checked with a cursor, this makes
  // every state but the root the target of exactly one edge, with no table.
  // Failure and dictionary links must name the start of an earlier (shallower)
  // record, so the scan's failure walk always ends at the root; dictionary links
  // name states with an atom of their own.
  const size_t size = nodes.size();
  if (size < 2 || size >= kNone) return 0;
  // Words of the record at `at`, or 0 if its head is malformed or it does not fit.
  auto record_words = [&](size_t at) -> size_t {
    if (size - at < 2) return 0;
    const uint32_t head = nodes[at + kHead];
    const uint32_t edges = head & 0xFF;
    if ((head & ~(kOutputBit | kTailBit | (edges == 1 ? 0xFFFFu : 0xFFu))) != 0 ||
        ((head & kTailBit) && !(head & kOutputBit))) {
      return 0;
    }
    const size_t words = RecordWords(head);
    return size - at < words ? 0 : words;
  };
  std::vector<uint64_t> starts((size + 63) / 64, 0), atom_states(starts.size(), 0);
  size_t child = record_words(0);  // where the next edge must lead
  uint32_t count = 0;
  size_t at = 0;
  // The record at `at`: false if it is malformed, else moves `at` past it.
  auto check_record = [&]() -> bool {
    const size_t words = record_words(at);
    if (words == 0) return false;
    const uint32_t head = nodes[at + kHead];
    const uint32_t edges = head & 0xFF;
    const uint32_t fail = nodes[at + kFail];
    if (at == 0 ? fail != 0 : (fail >= at || !bit(starts, fail))) return false;
    const uint32_t* next = &nodes[at + kEdges];
    if (edges > 1) {
      // Distinct, ascending bytes, padded with the last: the form is canonical.
      const uint8_t* bytes = reinterpret_cast<const uint8_t*>(next);
      for (uint32_t k = 1; k < (edges + 7) / 8 * 8; ++k) {
        if (k < edges ? bytes[k] <= bytes[k - 1] : bytes[k] != bytes[edges - 1])
          return false;
      }
      next += (edges + 7) / 8 * 2;
    }
    for (uint32_t k = 0; k < edges; ++k) {
      if (child <= at || next[k] != child) return false;
      const size_t child_words = record_words(child);
      if (child_words == 0) return false;
      child += child_words;
    }
    if (head & kOutputBit) {
      const uint32_t* output = &nodes[at + OutputAt(head)];
      const uint32_t atom = output[kAtom], dict = output[kDict];
      if (atom == kNone ? (dict == kNone || (head & kTailBit)) : !is_atom(atom)) {
        return false;
      }
      if (dict != kNone && (dict >= at || !bit(atom_states, dict))) return false;
      if (atom != kNone) set(&atom_states, at);
      if (head & kTailBit) {
        const uint32_t begin = output[kTailBegin], tail = output[kTailSize];
        if (tail == 0 || begin > tails_.size() || tail > tails_.size() - begin)
          return false;
      }
    }
    set(&starts, at);
    ++count;
    at += words;
    return true;
  };
  // (Once per restore, a record per call of a function of its own: runs.h. A
  // record takes a word at least, so `size` calls are enough.)
  bool valid = true;
  ForEachRun(size, [&](size_t) {
    if (at >= size) return false;  // every record read
    valid = check_record();
    return valid;
  });
  if (!valid || at != size || child != size) return 0;
  return count;
}

}  // namespace factlens
