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
