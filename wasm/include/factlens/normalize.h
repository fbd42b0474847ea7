// Copyright factlens authors. normalize: the one text form rules and posts are matched
// in.
//
// Both sides go through the same function, so a rule written in plain lower-case
// letters matches a post however it was dressed up: compatibility forms (full-width,
// ligatures, mathematical letters), any case in any script, diacritics, Latin
// lookalikes from other scripts, leetspeak, zero-width and bidi controls, runs of
// spaces and punctuation, and URL variants. Every byte of the result remembers the
// original bytes it came from, so a match can be highlighted in the text as given.
//
// The result is a sequence of words separated by single spaces. A word is a run of
// letters, digits and kept marks, or a canonical URL (see CanonicalizeUrl).
#ifndef FACTLENS_NORMALIZE_H_
#define FACTLENS_NORMALIZE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace factlens {

// Byte offsets [begin, end). An aggregate without member initialisers, so that
// NormalizedText::origin can be sized without being zeroed (OriginAllocator);
// ByteRange{} and a vector's resize still give zeros.
struct ByteRange {
  uint32_t begin;  // inclusive
  uint32_t end;    // exclusive
};

// std::allocator, but an element made without arguments is left as it comes
// (default-initialised): the normaliser sizes a post's origin map for its whole
// text, then writes every entry it keeps. Zeroing it first was a pass of 8 bytes a
// byte of text (natively 12.8k instructions a bench post; a memset call in wasm).
template <typename T>
struct OriginAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = OriginAllocator<U>;
  };
  OriginAllocator() = default;
  template <typename U>
  OriginAllocator(const OriginAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct NormalizedText {
  // The normalised UTF-8 text: words joined by single spaces, no leading or
  // trailing space.
  std::string text;
  // For each byte of `text`, the original bytes [begin, end) of the input code
  // point(s) that produced it. A separator space maps to the empty range at the
  // end of the preceding word's source.
  std::vector<ByteRange, OriginAllocator<ByteRange>> origin;
  // The words of `text`, as byte ranges into `text`, in order.
  std::vector<ByteRange> words;
  // Canonical forms of the URLs found in the input, in order of appearance.
  std::vector<std::string> urls;

  // Returns the original byte range covering normalised bytes [begin, end).
  // Requires begin < end <= text.size().
  ByteRange OriginalRange(size_t begin, size_t end) const;
};

// ---- UTF-8, strictly (RFC 3629: no overlong forms, no surrogates, nothing above
// U+10FFFF). Inline: the normaliser calls them for every character.

// Decodes the code point at s[i] (i < n). Returns its length in bytes, and sets
// *cp to it, or to -1 for an invalid byte (length 1).
inline size_t DecodeUtf8(const unsigned char* s, size_t n, size_t i, int32_t* cp) {
  unsigned char c = s[i];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  *cp = -1;
  if (c < 0xC2 || c > 0xF4) return 1;
  auto cont = [&](size_t k, unsigned char lo, unsigned char hi) {
    return i + k < n && s[i + k] >= lo && s[i + k] <= hi;
  };
  if (c < 0xE0) {
    if (!cont(1, 0x80, 0xBF)) return 1;
    *cp = ((c & 0x1F) << 6) | (s[i + 1] & 0x3F);
    return 2;
  }
  if (c < 0xF0) {
    unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    if (!cont(1, lo, hi) || !cont(2, 0x80, 0xBF)) return 1;
    *cp = ((c & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
    return 3;
  }
  unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  if (!cont(1, lo, hi) || !cont(2, 0x80, 0xBF) || !cont(3, 0x80, 0xBF)) return 1;
  *cp = ((c & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) |
        (s[i + 3] & 0x3F);
  return 4;
}

// Writes the UTF-8 form of code point `cp` (< 0x110000) to out[0..4); returns its
// length.
inline size_t EncodeUtf8(uint32_t cp, char* out) {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

inline void AppendUtf8(uint32_t cp, std::string* out) {
  char bytes[4];
  out->append(bytes, EncodeUtf8(cp, bytes));
}

// Returns `c` with an ASCII capital lower-cased; any other byte as it is (the
// lower-casing of normalised text, of atoms and of the bytes scanned for them).
inline char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c; }

// ASCII letters (either case), and those and digits.
constexpr bool IsAsciiLetter(unsigned char c) {
  return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}
constexpr bool IsAsciiAlnum(unsigned char c) {
  return (c >= '0' && c <= '9') || IsAsciiLetter(c);
}

// Returns the normalised form of `utf8`. Invalid UTF-8 sequences count as
// separators. Never fails; cost is linear in the input.
NormalizedText Normalize(std::string_view utf8);

// Returns the normalised text only (no offset map); same result as
// Normalize(utf8).text, cheaper.
std::string NormalizeToString(std::string_view utf8);

// Returns `url` canonicalised: scheme, "www." and default port dropped, host
// lower-cased, tracking parameters (utm_*, fbclid, gclid, ...) and fragment
// removed, trailing slash dropped: "https://WWW.Example.com/a/?utm_source=x#top"
// -> "example.com/a". Returns an empty string if `url` is not an http(s) URL or
// a bare host name with a path. (A bare host needs a dot and a top-level label
// that is not all digits; its path may be empty: "example.com" is accepted.)
std::string CanonicalizeUrl(std::string_view url);

// Returns the host part of a canonical URL ("example.com/a" -> "example.com").
std::string_view CanonicalHost(std::string_view canonical_url);

// Returns an RE2 pattern rewritten to match normalised text: the literal letter
// runs outside escapes and character classes are normalised like post text
// (case, compatibility forms, diacritics, lookalikes); syntax is left untouched.
std::string NormalizePattern(std::string_view pattern);

// Maps byte offsets of a UTF-8 string to UTF-16 code unit indices, the unit
// JavaScript strings are indexed in. Invalid bytes count as one unit each
// (JavaScript's encoder turned them into U+FFFD on the way in).
class Utf16Index {
 public:
  explicit Utf16Index(std::string_view utf8);
  // Returns the UTF-16 index of byte offset `byte_offset` (<= size of the input).
  uint32_t ToUtf16(uint32_t byte_offset) const;

 private:
  std::vector<uint32_t> utf16_at_byte_;
};

}  // namespace factlens

#endif  // FACTLENS_NORMALIZE_H_
