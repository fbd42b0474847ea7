// Fuzzes the list parser: any bytes must give a list or a located error, within the
// limits, never a crash, a hang or a leak. With the patterns' syntax left to
// Compile, it must give the same error, or (for a syntax error) a list in which
// FirstPatternSyntaxError finds it. The JSON reader under it must accept what
// nlohmann/json's strict parser accepts (but for a NUL byte: see below).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "factlens/json_reader.h"
#include "factlens/list.h"
#include "nlohmann/json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  factlens::ParseLimits limits;
  limits.max_list_bytes = 1 << 20;
  factlens::RuleList list;
  factlens::Status s = factlens::ParseList(text, limits, &list);
  if (!s.ok() && (s.message().empty() || !list.rules.empty())) __builtin_trap();
  factlens::RuleList later;
  const factlens::Status d =
      factlens::ParseList(text, limits, &later, factlens::PatternSyntax::kLeftToCompile);
  const factlens::Status found = factlens::FirstPatternSyntaxError(later.rules);
  if (d.ok() ? found.kind() != s.kind() || found.message() != s.message() ||
                   (s.ok() && later.rules.size() != list.rules.size())
             : d.kind() != s.kind() || d.message() != s.message()) {
    __builtin_trap();
  }

  factlens::JsonHandler ignore;  // accepts everything
  std::string syntax_error;
  const bool ours = factlens::ReadJson(text, &ignore, &syntax_error);
  // nlohmann reads a NUL byte as the end of the input, so it accepts "{}\0junk";
  // the reader refuses a NUL anywhere (JSON has none outside escapes).
  const bool theirs = nlohmann::json::accept(text.begin(), text.end()) &&
                      text.find('\0') == std::string_view::npos;
  if (ours != theirs) __builtin_trap();
  if (ours != syntax_error.empty()) __builtin_trap();
  return 0;
}
