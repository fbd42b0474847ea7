// Fuzzes the compiled-list loader: bytes that claim to be a compiled list must be
// restored or refused with kind format, never crash, and a restored list must
// answer checks with well-formed verdicts.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "factlens/engine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace factlens;
  Engine engine;
  LoadOptions options;
  options.allow_unsigned = true;
  LoadedListInfo info;
  Status s = engine.LoadCompiled(
      std::string_view(reinterpret_cast<const char*>(data), size), options, &info);
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
