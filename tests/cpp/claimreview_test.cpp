// Tests of claimreview: input shapes, the ratings table, list building and merging.
#include "factlens/claimreview.h"

#include "catch2/catch.hpp"
#include "test_util.h"

using namespace factlens;
using factlens::testing::ReadSource;

namespace {
RatingTable DefaultTable() {
  RatingTable t;
  REQUIRE(RatingTable::Parse(ReadSource("rules/ratings.json"), &t).ok());
  return t;
}
}  // namespace

TEST_CASE("claimreview: the ratings table maps spellings in several languages",
          "[claimreview]") {
  RatingTable t = DefaultTable();
  Rating r;
  for (const char* s : {"False", "PANTS ON FIRE!", "Falso", "Faux", "falsch"}) {
    INFO(s);
    REQUIRE(t.Lookup(s, &r));
    CHECK(r == Rating::kFalse);
  }
  REQUIRE(t.Lookup("Missing context", &r));
  CHECK(r == Rating::kMissingContext);
  REQUIRE(t.Lookup("Engañoso", &r));
  CHECK(r == Rating::kMissingContext);
  REQUIRE(t.Lookup("Satire", &r));
  CHECK(r == Rating::kSatire);
  CHECK_FALSE(t.Lookup("Wobbly", &r));
}

TEST_CASE("claimreview: HTML script blocks in any attribute case and order",
          "[claimreview]") {
  std::string html =
      "<html><head><link href='https://d.example/x/' rel=canonical>"
      "<!-- <script type=\"application/ld+json\">{\"@type\":\"ClaimReview\"}</script> -->"
      "<SCRIPT data-x=1 TYPE = \"Application/LD+JSON; charset=utf-8\" >"
      "{\"@type\":\"ClaimReview\",\"url\":\"c/1\",\"claimReviewed\":\"A claim.\","
      "\"datePublished\":\"2025-01-01\",\"reviewRating\":{\"alternateName\":\"False\"}}"
      "</SCRIPT><script>var a = '<script type=\"application/ld+json\">';</script></head>";
  ExtractResult out;
  REQUIRE(ExtractClaimReviews(html, "", &out).ok());
  CHECK(out.shape == "html");
  REQUIRE(out.reviews.size() == 1);
  CHECK(out.reviews[0].url == "https://d.example/x/c/1");
  CHECK(out.reviews[0].where.line == 1);
}

TEST_CASE("claimreview: merge keeps ids and edits, adds, bumps the version",
          "[claimreview]") {
  RatingTable t = DefaultTable();
  ExtractResult one, two;
  REQUIRE(
      ExtractClaimReviews(ReadSource("tests/fixtures/claimreview/single.json"), "", &one)
          .ok());
  REQUIRE(
      ExtractClaimReviews(ReadSource("tests/fixtures/claimreview/array.json"), "", &two)
          .ok());
  ImportOptions o;
  o.now_unix = 1750000000;
  std::string first, merged;
  ImportReport report;
  REQUIRE(BuildList(one.reviews, t, o, "", &first, &report).ok());
  CHECK(report.added == 1);
  REQUIRE(BuildList(two.reviews, t, o, first, &merged, &report).ok());
  CHECK(report.added == 1);
  CHECK(report.unchanged == 1);
  CHECK(report.version == 2);
  RuleList list;
  REQUIRE(ParseList(merged, ParseLimits(), &list).ok());
  REQUIRE(list.rules.size() == 2);
  CHECK(list.rules[0].id == "vaccine-magnets");
  CHECK(list.rules[1].rating == Rating::kSatire);
}

TEST_CASE("claimreview: relative URLs resolve per RFC 3986", "[claimreview]") {
  CHECK(ResolveUrl("https://a.example/b/c.html", "d/e") == "https://a.example/b/d/e");
  CHECK(ResolveUrl("https://a.example/b/c.html", "/x") == "https://a.example/x");
  CHECK(ResolveUrl("https://a.example/b/c/", "../y") == "https://a.example/b/y");
  CHECK(ResolveUrl("https://a.example/b", "//c.example/z") == "https://c.example/z");
}

TEST_CASE("claimreview: the built-in ratings table is rules/ratings.json",
          "[claimreview]") {
  RatingTable built_in;
  REQUIRE(RatingTable::BuiltIn(&built_in).ok());
  RatingTable file = DefaultTable();
  CHECK(built_in.size() == file.size());
  Rating r;
  REQUIRE(built_in.Lookup("Pants on Fire!", &r));
  CHECK(r == Rating::kFalse);
}

TEST_CASE("claimreview: one import run over several inputs names each message's input",
          "[claimreview]") {
  RatingTable table = DefaultTable();
  std::string a =
      "{\"@type\":\"ClaimReview\",\"url\":\"https://d.example/a\",\"claimReviewed\":"
      "\"Claim A is made "
      "up.\",\"headline\":\"H\",\"datePublished\":\"2025-01-01\",\"reviewRating\":"
      "{\"alternateName\":\"False\"}}";
  std::string b =
      "[\n{\"@type\":\"ClaimReview\",\"url\":\"http://d.example/b\",\"claimReviewed\":"
      "\"Claim B.\",\"headline\":\"H\",\"datePublished\":\"2025-01-01\",\"reviewRating\":"
      "{\"alternateName\":\"False\"}},\n"
      "{\"@type\":\"ClaimReview\",\"url\":\"https://d.example/c\",\"claimReviewed\":"
      "\"Claim C.\",\"headline\":\"H\",\"datePublished\":\"2025-01-01\",\"reviewRating\":"
      "{\"alternateName\":\"Wobbly\"}}]";
  ImportOptions options;
  options.now_unix = 1735689600;
  ImportRun run;
  REQUIRE(ImportClaimReviews({a, b}, "", table, options, "", &run).ok());
  REQUIRE(run.inputs.size() == 2);
  CHECK(run.inputs[0].reviews == 1);
  CHECK(run.inputs[1].shape == "json-ld array");
  CHECK(run.inputs[1].reviews == 1);  // the http one is reported and left out
  REQUIRE(run.inputs[1].messages.size() == 1);
  CHECK(run.inputs[1].messages[0].input == 1);
  CHECK(run.inputs[1].messages[0].where.line == 2);
  REQUIRE(run.report.messages.size() == 1);  // "Wobbly"
  CHECK(run.report.messages[0].input == 1);
  CHECK(run.report.messages[0].where.line == 3);
  CHECK(run.report.added == 1);
  CHECK(run.list_text.find("https://d.example/a") != std::string::npos);

  // An input that is no ClaimReview markup stops the run and is named.
  CHECK_FALSE(ImportClaimReviews({a, "plain words"}, "", table, options, "", &run).ok());
  CHECK(run.failed_input == 1);
  CHECK(run.inputs.size() == 1);
  // A broken list to merge into: the build fails, no input is blamed.
  Status s = ImportClaimReviews({a}, "", table, options, "{", &run);
  CHECK(s.kind() == ErrorKind::kFormat);
  CHECK(run.failed_input == -1);
  CHECK(run.list_text.empty());
}
