// Helpers shared by the Catch2 tests: fixture files and small list builders.
#ifndef FACTLENS_TESTS_TEST_UTIL_H_
#define FACTLENS_TESTS_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "nlohmann/json.hpp"

namespace factlens::testing {

// Returns the text of `relative` (from the repository root); empty if missing.
inline std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(FACTLENS_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline nlohmann::json ReadJson(const std::string& relative) {
  return nlohmann::json::parse(ReadSource(relative), nullptr, false);
}

// Returns `bytes` with the little-endian uint32 at `at` changed by `delta` (a count
// or total of a compiled form made wrong).
inline std::string WithU32Added(std::string bytes, size_t at, int delta) {
  uint32_t v = 0;
  std::memcpy(&v, bytes.data() + at, 4);
  v += static_cast<uint32_t>(delta);
  std::memcpy(&bytes[at], &v, 4);
  return bytes;
}

// Returns a valid list text whose rules array is `rules_json` (a JSON array text).
inline std::string ListWithRules(const std::string& rules_json, int version = 1) {
  return R"({"format":"factlens/1","list":{"id":"t","name":"T","publisher":{"name":"P",)"
         R"("url":"https://p.example/"},"version":)" +
         std::to_string(version) +
         R"(,"issued":"2026-01-01T00:00:00Z","expires":"2099-01-01T00:00:00Z"},"rules":)" +
         rules_json + "}";
}

// Returns one rule's JSON with the given `match` object text and defaults elsewhere.
inline std::string RuleJson(const std::string& id, const std::string& match_json,
                            const std::string& rating = "false",
                            const std::string& severity = "low",
                            const std::string& extra = "") {
  return R"({"id":")" + id + R"(","claim":"A claim.","rating":")" + rating +
         R"(","severity":")" + severity + R"(","match":)" + match_json +
         R"(,"review":{"url":"https://r.example/x","title":"T","publisher":"P",)"
         R"("date":"2025-01-01"})" +
         extra + "}";
}

}  // namespace factlens::testing

#endif  // FACTLENS_TESTS_TEST_UTIL_H_
