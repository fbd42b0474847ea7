// Tests of lint: located findings and examples run through the engine.
#include "factlens/lint.h"

#include <algorithm>

#include "catch2/catch.hpp"
#include "test_util.h"

using namespace factlens;
using factlens::testing::ReadSource;

namespace {
bool Has(const LintReport& r, const std::string& code, size_t line) {
  return std::any_of(r.findings.begin(), r.findings.end(), [&](const LintFinding& f) {
    return f.code == code && f.where.line == line;
  });
}
}  // namespace

TEST_CASE("lint: every duplicate id, http link and RE2 error, located", "[lint]") {
  LintOptions o;
  o.now_unix = 1767571200;  // 2026-01-05
  LintReport r = LintList(ReadSource("tests/fixtures/claimreview/lint-bad.json"), o);
  CHECK_FALSE(r.parsed);
  CHECK(Has(r, "review-url", 27));
  CHECK(Has(r, "duplicate-id", 30));
  CHECK(Has(r, "re2", 34));
  CHECK(r.errors == 3);
}

TEST_CASE("lint: semantic findings and corpus breadth", "[lint]") {
  LintOptions o;
  o.now_unix = 1767571200;
  o.corpus = {"the cat sat", "the dog ran", "hello there"};
  LintReport r = LintList(ReadSource("tests/fixtures/claimreview/lint-semantic.json"), o);
  REQUIRE(r.parsed);
  CHECK(Has(r, "expires-soon", 9));
  CHECK(Has(r, "too-broad", 12));
  CHECK(Has(r, "shadowed", 21));
  CHECK(Has(r, "never-matches", 34));
  CHECK(Has(r, "matches-everything", 34));
  LintReport clean =
      LintList(ReadSource("rules/examples/demo.json"), LintOptions{1750000000});
  CHECK(clean.errors == 0);
}

TEST_CASE("lint: RunExamples explains failures", "[lint]") {
  ExamplesReport r;
  REQUIRE(RunExamples(ReadSource("tests/fixtures/claimreview/test-fails.json"), &r).ok());
  CHECK(r.failed == 3);
  CHECK(r.passed == 3);
  auto it = std::find_if(r.results.begin(), r.results.end(), [](const ExampleResult& e) {
    return e.text == "the moon tastes like cheddar";
  });
  REQUIRE(it != r.results.end());
  CHECK(it->explanation.find("matched instead: rule \"cheddar\" by its keywords") !=
        std::string::npos);
}
