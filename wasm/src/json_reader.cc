// Copyright factlens authors.
#include "factlens/json_reader.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "factlens/normalize.h"  // DecodeUtf8, AppendUtf8

namespace factlens {
namespace {

// Bytes a string may hold as they are: printable ASCII other than '"' and '\'.
struct PlainBytes {
  bool plain[256];
  constexpr PlainBytes() : plain() {
    for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  }
};
constexpr PlainBytes kPlain;

constexpr uint64_t kOnes = 0x0101010101010101ull;
constexpr uint64_t kHighs = 0x8080808080808080ull;

// True if any byte of `word` is not plain (see kPlain): below 0x20, '"', '\' or
// not ASCII. May say true for a word of plain bytes (the caller then looks byte by
// byte), never false for one that has another byte.
inline bool MaybeSpecial(uint64_t word) {
  auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHighs; };
  return ((word - kOnes * 0x20) & ~word & kHighs) | has_zero(word ^ (kOnes * '"')) |
         has_zero(word ^ (kOnes * '\\')) | (word & kHighs);
}

inline bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

int HexValue(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Reader {
 public:
  Reader(std::string_view text, JsonHandler* handler)
      : begin_(reinterpret_cast<const unsigned char*>(text.data())),
        end_(begin_ + text.size()),
        p_(begin_),
        handler_(handler) {}

  // Returns true if the document was read whole; see ReadJson.
  bool Run() {
    if (end_ - p_ >= 3 && p_[0] == 0xEF && p_[1] == 0xBB && p_[2] == 0xBF) p_ += 3;
    for (;;) {
      const int read = Slice();
      if (read != kMore) return read == kDone;
    }
  }

  std::string TakeError() { return std::move(error_); }

 private:
  // What Slice returns: false and true convert to the first two.
  static constexpr int kStopped = 0, kDone = 1, kMore = 2;
  static constexpr int kSliceValues = 4096;
  // Reads the document's next kSliceValues values (fewer at its end): kDone when
  // it was read whole, kStopped on a syntax error or a handler's stop, kMore with
  // more to read. A call a slice, not one for the whole document: wasm has no
  // on-stack replacement, and a single call would run all of a first load's
  // reading in V8's baseline tier, where a function is compiled by its optimising
  // tier for its next call.
  [[gnu::noinline]] int Slice() {
    for (int values = 0; values < kSliceValues; ++values) {
      // A value starts here.
      Space();
      if (p_ == end_) return Fail(p_, "unexpected end of input; expected a value");
      bool complete = true;  // false: a container opened, its first element is next
      switch (*p_) {
        case '{':
        case '[': {
          const bool object = *p_++ == '{';
          if (!(object ? handler_->StartObject() : handler_->StartArray())) return false;
          stack_.push_back(object ? '{' : '[');
          Space();
          if (p_ < end_ && *p_ == (object ? '}' : ']')) {  // empty
            ++p_;
            stack_.pop_back();
            if (!(object ? handler_->EndObject() : handler_->EndArray())) return false;
          } else {
            if (object && !Key()) return false;
            complete = false;
          }
          break;
        }
        case '"':
          if (!StringLiteral(&buffer_) || !handler_->String(buffer_)) return false;
          break;
        case 't':
          if (!Literal("true") || !handler_->Boolean(true)) return false;
          break;
        case 'f':
          if (!Literal("false") || !handler_->Boolean(false)) return false;
          break;
        case 'n':
          if (!Literal("null") || !handler_->Null()) return false;
          break;
        default:
          if (*p_ == '-' || IsDigit(*p_)) {
            if (!Number()) return false;
          } else {
            return Fail(p_, "unexpected " + Describe(p_) + "; expected a value");
          }
      }
      if (!complete) continue;
      // After a value: the end of the document, or what follows in its container.
      for (;;) {
        Space();
        if (stack_.empty()) {
          if (p_ != end_) {
            return Fail(p_, "unexpected " + Describe(p_) + " after the document's value");
          }
          return true;
        }
        const char open = stack_.back();
        const char close = open == '{' ? '}' : ']';
        if (p_ < end_ && *p_ == ',') {
          ++p_;
          if (open == '{') {
            Space();
            if (!Key()) return false;
          }
          break;  // the next element's value
        }
        if (p_ < end_ && *p_ == close) {
          ++p_;
          stack_.pop_back();
          if (!(open == '{' ? handler_->EndObject() : handler_->EndArray())) return false;
          continue;
        }
        return Fail(p_, "unexpected " + Describe(p_) + "; expected ',' or '" + close +
                            "' " + (open == '{' ? "in an object" : "in an array"));
      }
    }
    return kMore;
  }

  void Space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  // Reads an object member's key and its ':' (at p_, after any space).
  bool Key() {
    if (p_ == end_ || *p_ != '"') {
      return Fail(p_,
                  "unexpected " + Describe(p_) + "; expected a string (an object key)");
    }
    if (!StringLiteral(&buffer_) || !handler_->Key(buffer_)) return false;
    Space();
    if (p_ == end_ || *p_ != ':') {
      return Fail(p_,
                  "unexpected " + Describe(p_) + "; expected ':' after an object key");
    }
    ++p_;
    return true;
  }

  bool Literal(const char* word) {
    const size_t n = std::strlen(word);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) {
      return Fail(p_, "unexpected " + Describe(p_) + "; expected a value");
    }
    p_ += n;
    return true;
  }

  // Reads the string literal at p_ (its opening '"') into *out, decoded.
  bool StringLiteral(std::string* out) {
    out->clear();
    ++p_;
    for (;;) {
      const unsigned char* run = p_;
      // Eight bytes at a time while none needs a look, then byte by byte.
      while (end_ - p_ >= 8) {
        uint64_t word;
        std::memcpy(&word, p_, 8);
        if (MaybeSpecial(word)) break;
        p_ += 8;
      }
      while (p_ < end_ && kPlain.plain[*p_]) ++p_;
      out->append(reinterpret_cast<const char*>(run), p_ - run);
      if (p_ == end_) return Fail(p_, "unexpected end of input inside a string");
      const unsigned char c = *p_;
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c == '\\') {
        if (!Escape(out)) return false;
      } else if (c < 0x20) {
        static const char kHex[] = "0123456789ABCDEF";
        return Fail(p_, std::string("control character U+00") + kHex[c >> 4] +
                            kHex[c & 15] + " must be escaped inside a string");
      } else if (c < 0x80) {
        ++p_;  // plain after all: the word check is conservative
        out->push_back(static_cast<char>(c));
      } else {
        int32_t cp;
        const size_t n = DecodeUtf8(p_, end_ - p_, 0, &cp);
        if (cp < 0) return Fail(p_, "ill-formed UTF-8 inside a string");
        out->append(reinterpret_cast<const char*>(p_), n);
        p_ += n;
      }
    }
  }

  // Reads the escape at p_ (its '\') into *out.
  bool Escape(std::string* out) {
    const unsigned char* at = p_++;
    if (p_ == end_) return Fail(p_, "unexpected end of input inside a string");
    const unsigned char e = *p_++;
    // The one-character escapes, and the characters they stand for.
    static constexpr char kSimple[][2] = {{'"', '"'},  {'\\', '\\'}, {'/', '/'},
                                          {'b', '\b'}, {'f', '\f'},  {'n', '\n'},
                                          {'r', '\r'}, {'t', '\t'}};
    for (const auto& simple : kSimple) {
      if (e == static_cast<unsigned char>(simple[0])) {
        out->push_back(simple[1]);
        return true;
      }
    }
    if (e != 'u') {
      return Fail(at, "unexpected " + Describe(p_ - 1) + " after '\\' inside a string");
    }
    uint32_t cp = 0;
    if (!Hex4(at, &cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return Fail(at, "a low surrogate (\\uDC00-\\uDFFF) must follow a high one");
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t low = 0;
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') {
        return Fail(at,
                    "a high surrogate (\\uD800-\\uDBFF) must be followed by a low one");
      }
      const unsigned char* low_at = p_;
      p_ += 2;
      if (!Hex4(low_at, &low)) return false;
      if (low < 0xDC00 || low > 0xDFFF) {
        return Fail(at,
                    "a high surrogate (\\uD800-\\uDBFF) must be followed by a low one");
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    AppendUtf8(cp, out);
    return true;
  }

  // Reads the four hex digits of the \u escape at `at` (p_ is past its 'u').
  bool Hex4(const unsigned char* at, uint32_t* out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = p_ < end_ ? HexValue(*p_) : -1;
      if (h < 0) return Fail(at, "\\u must be followed by four hex digits");
      v = v * 16 + static_cast<uint32_t>(h);
      ++p_;
    }
    *out = v;
    return true;
  }

  bool Number() {
    const unsigned char* start = p_;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || !IsDigit(*p_)) {
      return Fail(p_, "unexpected " + Describe(p_) + "; expected a digit after '-'");
    }
    bool integral = true;
    uint64_t magnitude = 0;
    bool overflow = false;
    if (*p_ == '0') {
      ++p_;
    } else {
      while (p_ < end_ && IsDigit(*p_)) {
        const uint64_t digit = *p_++ - '0';
        if (magnitude > (UINT64_MAX - digit) / 10) overflow = true;
        magnitude = magnitude * 10 + digit;
      }
    }
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (p_ == end_ || !IsDigit(*p_)) {
        return Fail(p_, "unexpected " + Describe(p_) + "; expected a digit after '.'");
      }
      while (p_ < end_ && IsDigit(*p_)) ++p_;
      integral = false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !IsDigit(*p_)) {
        return Fail(p_,
                    "unexpected " + Describe(p_) + "; expected a digit in an exponent");
      }
      while (p_ < end_ && IsDigit(*p_)) ++p_;
      integral = false;
    }
    if (integral && !overflow) {
      if (!negative) return handler_->Unsigned(magnitude);
      if (magnitude <= static_cast<uint64_t>(INT64_MAX)) {
        return handler_->Integer(-static_cast<int64_t>(magnitude));
      }
      if (magnitude == static_cast<uint64_t>(INT64_MAX) + 1) {
        return handler_->Integer(INT64_MIN);
      }
    }
    // strtod wants a terminated string; the text is a view.
    const std::string literal(reinterpret_cast<const char*>(start), p_ - start);
    const double value = std::strtod(literal.c_str(), nullptr);
    if (!std::isfinite(value))
      return Fail(start, "number " + literal + " is out of range");
    return handler_->Float(value);
  }

  // Names the byte at `at` for a message.
  std::string Describe(const unsigned char* at) const {
    if (at >= end_) return "end of input";
    const unsigned char c = *at;
    if (c > 0x20 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
    static const char kHex[] = "0123456789ABCDEF";
    return std::string("byte 0x") + kHex[c >> 4] + kHex[c & 15];
  }

  bool Fail(const unsigned char* at, const std::string& what) {
    size_t line = 1;
    const unsigned char* line_start = begin_;
    for (const unsigned char* q = begin_; q < at; ++q) {
      if (*q == '\n') {
        ++line;
        line_start = q + 1;
      }
    }
    error_ = "line " + std::to_string(line) + ", column " +
             std::to_string(at - line_start + 1) + ": " + what;
    return false;
  }

  const unsigned char* const begin_;
  const unsigned char* const end_;
  const unsigned char* p_;
  JsonHandler* handler_;
  std::string stack_;   // the open containers, '{' or '['
  std::string buffer_;  // the string being read (the handler may move from it)
  std::string error_;
};

}  // namespace

bool ReadJson(std::string_view text, JsonHandler* handler, std::string* syntax_error) {
  Reader reader(text, handler);
  const bool ok = reader.Run();
  *syntax_error = reader.TakeError();
  return ok;
}

}  // namespace factlens
