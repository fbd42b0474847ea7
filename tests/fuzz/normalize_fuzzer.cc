// Fuzzes the normaliser and its offset maps, checking their invariants: every
// output byte maps inside the input, the cheap form equals the full one, UTF-16
// indices never go backwards, and a pattern RE2 accepts stays acceptable after
// NormalizePattern.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "factlens/normalize.h"
#include "re2/re2.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  factlens::NormalizedText n = factlens::Normalize(in);
  if (n.origin.size() != n.text.size()) __builtin_trap();
  // Monotone (OriginalRange reads only a span's first and last non-empty range).
  factlens::ByteRange last{0, 0};
  for (const factlens::ByteRange& r : n.origin) {
    if (r.begin > r.end || r.end > size) __builtin_trap();
    if (r.begin == r.end) continue;
    if (r.begin < last.begin || r.end < last.end) __builtin_trap();
    last = r;
  }
  for (const factlens::ByteRange& w : n.words) {
    if (w.begin >= w.end || w.end > n.text.size()) __builtin_trap();
    factlens::ByteRange o = n.OriginalRange(w.begin, w.end);
    if (o.begin > o.end || o.end > size) __builtin_trap();
  }
  if (factlens::NormalizeToString(in) != n.text) __builtin_trap();
  factlens::Utf16Index utf16(in);
  for (uint32_t i = 1; i <= size; ++i) {
    if (utf16.ToUtf16(i) < utf16.ToUtf16(i - 1)) __builtin_trap();
  }
  if (size <= 200) {
    re2::RE2::Options options;
    options.set_log_errors(false);
    std::string pattern(in);
    re2::RE2 original(pattern, options);
    if (original.ok()) {
      re2::RE2 normalised(factlens::NormalizePattern(pattern), options);
      if (!normalised.ok() && normalised.error_code() != re2::RE2::ErrorPatternTooLarge) {
        __builtin_trap();
      }
    }
  }
  return 0;
}
