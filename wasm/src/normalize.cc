// Copyright factlens authors.
//
// Normalisation, code point by code point; every output byte keeps the input bytes
// [begin, end) of the code point that produced it.
//
//  1. URLs (http://, https://, or "www." starting a word) are found in the raw text
//     first. A URL runs to whitespace, a control, or a non-ASCII code point that is
//     not a letter, digit or mark; trailing .,;:!?)]}'" are cut (a ')' stays if the
//     URL holds its '('). It becomes one word, its CanonicalizeUrl form, every byte
//     mapping to the whole URL; if that form is empty the text is read normally.
//  2. UTF-8 is decoded strictly; each invalid byte is a separator of its own.
//  3. Format characters (Cf: zero-width, bidi controls, soft hyphen, BOM) and
//     variation selectors are dropped without splitting a word.
//  4. Other code points: NFKD + full case folding (utf8proc_decompose_char with
//     COMPAT|CASEFOLD|DECOMPOSE); diacritic marks are dropped (M* in U+0300-036F,
//     1AB0-1AFF, 1DC0-1DFF, 20D0-20FF, FE20-FE2F, Arabic U+064B-065F and U+0670,
//     Hebrew U+0591-05C7); what is left is recomposed (NFC: Hangul, kept marks).
//     A dropped mark extends the source range of the preceding word character.
//  5. Word characters are letters (L*), digits (N*) and kept marks (M*); anything
//     else is a separator. A word candidate is a maximal run of word characters
//     plus '$' and '@'. Words are joined by one space.
//  6. Lookalikes (table generated from Unicode confusables, looked up on the letter
//     as written, after compatibility decomposition and before case folding): a
//     word's table letters become ASCII if the word has a Latin letter and no
//     other non-Latin letter, or if it has only table letters and leet chars.
//  7. Leetspeak 0>o 1>i 3>e 4>a 5>s $>s @>a, only if the word (without its leading
//     '@'s, which are mention marks) has a letter, no non-leet non-letter, more
//     letters than leet chars, and leet chars that are not just a leading or
//     trailing run of digits ("5g", "4chan", "mp3" stay). Otherwise digits stay and
//     '$'/'@' separate.
//
// The hot path does no allocation beyond growing the reused buffers; ASCII letters
// and digits skip utf8proc entirely.
#include "factlens/normalize.h"

#include <algorithm>
#include <cstring>

#include "utf8proc.h"

namespace factlens {
namespace {

struct Lookalike {
  uint32_t from;
  char to;
};
struct CodePointRange {
  uint32_t first;
  uint32_t last;
};

#include "factlens_confusables.inc"

// ---------------------------------------------------------------------------
// UTF-8

// (DecodeUtf8 and AppendUtf8 are in normalize.h: the list's JSON reader uses them
// too; IsAsciiLetter and IsAsciiAlnum as well: the prefilter's walks use them.)

inline bool IsAsciiSpaceOrControl(unsigned char c) { return c <= 0x20 || c == 0x7F; }

// ---------------------------------------------------------------------------
// Unicode properties

inline bool IsLetterCat(int cat) {
  return cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO;
}
inline bool IsMarkCat(int cat) {
  return cat >= UTF8PROC_CATEGORY_MN && cat <= UTF8PROC_CATEGORY_ME;
}
inline bool IsNumberCat(int cat) {
  return cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO;
}
inline bool IsWordCat(int cat) {
  return cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_NO;
}

// Code points removed without trace: format characters and variation selectors.
inline bool IsIgnorable(int32_t cp, int cat) {
  return cat == UTF8PROC_CATEGORY_CF || (cp >= 0xFE00 && cp <= 0xFE0F) ||
         (cp >= 0xE0100 && cp <= 0xE01EF) || (cp >= 0x180B && cp <= 0x180F);
}

// Marks that are diacritics, dropped after decomposition.
inline bool IsDroppedMark(int32_t cp) {
  return (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x1AB0 && cp <= 0x1AFF) ||
         (cp >= 0x1DC0 && cp <= 0x1DFF) || (cp >= 0x20D0 && cp <= 0x20FF) ||
         (cp >= 0xFE20 && cp <= 0xFE2F) || (cp >= 0x064B && cp <= 0x065F) ||
         cp == 0x0670 || (cp >= 0x0591 && cp <= 0x05C7);
}

char LookalikeOf(uint32_t cp) {
  const Lookalike* end = kLookalikes + sizeof(kLookalikes) / sizeof(kLookalikes[0]);
  const Lookalike* it = std::lower_bound(
      kLookalikes, end, cp, [](const Lookalike& l, uint32_t c) { return l.from < c; });
  return (it != end && it->from == cp) ? it->to : 0;
}

bool IsLatinLetter(uint32_t cp) {
  if (cp < 0x80) return ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z');
  const CodePointRange* end =
      kLatinLetters + sizeof(kLatinLetters) / sizeof(kLatinLetters[0]);
  const CodePointRange* it =
      std::upper_bound(kLatinLetters, end, cp,
                       [](uint32_t c, const CodePointRange& r) { return c < r.first; });
  return it != kLatinLetters && (it - 1)->last >= cp;
}

constexpr int kMaxDecomp = 32;  // Longest NFKD + case fold expansion is 18.

// Folds `cp` (NFKD, case fold, diacritics dropped, NFC). Writes up to kMaxDecomp
// code points to `buf` and returns their count; returns -1 if it does not fit.
int FoldCodePoint(int32_t cp, utf8proc_int32_t* buf) {
  utf8proc_ssize_t n = utf8proc_decompose_char(
      cp, buf, kMaxDecomp,
      static_cast<utf8proc_option_t>(UTF8PROC_COMPAT | UTF8PROC_CASEFOLD |
                                     UTF8PROC_DECOMPOSE),
      nullptr);
  if (n < 0 || n > kMaxDecomp) return -1;
  int k = 0;
  for (int j = 0; j < n; ++j) {
    if (IsDroppedMark(buf[j]) && IsMarkCat(utf8proc_category(buf[j]))) continue;
    if (IsIgnorable(buf[j], utf8proc_category(buf[j]))) continue;
    buf[k++] = buf[j];
  }
  if (k > 1) {
    k = static_cast<int>(utf8proc_normalize_utf32(
        buf, k, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_STABLE)));
  }
  return k;
}

// The ASCII letter the letter `cp` looks like as written (after compatibility
// decomposition, before case folding), or 0.
char LookalikeAsWritten(int32_t cp) {
  if (char c = LookalikeOf(cp)) return c;
  if (utf8proc_get_property(cp)->decomp_seqindex == UINT16_MAX) return 0;
  utf8proc_int32_t buf[kMaxDecomp];
  utf8proc_ssize_t n = utf8proc_decompose_char(
      cp, buf, kMaxDecomp,
      static_cast<utf8proc_option_t>(UTF8PROC_COMPAT | UTF8PROC_DECOMPOSE), nullptr);
  if (n < 1 || n > kMaxDecomp) return 0;
  for (utf8proc_ssize_t j = 1; j < n; ++j) {
    if (!IsMarkCat(utf8proc_category(buf[j]))) return 0;
  }
  return LookalikeOf(buf[0]);
}

// ---------------------------------------------------------------------------
// URL detection in text

// Returns the end of a URL starting at `i` (scheme or "www." already matched), with
// trailing sentence punctuation cut.
size_t UrlEnd(std::string_view text, size_t i) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size(), j = i;
  int open = 0, close = 0;
  while (j < n) {
    unsigned char c = s[j];
    if (c < 0x80) {
      if (IsAsciiSpaceOrControl(c) || c == '<' || c == '>' || c == '`') break;
      if (c == '(') ++open;
      if (c == ')') ++close;
      ++j;
      continue;
    }
    int32_t cp;
    size_t len = DecodeUtf8(s, n, j, &cp);
    if (cp < 0 || !IsWordCat(utf8proc_category(cp))) break;
    j += len;
  }
  while (j > i) {
    char c = text[j - 1];
    if (c == ')') {
      if (open >= close) break;
      --close;
    } else if (!std::strchr(".,;:!?]}'\"", c) || c == '\0') {
      break;
    }
    --j;
  }
  return j;
}

bool StartsWithNoCase(std::string_view s, size_t i, std::string_view prefix) {
  if (s.size() - i < prefix.size()) return false;
  for (size_t k = 0; k < prefix.size(); ++k) {
    if (AsciiLower(s[i + k]) != prefix[k]) return false;
  }
  return true;
}

// If a URL starts at `i`, returns its end; else returns `i`.
size_t MatchUrl(std::string_view text, size_t i) {
  char c = AsciiLower(text[i]);
  unsigned char prev = i > 0 ? static_cast<unsigned char>(text[i - 1]) : ' ';
  if (IsAsciiAlnum(prev)) return i;
  size_t start;
  if (c == 'h') {
    if (StartsWithNoCase(text, i, "http://")) {
      start = i + 7;
    } else if (StartsWithNoCase(text, i, "https://")) {
      start = i + 8;
    } else {
      return i;
    }
  } else if (c == 'w') {
    if (!StartsWithNoCase(text, i, "www.") || std::strchr(".-_/@:%~+&=#", prev)) {
      return i;
    }
    start = i + 4;
  } else {
    return i;
  }
  size_t end = UrlEnd(text, i);
  return end > start ? end : i;
}

// ---------------------------------------------------------------------------
// The normaliser

enum Cls : uint8_t {
  kLatin,   // Latin letter (after folding)
  kLook,    // letter that looks like an ASCII letter (Item::look)
  kOther,   // other letter
  kDigit,   // ASCII digit
  kNumber,  // other number
  kMark,    // kept mark
  kDollar,  // '$'
  kAt,      // '@'
};

struct Item {
  uint32_t cp;
  uint32_t begin;
  uint32_t end;
  Cls cls;
  char look;
};

inline bool IsLeet(const Item& it) {
  if (it.cls == kDollar || it.cls == kAt) return true;
  return it.cls == kDigit &&
         (it.cp == '0' || it.cp == '1' || it.cp == '3' || it.cp == '4' || it.cp == '5');
}
inline char LeetLetter(uint32_t cp) {
  switch (cp) {
    case '0':
      return 'o';
    case '1':
      return 'i';
    case '3':
      return 'e';
    case '4':
      return 'a';
    case '5':
      return 's';
    case '$':
      return 's';
    case '@':
      return 'a';
  }
  return static_cast<char>(cp);
}

struct Options {
  bool find_urls = true;
  // Emit a leading/trailing space if the text starts/ends with a separator (used
  // for pattern literals, which are joined with neighbouring syntax).
  bool edge_spaces = false;
};

template <bool kOrigin>
class Normalizer {
 public:
  Normalizer(std::string_view in, Options opts, NormalizedText* out)
      : in_(in), opts_(opts), out_(out) {
    // Room for a long word: the vector is new for each text, and growing it from
    // empty costs several reallocations per call (a list's claims, titles and
    // terms are many short texts).
    word_.reserve(32);
  }

  void Run() {
    const auto* s = reinterpret_cast<const unsigned char*>(in_.data());
    const size_t n = in_.size();
    // Room for the whole text and a space before its first word (ASCII text never
    // normalises to more bytes); Grow doubles it for text that expands (ligatures,
    // long case folds). No more: NormalizeToString's strings keep this capacity,
    // and a list's claims and terms are many short texts.
    Grow(n + 1);
    if (kOrigin) out_->words.reserve(n / 6);
    size_t url_retry = 0;  // No URL is looked for before this offset.
    size_t i = 0;
    while (i < n) {
      unsigned char c = s[i];
      if (c < 0x80) {
        if (opts_.find_urls && ((c | 0x20) == 'h' || (c | 0x20) == 'w') &&
            i >= url_retry) {
          size_t end = MatchUrl(in_, i);
          if (end > i) {
            if (EmitUrl(i, end)) {
              i = end;
              continue;
            }
            url_retry = end;
          }
        }
        uint32_t b = static_cast<uint32_t>(i);
        if (IsAsciiLetter(c) && word_.empty()) {
          // Most words are ASCII letters only, between ASCII separators: such a word
          // is emitted as the word rules would emit it (lower-cased, as it is),
          // without an item per letter. No URL starts inside it (MatchUrl wants a
          // separator before one); what follows decides, so a digit, '$', '@' or a
          // non-ASCII byte (a letter or mark of the same word) takes the general path.
          // The letters are written out as they are scanned, past the end of the
          // output, and kept only if the word qualifies.
          Room(n - i + 1);
          size_t at = size_;
          if (SpaceComes()) Put(at++, ' ', last_end_, last_end_);
          const size_t start = at;
          const size_t j = PutLetters(at, s, i, n);
          at += j - i;
          const unsigned char next = j < n ? s[j] : ' ';
          if (next < 0x80 && !(next >= '0' && next <= '9') && next != '$' &&
              next != '@') {
            pending_sep_ = false;
            word_start_ = start;
            size_ = at;
            last_end_ = static_cast<uint32_t>(j);
            EndWord();
            i = j;
            continue;
          }
        }
        if (c >= 'a' && c <= 'z') {
          Push(c, b, b + 1, kLatin);
        } else if (c >= 'A' && c <= 'Z') {
          Push(c + ('a' - 'A'), b, b + 1, kLatin);
        } else if (c >= '0' && c <= '9') {
          Push(c, b, b + 1, kDigit);
        } else if (c == '$') {
          Push(c, b, b + 1, kDollar);
        } else if (c == '@') {
          Push(c, b, b + 1, kAt);
        } else {
          Separator();
        }
        ++i;
        continue;
      }
      int32_t cp;
      size_t len = DecodeUtf8(s, n, i, &cp);
      if (cp < 0) {
        Separator();
      } else {
        NonAscii(cp, static_cast<uint32_t>(i), static_cast<uint32_t>(i + len));
      }
      i += len;
    }
    FlushWord();
    if (opts_.edge_spaces && pending_sep_) {
      Room(1);
      Put(size_++, ' ', last_end_, last_end_);
    }
    out_->text.resize(size_);
    if (kOrigin) out_->origin.resize(size_);
  }

 private:
  void Push(uint32_t cp, uint32_t b, uint32_t e, Cls cls, char look = 0) {
    word_.push_back(Item{cp, b, e, cls, look});
    word_special_ |= cls != kLatin;
  }

  void Separator() {
    if (!word_.empty()) FlushWord();  // (a call per separator otherwise)
    pending_sep_ = true;
  }

  void NonAscii(int32_t cp, uint32_t b, uint32_t e) {
    int cat = utf8proc_category(cp);
    if (IsIgnorable(cp, cat)) return;
    if (cat >= UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_CN) {
      Separator();
      return;
    }
    int k = FoldCodePoint(cp, buf_);
    if (k < 0) {
      Separator();
      return;
    }
    if (k == 0) {
      // A dropped mark: it belongs to the word character before it.
      if (!word_.empty() && IsMarkCat(cat)) word_.back().end = e;
      return;
    }
    char look = 0;
    if (k == 1 && IsLetterCat(cat) && !IsLatinLetter(static_cast<uint32_t>(buf_[0]))) {
      look = LookalikeAsWritten(cp);
    }
    for (int j = 0; j < k; ++j) {
      uint32_t c = static_cast<uint32_t>(buf_[j]);
      if (c < 0x80) {
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
          Push(c | 0x20, b, e, kLatin);
        } else if (c >= '0' && c <= '9') {
          Push(c, b, e, kDigit);
        } else if (c == '$') {
          Push(c, b, e, kDollar);
        } else if (c == '@') {
          Push(c, b, e, kAt);
        } else {
          Separator();
        }
        continue;
      }
      int ccat = utf8proc_category(static_cast<int32_t>(c));
      if (IsLetterCat(ccat)) {
        Cls cls = look ? kLook : (IsLatinLetter(c) ? kLatin : kOther);
        Push(c, b, e, cls, look);
      } else if (IsNumberCat(ccat)) {
        Push(c, b, e, kNumber);
      } else if (IsMarkCat(ccat)) {
        Push(c, b, e, kMark);
      } else {
        Separator();
      }
    }
  }

  // Applies the word-level rules to the candidate word in word_ and emits it.
  void FlushWord() {
    if (word_.empty()) return;
    if (!word_special_) {  // Only Latin letters: emitted as they are.
      BeginWord();
      for (const Item& it : word_) Emit(it.cp, it.begin, it.end);
      EndWord();
      word_.clear();
      return;
    }
    word_special_ = false;
    size_t first = 0;
    while (first < word_.size() && word_[first].cls == kAt) ++first;  // Mentions.
    if (first > 0) pending_sep_ = true;
    size_t letters = 0, latin = 0, looks = 0, others = 0, leet = 0, blockers = 0;
    size_t leet_first = 0, leet_last = 0;
    bool leet_all_digits = true;
    for (size_t j = first; j < word_.size(); ++j) {
      const Item& it = word_[j];
      switch (it.cls) {
        case kLatin:
          ++letters, ++latin;
          break;
        case kLook:
          ++letters, ++looks;
          break;
        case kOther:
          ++letters, ++others;
          break;
        default:
          if (IsLeet(it)) {
            if (leet == 0) leet_first = j;
            leet_last = j;
            ++leet;
            if (it.cls != kDigit) leet_all_digits = false;
          } else {
            ++blockers;
          }
      }
    }
    if (looks > 0 && others == 0 && (latin > 0 || blockers == 0)) {
      for (size_t j = first; j < word_.size(); ++j) {
        Item& it = word_[j];
        if (it.cls == kLook) it.cp = static_cast<unsigned char>(it.look), it.cls = kLatin;
      }
    }
    bool map_leet = leet > 0 && letters > leet && blockers == 0;
    if (map_leet && leet_all_digits && leet_last - leet_first + 1 == leet &&
        (leet_first == first || leet_last + 1 == word_.size())) {
      map_leet = false;
    }
    bool in_word = false;
    for (size_t j = first; j < word_.size(); ++j) {
      const Item& it = word_[j];
      uint32_t cp = it.cp;
      if (it.cls == kDollar || it.cls == kAt) {
        if (!map_leet) {
          if (in_word) EndWord();
          in_word = false;
          pending_sep_ = true;
          continue;
        }
        cp = static_cast<unsigned char>(LeetLetter(cp));
      } else if (map_leet && it.cls == kDigit) {
        cp = static_cast<unsigned char>(LeetLetter(cp));
      }
      if (!in_word) {
        BeginWord();
        in_word = true;
      }
      Emit(cp, it.begin, it.end);
    }
    if (in_word) EndWord();
    word_.clear();
  }

  // True if a word begun now has a space before it.
  bool SpaceComes() const { return size_ != 0 || (opts_.edge_spaces && pending_sep_); }

  void BeginWord() {
    if (SpaceComes()) {
      Room(1);
      Put(size_++, ' ', last_end_, last_end_);
    }
    pending_sep_ = false;
    word_start_ = size_;
  }

  void EndWord() {
    if (kOrigin) {
      out_->words.push_back(
          ByteRange{static_cast<uint32_t>(word_start_), static_cast<uint32_t>(size_)});
    }
  }

  void Emit(uint32_t cp, uint32_t b, uint32_t e) {
    Room(4);
    if (cp < 0x80) {
      Put(size_++, static_cast<char>(cp), b, e);
    } else {
      char bytes[4];
      const size_t len = EncodeUtf8(cp, bytes);
      for (size_t k = 0; k < len; ++k) Put(size_++, bytes[k], b, e);
    }
    last_end_ = e;
  }

  // Emits the URL in_[b, e) as a word; returns false if it is not a URL.
  bool EmitUrl(size_t b, size_t e) {
    std::string canonical = CanonicalizeUrl(in_.substr(b, e - b));
    if (canonical.empty()) return false;
    Separator();
    BeginWord();
    Room(canonical.size());
    for (char c : canonical) {
      Put(size_++, c, static_cast<uint32_t>(b), static_cast<uint32_t>(e));
    }
    last_end_ = static_cast<uint32_t>(e);
    EndWord();
    if (kOrigin) out_->urls.push_back(std::move(canonical));
    return true;
  }

  // The output is written in place, into text and origin sized ahead to room_
  // bytes, of which the first size_ are written; Run trims them at the end.
  // (std::string's push_back is a call per byte in wasm and vector's a stalled
  // store-to-load forward per range natively: they were half of Normalize's time.)
  void Room(size_t extra) {
    if (size_ + extra > room_) Grow(std::max(2 * room_, size_ + extra));
  }
  void Grow(size_t room) {
    room_ = room;
    out_->text.resize(room);
    text_ = out_->text.data();
    if (kOrigin) {
      out_->origin.resize(room);
      origin_ = out_->origin.data();
    }
  }
  // Writes byte `c`, from input bytes [b, e), at output offset `at` (< room_).
  void Put(size_t at, char c, uint32_t b, uint32_t e) {
    text_[at] = c;
    if (kOrigin) origin_[at] = ByteRange{b, e};
  }
  // Writes the run of ASCII letters from s[b] (a letter) on, before s[n],
  // lower-cased from output offset `at` on (the room is made), each from its own
  // byte; returns where the run ends. The text and origin pointers are held in
  // locals: a char store may alias the members, and the compiler reloaded both
  // after every letter (natively 20 instructions a letter, now 11).
  size_t PutLetters(size_t at, const unsigned char* s, size_t b, size_t n) {
    char* const text = text_ + at;
    // (No origin map without kOrigin: origin_ is null, and no offset may be added.)
    ByteRange* const origin = kOrigin ? origin_ + at : nullptr;
    size_t j = b;
    do {
      text[j - b] = static_cast<char>(s[j] | 0x20);
      if (kOrigin) {
        origin[j - b] = ByteRange{static_cast<uint32_t>(j), static_cast<uint32_t>(j + 1)};
      }
      ++j;
    } while (j < n && IsAsciiLetter(s[j]));
    return j;
  }

  std::string_view in_;
  Options opts_;
  NormalizedText* out_;
  std::vector<Item> word_;
  utf8proc_int32_t buf_[kMaxDecomp];
  char* text_ = nullptr;
  ByteRange* origin_ = nullptr;
  size_t size_ = 0;
  size_t room_ = 0;
  uint32_t last_end_ = 0;
  size_t word_start_ = 0;
  bool pending_sep_ = false;
  bool word_special_ = false;  // word_ holds something other than Latin letters.
};

// ---------------------------------------------------------------------------
// URLs

// Query parameters that only track the reader. `host` is empty for parameters
// dropped everywhere.
struct TrackingParam {
  const char* name;
  const char* host;
};
constexpr TrackingParam kTrackingParams[] = {
    {"fbclid", ""},
    {"gclid", ""},
    {"gclsrc", ""},
    {"dclid", ""},
    {"gbraid", ""},
    {"wbraid", ""},
    {"msclkid", ""},
    {"mc_cid", ""},
    {"mc_eid", ""},
    {"igshid", ""},
    {"igsh", ""},
    {"yclid", ""},
    {"twclid", ""},
    {"ttclid", ""},
    {"li_fat_id", ""},
    {"_ga", ""},
    {"_gl", ""},
    {"_hsenc", ""},
    {"_hsmi", ""},
    {"mkt_tok", ""},
    {"ref_src", ""},
    {"ref_url", ""},
    {"si", ""},
    {"s", "x.com"},
    {"s", "twitter.com"},
    {"t", "x.com"},
    {"t", "twitter.com"},
    {"feature", "youtube.com"},
    {"feature", "youtu.be"},
};

bool HostIs(std::string_view host, std::string_view domain) {
  if (host.size() == domain.size()) return host == domain;
  return host.size() > domain.size() && host[host.size() - domain.size() - 1] == '.' &&
         host.substr(host.size() - domain.size()) == domain;
}

bool IsTrackingParam(std::string_view key, std::string_view host) {
  if (key.size() > 4 && key.substr(0, 4) == "utm_") return true;
  for (const TrackingParam& p : kTrackingParams) {
    if (key == p.name && (p.host[0] == '\0' || HostIs(host, p.host))) return true;
  }
  return false;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = AsciiLower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Appends `s` with %xx escapes of unreserved characters decoded and the other
// escapes upper-cased.
void AppendPercentNormalized(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < s.size(); ++i) {
    int hi, lo;
    if (s[i] == '%' && i + 2 < s.size() && (hi = HexValue(s[i + 1])) >= 0 &&
        (lo = HexValue(s[i + 2])) >= 0) {
      char c = static_cast<char>(hi * 16 + lo);
      if (IsAsciiAlnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ||
          c == '_' || c == '~') {
        out->push_back(c);
      } else {
        out->push_back('%');
        out->push_back(kHex[hi]);
        out->push_back(kHex[lo]);
      }
      i += 2;
    } else {
      out->push_back(s[i]);
    }
  }
}

// Lower-cases and checks a host name; returns false if it is not one.
bool NormalizeHost(std::string_view in, bool need_alpha_tld, std::string* host) {
  const auto* s = reinterpret_cast<const unsigned char*>(in.data());
  size_t n = in.size();
  while (n > 0 && s[n - 1] == '.') --n;  // "example.com." is "example.com".
  if (n == 0) return false;
  size_t label_len = 0, dots = 0;
  bool tld_alpha = false;
  for (size_t i = 0; i < n;) {
    int32_t cp;
    size_t len = DecodeUtf8(s, n, i, &cp);
    if (cp < 0) return false;
    if (cp == '.') {
      if (label_len == 0) return false;
      label_len = 0;
      ++dots;
      tld_alpha = false;
      host->push_back('.');
    } else if (cp < 0x80) {
      char c = AsciiLower(static_cast<char>(cp));
      if (!IsAsciiAlnum(c) && c != '-' && c != '_') return false;
      if (!(c >= '0' && c <= '9')) tld_alpha = true;
      host->push_back(c);
      ++label_len;
    } else {
      if (!IsWordCat(utf8proc_category(cp))) return false;
      AppendUtf8(static_cast<uint32_t>(utf8proc_tolower(cp)), host);
      tld_alpha = true;
      ++label_len;
    }
    i += len;
  }
  if (label_len == 0 || dots == 0) return false;
  if (need_alpha_tld && !tld_alpha) return false;
  if (host->size() > 4 && host->compare(0, 4, "www.") == 0 &&
      host->find('.', 4) != std::string::npos) {
    host->erase(0, 4);
  }
  return true;
}

bool AllDigits(std::string_view s) {
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Patterns

// Folds one letter for a character class: returns the folded code point, or `cp`
// itself if folding does not give exactly one code point.
int32_t FoldClassChar(int32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + ('a' - 'A') : cp;
  if (!IsLetterCat(utf8proc_category(cp))) return cp;
  utf8proc_int32_t buf[kMaxDecomp];
  int k = FoldCodePoint(cp, buf);
  return k == 1 ? buf[0] : cp;
}

// Returns the length of the escape starting with '\\' at p[i].
size_t EscapeLength(std::string_view p, size_t i) {
  size_t n = p.size();
  if (i + 1 >= n) return n - i;
  char c = p[i + 1];
  if ((c == 'p' || c == 'P' || c == 'x') && i + 2 < n && p[i + 2] == '{') {
    size_t close = p.find('}', i + 3);
    return (close == std::string_view::npos ? n : close + 1) - i;
  }
  if (c == 'p' || c == 'P') {
    if (i + 2 >= n) return n - i;
    int32_t cp;
    return 2 +
           DecodeUtf8(reinterpret_cast<const unsigned char*>(p.data()), n, i + 2, &cp);
  }
  if (c == 'x') return std::min<size_t>(4, n - i);
  if (c == 'Q') {
    size_t close = p.find("\\E", i + 2);
    return (close == std::string_view::npos ? n : close + 2) - i;
  }
  if (c >= '0' && c <= '7') {
    size_t k = i + 2;
    while (k < n && k < i + 4 && p[k] >= '0' && p[k] <= '7') ++k;
    return k - i;
  }
  int32_t cp;
  return 1 + DecodeUtf8(reinterpret_cast<const unsigned char*>(p.data()), n, i + 1, &cp);
}

// Returns the length of a repetition "{n}", "{n,}" or "{n,m}" at p[i], or 0.
size_t BraceQuantifierLength(std::string_view p, size_t i) {
  size_t k = i + 1, n = p.size();
  size_t digits = 0;
  while (k < n && p[k] >= '0' && p[k] <= '9') ++k, ++digits;
  if (digits == 0) return 0;
  if (k < n && p[k] == ',') {
    ++k;
    while (k < n && p[k] >= '0' && p[k] <= '9') ++k;
  }
  return (k < n && p[k] == '}') ? k + 1 - i : 0;
}

bool IsQuantifierAt(std::string_view p, size_t i) {
  if (i >= p.size()) return false;
  char c = p[i];
  return c == '*' || c == '+' || c == '?' ||
         (c == '{' && BraceQuantifierLength(p, i) > 0);
}

// Copies the character class starting at p[i] ('['), folding its letters; returns
// the index after it.
size_t CopyClass(std::string_view p, size_t i, std::string* out) {
  const auto* s = reinterpret_cast<const unsigned char*>(p.data());
  size_t n = p.size();
  out->push_back('[');
  ++i;
  if (i < n && p[i] == '^') out->push_back(p[i++]);
  bool first = true;
  bool after_atom = false;  // The last thing copied can start a range.
  bool range_high = false;  // The next literal ends a range: copied as is.
  while (i < n) {
    char c = p[i];
    if (c == ']' && !first) {
      out->push_back(']');
      return i + 1;
    }
    first = false;
    if ((c == '[' && i + 1 < n && p[i + 1] == ':') || c == '\\') {
      size_t len;
      if (c == '\\') {
        len = EscapeLength(p, i);
      } else {
        size_t close = p.find(":]", i + 2);
        len = (close == std::string_view::npos ? i + 1 : close + 2) - i;
      }
      out->append(p.substr(i, len));
      i += len;
      after_atom = !range_high;
      range_high = false;
      continue;
    }
    if (c == '-' && after_atom && i + 1 < n && p[i + 1] != ']') {
      out->push_back('-');
      ++i;
      after_atom = false;
      range_high = true;
      continue;
    }
    int32_t lo;
    size_t len = DecodeUtf8(s, n, i, &lo);
    bool starts_range = i + len + 1 < n && p[i + len] == '-' && p[i + len + 1] != ']';
    if (lo < 0 || range_high) {
      out->append(p.substr(i, len));
      i += len;
      after_atom = false;
      range_high = false;
      continue;
    }
    if (starts_range && p[i + len + 1] != '\\' && p[i + len + 1] != '[') {
      // lo-hi, both literal: folded if that keeps lo <= hi.
      int32_t hi;
      size_t hlen = DecodeUtf8(s, n, i + len + 1, &hi);
      if (hi >= 0) {
        int32_t flo = FoldClassChar(lo), fhi = FoldClassChar(hi);
        if (flo > fhi) flo = lo, fhi = hi;
        AppendUtf8(static_cast<uint32_t>(flo), out);
        out->push_back('-');
        AppendUtf8(static_cast<uint32_t>(fhi), out);
        i += len + 1 + hlen;
        after_atom = false;
        continue;
      }
    }
    // A range with an escape at one end keeps its literal end as is.
    AppendUtf8(static_cast<uint32_t>(starts_range ? lo : FoldClassChar(lo)), out);
    i += len;
    after_atom = true;
  }
  return n;  // Unterminated: copied as is (already invalid).
}

// Appends the pattern literal text `lit` normalised like post text, keeping a
// space where it starts or ends with a separator.
void AppendLiteral(std::string_view lit, std::string* out) {
  if (lit.empty()) return;
  NormalizedText t;
  Options opts;
  opts.find_urls = false;
  opts.edge_spaces = true;
  Normalizer<false>(lit, opts, &t).Run();
  // Do not double a space at the seam with the literal before.
  if (!t.text.empty() && t.text[0] == ' ' && !out->empty() && out->back() == ' ') {
    out->append(t.text, 1, std::string::npos);
  } else {
    out->append(t.text);
  }
}

// Appends a literal code point that a quantifier follows, grouped if it does not
// normalise to exactly one code point.
void AppendQuantifiedAtom(std::string_view atom, std::string* out) {
  NormalizedText t;
  Options opts;
  opts.find_urls = false;
  opts.edge_spaces = true;
  Normalizer<false>(atom, opts, &t).Run();
  if (t.text.empty()) {
    out->append(atom);  // Only ignorable code points: kept, so the pattern stays valid.
    return;
  }
  int32_t cp;
  if (DecodeUtf8(reinterpret_cast<const unsigned char*>(t.text.data()), t.text.size(), 0,
                 &cp) == t.text.size()) {
    out->append(t.text);
  } else {
    out->append("(?:");
    out->append(t.text);
    out->push_back(')');
  }
}

}  // namespace

// ---------------------------------------------------------------------------

ByteRange NormalizedText::OriginalRange(size_t begin, size_t end) const {
  // The normaliser reads its input once, in order, so the ranges of the bytes it
  // writes (the empty ones of separator spaces aside) never begin or end before
  // those of the bytes before them (normalize_test and the fuzzer check it): the
  // first and last non-empty ranges bound the rest. (The stance reader asks this of
  // every word of a post with a match: a loop over every byte was 2% of a check's
  // instructions at 100k rules.)
  size_t first = begin;
  while (first < end && origin[first].begin == origin[first].end) ++first;
  if (first == end) return origin[begin];
  size_t last = end - 1;
  while (origin[last].begin == origin[last].end) --last;
  return ByteRange{origin[first].begin, origin[last].end};
}

NormalizedText Normalize(std::string_view utf8) {
  NormalizedText out;
  Normalizer<true>(utf8, Options(), &out).Run();
  return out;
}

std::string NormalizeToString(std::string_view utf8) {
  NormalizedText out;
  Normalizer<false>(utf8, Options(), &out).Run();
  return std::move(out.text);
}

std::string CanonicalizeUrl(std::string_view url) {
  while (!url.empty() && IsAsciiSpaceOrControl(static_cast<unsigned char>(url.front()))) {
    url.remove_prefix(1);
  }
  while (!url.empty() && IsAsciiSpaceOrControl(static_cast<unsigned char>(url.back()))) {
    url.remove_suffix(1);
  }
  bool schemeless = false;
  if (StartsWithNoCase(url, 0, "http://")) {
    url.remove_prefix(7);
  } else if (StartsWithNoCase(url, 0, "https://")) {
    url.remove_prefix(8);
  } else if (url.substr(0, 2) == "//") {
    url.remove_prefix(2);
  } else {
    schemeless = true;
  }
  size_t auth_end = url.find_first_of("/?#");
  if (auth_end == std::string_view::npos) auth_end = url.size();
  std::string_view authority = url.substr(0, auth_end);
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    if (schemeless) return std::string();  // "mailto:x@y.z" and the like.
    authority.remove_prefix(at + 1);
  }
  std::string_view port;
  size_t colon = authority.find(':');
  if (colon != std::string_view::npos) {
    port = authority.substr(colon + 1);
    authority = authority.substr(0, colon);
    // Also rejects "javascript:...", "data:...", "ftp://..." without a scheme match.
    if (!AllDigits(port) || (schemeless && port.empty())) return std::string();
  }
  std::string out;
  if (!NormalizeHost(authority, schemeless, &out)) return std::string();
  if (!port.empty() && port != "80" && port != "443") {
    out.push_back(':');
    out.append(port);
  }
  std::string host = out.substr(0, out.find(':'));
  std::string_view rest = url.substr(auth_end);
  size_t hash = rest.find('#');
  if (hash != std::string_view::npos) rest = rest.substr(0, hash);
  size_t q = rest.find('?');
  std::string_view path = rest.substr(0, q), query;
  if (q != std::string_view::npos) query = rest.substr(q + 1);
  size_t path_start = out.size();
  AppendPercentNormalized(path, &out);
  while (out.size() > path_start && out.back() == '/') out.pop_back();
  bool first = true;
  std::string key;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (param.empty()) continue;
    key.clear();
    AppendPercentNormalized(param.substr(0, param.find('=')), &key);
    for (char& c : key) c = AsciiLower(c);
    if (IsTrackingParam(key, host)) continue;
    out.push_back(first ? '?' : '&');
    first = false;
    AppendPercentNormalized(param, &out);
  }
  return out;
}

std::string_view CanonicalHost(std::string_view canonical_url) {
  return canonical_url.substr(0, canonical_url.find_first_of("/?#"));
}

// Syntax is copied as is: escapes (\Q...\E, \p{..}, \x{..} as units), '(?flags',
// '(?P<name>', repetition braces, metacharacters. Classes are copied with their
// literal letters folded one by one (ranges only if they stay ordered). The literal
// text between syntax is normalised like a post, punctuation included ("covid-19"
// -> "covid 19", as posts read), keeping a space where it starts or ends with a
// separator. A literal code point followed by a quantifier is normalised alone and
// grouped if it becomes more than one code point ("ß?" -> "(?:ss)?").
std::string NormalizePattern(std::string_view p) {
  std::string out;
  out.reserve(p.size());
  size_t n = p.size(), i = 0, lit = 0;  // p[lit, i) is pending literal text.
  auto flush = [&](size_t end) { AppendLiteral(p.substr(lit, end - lit), &out); };
  while (i < n) {
    char c = p[i];
    size_t len = 0;  // Length of a syntax token at i, copied as is.
    switch (c) {
      case '\\':
        len = EscapeLength(p, i);
        break;
      case '[':
        flush(i);
        i = CopyClass(p, i, &out);
        lit = i;
        continue;
      case '(':
        len = 1;
        if (i + 1 < n && p[i + 1] == '?') {
          len = 2;
          if (i + 2 < n && (p[i + 2] == 'P' || p[i + 2] == '<')) {
            size_t close = p.find('>', i + 2);
            len = (close == std::string_view::npos ? n : close + 1) - i;
          } else {
            while (i + len < n && (std::strchr("imsU-", p[i + len]) && p[i + len])) ++len;
            if (i + len < n && (p[i + len] == ':' || p[i + len] == ')')) ++len;
          }
        }
        break;
      case '{':
        len = BraceQuantifierLength(p, i);
        break;
      case '.':
      case '+':
      case '*':
      case '?':
      case ')':
      case '|':
      case '^':
      case '$':
        len = 1;
        break;
      default:
        break;
    }
    if (len == 0) {
      // Literal text. A literal code point followed by a quantifier is its own atom.
      int32_t cp;
      size_t cl = DecodeUtf8(reinterpret_cast<const unsigned char*>(p.data()), n, i, &cp);
      if (IsQuantifierAt(p, i + cl)) {
        flush(i);
        AppendQuantifiedAtom(p.substr(i, cl), &out);
        lit = i + cl;
      }
      i += cl;
      continue;
    }
    flush(i);
    out.append(p.substr(i, len));
    i += len;
    lit = i;
  }
  flush(n);
  return out;
}

Utf16Index::Utf16Index(std::string_view utf8) {
  const auto* s = reinterpret_cast<const unsigned char*>(utf8.data());
  size_t n = utf8.size();
  utf16_at_byte_.resize(n + 1);
  uint32_t u = 0;
  for (size_t i = 0; i < n;) {
    if (s[i] < 0x80) {  // (most bytes: clang, the wasm build, called DecodeUtf8)
      utf16_at_byte_[i++] = u++;
      continue;
    }
    int32_t cp;
    size_t len = DecodeUtf8(s, n, i, &cp);
    for (size_t k = 0; k < len; ++k) utf16_at_byte_[i + k] = u;
    u += cp >= 0x10000 ? 2 : 1;
    i += len;
  }
  utf16_at_byte_[n] = u;
}

uint32_t Utf16Index::ToUtf16(uint32_t byte_offset) const {
  if (byte_offset >= utf16_at_byte_.size()) return utf16_at_byte_.back();
  return utf16_at_byte_[byte_offset];
}

}  // namespace factlens
