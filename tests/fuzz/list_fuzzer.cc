// Fuzzes the list parser: any bytes must give a list or a located error, within the
// limits, never a crash, a hang or a leak.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "factlens/list.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  factlens::ParseLimits limits;
  limits.max_list_bytes = 1 << 20;
  factlens::RuleList list;
  factlens::Status s = factlens::ParseList(
      std::string_view(reinterpret_cast<const char*>(data), size), limits, &list);
  if (!s.ok() && (s.message().empty() || !list.rules.empty())) __builtin_trap();
  return 0;
}
