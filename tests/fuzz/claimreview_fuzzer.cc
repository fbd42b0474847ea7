// Fuzzes the ClaimReview importer: HTML pages, JSON-LD and Fact Check Tools
// responses from hostile bytes. It must extract or report, never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "factlens/claimreview.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 20)) return 0;
  factlens::ExtractResult result;
  factlens::ExtractClaimReviews(
      std::string_view(reinterpret_cast<const char*>(data), size),
      "https://factcheck.example/page", &result);
  return 0;
}
