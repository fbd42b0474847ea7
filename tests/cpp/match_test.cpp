// Tests of the match component: patterns, keyword sets with proximity, URLs.
#include "factlens/match.h"

#include <catch2/catch.hpp>
#include <string>

#include "test_util.h"

namespace factlens {
namespace {

using testing::ListWithRules;
using testing::RuleJson;

std::unique_ptr<CompiledList> CompileRules(const std::string& rules_json) {
  RuleList list;
  Status s = ParseList(ListWithRules(rules_json), ParseLimits(), &list);
  INFO(s.message());
  REQUIRE(s.ok());
  std::unique_ptr<CompiledList> compiled;
  s = CompiledList::Compile(std::move(list), &compiled);
  INFO(s.message());
  REQUIRE(s.ok());
  return compiled;
}

std::unique_ptr<CompiledList> OneRule(const std::string& match_json) {
  return CompileRules("[" + RuleJson("r", match_json) + "]");
}

std::vector<RuleMatch> MatchText(const CompiledList& c, const std::string& text) {
  return c.Match(Normalize(text));
}

bool Matches(const CompiledList& c, const std::string& text) {
  return !MatchText(c, text).empty();
}

std::string Spanned(const std::string& text, const ByteRange& r) {
  return text.substr(r.begin, r.end - r.begin);
}

TEST_CASE("match: a pattern matches normalised text and its span maps back", "[match]") {
  auto c = OneRule(R"({"patterns":["vaccines? (contain|have) microchips?"]})");
  std::string text =
      "BREAKING: Vaccines   CONTAIN micro-chips? No: Vaccines contain microchips!";
  auto m = MatchText(*c, text);
  REQUIRE(m.size() == 1);
  CHECK(m[0].kind == MatchKind::kPattern);
  REQUIRE(m[0].spans.size() == 1);
  CHECK(Spanned(text, m[0].spans[0]) == "Vaccines contain microchips");
  CHECK_FALSE(Matches(*c, "vaccines contain no microchips"));
}

TEST_CASE("match: pattern literals are normalised like posts", "[match]") {
  // The author wrote capitals and an accent; the post uses lookalikes and leet.
  auto c = OneRule(R"({"patterns":["\\bVaccíne\\b"]})");
  CHECK(Matches(*c, "the v4cc1n3 is poison"));
  CHECK(Matches(*c, "the VACCINE is poison"));
  CHECK(Matches(*c, "the vacc\xD1\x96ne is poison"));  // Cyrillic i
  CHECK_FALSE(Matches(*c, "the vaccines are here"));
}

TEST_CASE("match: a pattern reports every occurrence as a span", "[match]") {
  auto c = OneRule(R"({"patterns":["hoax"]})");
  std::string text = "hoax! a HOAX, a h0ax";
  auto m = MatchText(*c, text);
  REQUIRE(m.size() == 1);
  REQUIRE(m[0].spans.size() == 3);
  CHECK(Spanned(text, m[0].spans[2]) == "h0ax");
}

TEST_CASE("match: keywords need every all term and one any term", "[match]") {
  auto c =
      OneRule(R"({"keywords":[{"all":["bill gates"],"any":["depopulation","kill"]}]})");
  CHECK(Matches(*c, "Bill Gates wants depopulation"));
  CHECK(Matches(*c, "kill switch says bill gates"));
  CHECK_FALSE(Matches(*c, "Bill Gates funds vaccines"));
  CHECK_FALSE(Matches(*c, "Bill and Gates want depopulation"));  // phrase broken
}

TEST_CASE("match: a none term anywhere vetoes the set", "[match]") {
  auto c = OneRule(R"({"keywords":[{"all":["chemtrails"],"none":["debunked"]}]})");
  CHECK(Matches(*c, "chemtrails are poisoning us"));
  CHECK_FALSE(Matches(*c, "chemtrails, long debunked, are back"));
}

TEST_CASE("match: within N matches terms spanning exactly N words, not N+1", "[match]") {
  auto c = OneRule(R"({"keywords":[{"all":["alpha","omega"],"within":4}]})");
  CHECK(Matches(*c, "alpha b c omega"));          // 4 words
  CHECK_FALSE(Matches(*c, "alpha b c d omega"));  // 5 words
  CHECK(Matches(*c, "omega b c alpha"));          // order does not matter
  // The narrowest window wins when terms repeat.
  CHECK(Matches(*c, "alpha x x x x x x omega x alpha"));
  // Phrases count all their words.
  auto p = OneRule(R"({"keywords":[{"all":["big pharma","lies"],"within":3}]})");
  CHECK(Matches(*p, "big pharma lies"));
  CHECK_FALSE(Matches(*p, "big pharma always lies"));
}

TEST_CASE("match: keyword terms are found at every occurrence in a long post",
          "[match]") {
  // Hundreds of distinct words, the terms repeated far apart: the post's word index
  // must give every occurrence, in order, for the one window that fits to be found.
  std::string text;
  for (int i = 0; i < 300; ++i) {
    if (i == 5 || i == 150 || i == 290) text += "alpha ";
    if (i == 40 || i == 200) text += "big ";  // "big" without "pharma"
    if (i == 292) text += "omega ";
    if (i == 296) text += "big pharma ";
    text += "w" + std::to_string(i) + " ";
  }
  auto c = OneRule(R"({"keywords":[{"all":["alpha","omega"],"within":4}]})");
  auto m = MatchText(*c, text);
  REQUIRE(m.size() == 1);
  REQUIRE(m[0].spans.size() == 2);
  CHECK(m[0].spans[0].begin == text.find("alpha w290"));  // the third "alpha"
  CHECK(Spanned(text, m[0].spans[1]) == "omega");
  // "omega w292 w293 w294 w295 big pharma": the phrase at the third "big".
  auto p = OneRule(R"({"keywords":[{"all":["big pharma","omega"],"within":7}]})");
  m = MatchText(*p, text);
  REQUIRE(m.size() == 1);
  REQUIRE(m[0].spans.size() == 2);
  CHECK(Spanned(text, m[0].spans[1]) == "big pharma");
  CHECK_FALSE(Matches(
      *OneRule(R"({"keywords":[{"all":["big pharma","omega"],"within":6}]})"), text));
}

TEST_CASE("match: keyword terms are found alike by the word groups and by the table",
          "[match]") {
  // A post's word positions are read by word length for its first finds, then, once
  // the finds have read a few times its words, looked up in a hashed table. Filler
  // words of other lengths than the terms' keep this post's finds on the first way;
  // filler of the terms' length (five letters) makes each find read all of it, so
  // the fourth find of the same rule builds the table. Both must find the same.
  for (const bool same_length : {false, true}) {
    INFO("filler of the terms' length: " << same_length);
    std::string text;
    for (int i = 0; i < 300; ++i) {
      if (i == 5 || i == 150 || i == 290) text += "alpha ";
      if (i == 292) text += "omega ";
      text +=
          (same_length ? "w" + std::to_string(1000 + i) : "w" + std::to_string(i)) + " ";
    }
    // Four absent "none" terms first: four finds of five-letter words, then the two
    // "all" terms.
    auto c = OneRule(R"({"keywords":[{"all":["alpha","omega"],)"
                     R"("none":["gamma","delta","sigma","kappa"],"within":4}]})");
    auto m = MatchText(*c, text);
    REQUIRE(m.size() == 1);
    REQUIRE(m[0].spans.size() == 2);
    CHECK(m[0].spans[0].begin ==
          text.find("alpha w" + std::string(same_length ? "1290" : "290")));
    CHECK(Spanned(text, m[0].spans[1]) == "omega");
    // A "none" term present (found by the table, on the five-letter filler) excludes.
    auto x = OneRule(R"({"keywords":[{"all":["alpha","omega"],)"
                     R"("none":["gamma","delta","sigma","kappa","w1007"],"within":4}]})");
    CHECK(Matches(*x, text) == !same_length);
  }
}

TEST_CASE("match: a phrase fits a window of its own length; within 1 fits one word",
          "[match]") {
  auto c = OneRule(R"({"keywords":[{"all":["flat earth"],"within":2}]})");
  CHECK(Matches(*c, "the flat earth truth"));
  auto one = OneRule(R"({"keywords":[{"any":["hoax"],"within":1}]})");
  CHECK(Matches(*one, "a hoax"));
}

TEST_CASE("match: a trailing * matches word prefixes", "[match]") {
  auto c = OneRule(R"({"keywords":[{"all":["vaccin*","autism"]}]})");
  CHECK(Matches(*c, "vaccinations cause autism"));
  CHECK(Matches(*c, "Vaccine autism link"));
  CHECK_FALSE(Matches(*c, "vacation autism"));
}

TEST_CASE("match: keyword spans point at the matched words", "[match]") {
  auto c = OneRule(R"({"keywords":[{"all":["moon landing"],"any":["faked","staged"]}]})");
  std::string text = "The Moon-landing was STAGED.";
  auto m = MatchText(*c, text);
  REQUIRE(m.size() == 1);
  REQUIRE(m[0].spans.size() == 2);
  CHECK(Spanned(text, m[0].spans[0]) == "Moon-landing");
  CHECK(Spanned(text, m[0].spans[1]) == "STAGED");
}

TEST_CASE("match: a page URL matches its canonical variants only", "[match]") {
  auto c = OneRule(R"({"urls":["https://example.com/news/fake-cure"]})");
  CHECK(Matches(*c, "look http://www.EXAMPLE.com/news/fake-cure/?utm_source=fb#x"));
  CHECK(Matches(*c, "look https://example.com/news/fake-cure?ref=1"));  // query ignored
  CHECK_FALSE(Matches(*c, "look https://example.com/news/real-cure"));
  CHECK_FALSE(Matches(*c, "look https://other.com/news/fake-cure"));
  auto m = MatchText(*c, "see https://example.com/news/fake-cure.");
  REQUIRE(m.size() == 1);
  CHECK(m[0].kind == MatchKind::kUrl);
}

TEST_CASE("match: a domain matches itself and subdomains on label boundaries",
          "[match]") {
  auto c = OneRule(R"({"urls":["fake.example"]})");
  CHECK(Matches(*c, "https://fake.example/a"));
  CHECK(Matches(*c, "https://news.fake.example/a"));
  CHECK(Matches(*c, "www.fake.example/story"));
  CHECK_FALSE(Matches(*c, "https://notfake.example/a"));
  CHECK_FALSE(Matches(*c, "fake.example is mentioned without a link"));
  auto m = MatchText(*c, "https://fake.example/a");
  REQUIRE(m.size() == 1);
  CHECK(m[0].kind == MatchKind::kDomain);
}

TEST_CASE("match: one match per rule and kind, ordered by rule", "[match]") {
  auto c = CompileRules(
      "[" + RuleJson("a", R"({"patterns":["x1","y"]})") + "," +
      RuleJson("b", R"({"patterns":["y"],"keywords":[{"all":["y"]}]})") + "]");
  auto m = MatchText(*c, "x1 y");
  REQUIRE(m.size() == 3);
  CHECK(m[0].rule_index == 0);
  CHECK(m[0].spans.size() == 2);
  CHECK(m[1].rule_index == 1);
  CHECK(m[1].kind == MatchKind::kPattern);
  CHECK(m[2].kind == MatchKind::kKeywords);
}

TEST_CASE("match: a pattern over RE2's memory budget fails with kind limit", "[match]") {
  RuleList list;
  REQUIRE(ParseList(ListWithRules(
                        "[" + RuleJson("big", R"({"patterns":["\\pL{1000}"]})") + "]"),
                    ParseLimits(), &list)
              .ok());
  std::unique_ptr<CompiledList> compiled;
  Status s = CompiledList::Compile(std::move(list), &compiled);
  CHECK(s.kind() == ErrorKind::kLimit);
  CHECK_THAT(s.message(),
             Catch::StartsWith("rules[0] (id \"big\"): match.patterns[0]: "));
  CHECK(compiled == nullptr);
}

TEST_CASE("match: a keyword term without letters or digits is refused", "[match]") {
  RuleList list;
  REQUIRE(ParseList(ListWithRules(
                        "[" + RuleJson("k", R"({"keywords":[{"all":["!!!"]}]})") + "]"),
                    ParseLimits(), &list)
              .ok());
  std::unique_ptr<CompiledList> compiled;
  Status s = CompiledList::Compile(std::move(list), &compiled);
  CHECK(s.kind() == ErrorKind::kFormat);
  CHECK_THAT(s.message(),
             Catch::Contains("match.keywords: a term has no letters or digits"));
}

}  // namespace
}  // namespace factlens
