// Fuzzes the compiled-list loader: bytes that claim to be a compiled list must be
// restored or refused with kind format, never crash, and a restored list must
// answer checks with well-formed verdicts. The bytes are read part by part, as the
// wasm binding reads them from JavaScript.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "factlens/engine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace factlens;
  Engine engine;
  LoadOptions options;
  options.allow_unsigned = true;
  LoadedListInfo info;
  // Read as the wasm binding reads it: each part copied into a fresh buffer, the
  // previous one freed, so ASan sees a view kept past the next read.
  std::unique_ptr<char[]> part;
  Status s = engine.LoadCompiled(
      size,
      [&](size_t offset, size_t part_size) {
        part.reset();
        part.reset(new char[part_size > 0 ? part_size : 1]);
        std::memcpy(part.get(), data + offset, part_size);
        return std::string_view(part.get(), part_size);
      },
      options, &info);
  if (s.ok()) {
    Verdict v = engine.Check("5g spreads the virus https://fake.example/a h0ax", {});
    for (const ExplainedMatch& m : v.matches) {
      if (m.rule == nullptr || m.score < 0 || m.score > 1) __builtin_trap();
    }
  } else if (s.message().empty()) {
    __builtin_trap();
  }
  return 0;
}
