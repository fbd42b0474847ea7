// Tests of the list component: the factlens/1 parser, its errors and its limits.
#include "factlens/list.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.h"

namespace factlens {
namespace {

using testing::ListWithRules;
using testing::ReadJson;
using testing::ReadSource;
using testing::RuleJson;

Status Parse(const std::string& text, RuleList* out = nullptr,
             const ParseLimits& limits = ParseLimits()) {
  RuleList local;
  return ParseList(text, limits, out ? out : &local);
}

TEST_CASE("list: a complete rule reads every field", "[list]") {
  std::string text = ListWithRules(
      "[" +
          RuleJson(
              "r1",
              R"({"patterns":["a+b"],"keywords":[{"all":["x"],"any":["y z"],"none":["w"],)"
              R"("within":5}],"urls":["example.com"],"similar":["phrasing"]})",
              "partly_false", "critical",
              R"(,"regions":["IN","LK"],"languages":["en","pt-BR"],)"
              R"("examples":{"match":["m"],"no_match":["n"]},"x-note":"ignored")") +
          "]",
      7);
  RuleList list;
  Status s = Parse(text, &list);
  REQUIRE(s.ok());
  CHECK(list.info.id == "t");
  CHECK(list.info.version == 7);
  CHECK(list.info.expires_unix == 4070908800);
  REQUIRE(list.rules.size() == 1);
  const Rule& r = list.rules[0];
  CHECK(r.rating == Rating::kPartlyFalse);
  CHECK(r.severity == Severity::kCritical);
  CHECK(r.regions == std::vector<std::string>{"IN", "LK"});
  CHECK(r.languages == std::vector<std::string>{"en", "pt-BR"});
  CHECK(r.patterns == std::vector<std::string>{"a+b"});
  REQUIRE(r.keywords.size() == 1);
  CHECK(r.keywords[0].any == std::vector<std::string>{"y z"});
  CHECK(r.keywords[0].within == 5);
  CHECK(r.urls == std::vector<std::string>{"example.com"});
  CHECK(r.similar == std::vector<std::string>{"phrasing"});
  CHECK(r.review.url == "https://r.example/x");
  CHECK(r.examples_match == std::vector<std::string>{"m"});
}

TEST_CASE("list: the rules come in a vector of their exact count", "[list]") {
  // ParseList reserves for the "claim" keys it counts in the text, then shrinks:
  // the count is exact for plain rules, and keys in x- fields only make it larger.
  auto rules = [](int n, const std::string& extra) {
    std::string json = "[";
    for (int i = 0; i < n; ++i) {
      if (i > 0) json += ",";
      json += RuleJson("r" + std::to_string(i), R"({"patterns":["a"]})", "false", "low",
                       extra);
    }
    return ListWithRules(json + "]");
  };
  for (const std::string& extra :
       {std::string(), std::string(R"(,"x-more":{"claim":"x","y":[{"claim":1}]})"),
        std::string(R"(,"x-quoted":"a \"claim\" in a string")")}) {
    RuleList list;
    REQUIRE(Parse(rules(300, extra), &list).ok());
    CHECK(list.rules.size() == 300);
    CHECK(list.rules.capacity() == 300);
    CHECK(list.rules[299].id == "r299");
  }
  // A list with no rules.
  RuleList list;
  REQUIRE(Parse(rules(0, ""), &list).ok());
  CHECK(list.rules.empty());
}

TEST_CASE("list: a rule sink takes each rule as it is read; its error stops there",
          "[list]") {
  auto rules = [](int n, int bad_rating_at = -1) {
    std::string json = "[";
    for (int i = 0; i < n; ++i) {
      json += (i ? "," : "") + RuleJson("r" + std::to_string(i), R"({"patterns":["a"]})",
                                        i == bad_rating_at ? "maybe" : "false");
    }
    return json + "]";
  };
  std::vector<std::string> seen;
  auto sink_failing_at = [&](size_t at) -> RuleSink {
    return [&seen, at](Rule& rule, size_t index) {
      seen.push_back(std::to_string(index) + ":" + rule.id);
      if (index == at) return Status(ErrorKind::kLimit, "sink refused " + rule.id);
      return Status::Ok();
    };
  };
  ListInfo info;
  size_t count = 0;
  REQUIRE(ParseList(ListWithRules(rules(4), 9), ParseLimits(), sink_failing_at(99), &info,
                    &count)
              .ok());
  CHECK(seen == std::vector<std::string>{"0:r0", "1:r1", "2:r2", "3:r3"});
  CHECK(count == 4);
  CHECK(info.id == "t");
  CHECK(info.version == 9);
  // The sink's error is the rule's: later rules are not read.
  seen.clear();
  Status s = ParseList(ListWithRules(rules(4)), ParseLimits(), sink_failing_at(1), &info,
                       &count);
  CHECK(s.message() == "sink refused r1");
  CHECK(seen == std::vector<std::string>{"0:r0", "1:r1"});
  // The document's syntax and its header come first, and an earlier rule's error.
  seen.clear();
  s = ParseList(ListWithRules(rules(4)) + ",", ParseLimits(), sink_failing_at(1), &info,
                &count);
  CHECK(s.message().find("after the document's value") != std::string::npos);
  std::string header = ListWithRules(rules(4));
  header.replace(header.find("factlens/1"), 10, "factlens/9");
  s = ParseList(header, ParseLimits(), sink_failing_at(1), &info, &count);
  CHECK(s.message().find("is not supported") != std::string::npos);
  seen.clear();
  s = ParseList(ListWithRules(rules(4, 0)), ParseLimits(), sink_failing_at(1), &info,
                &count);
  CHECK(s.message().find("rules[0]") != std::string::npos);
  CHECK(seen.empty());
  // RulePatternSyntaxError names a rule's first pattern RE2 rejects as ParseList does.
  Rule bad;
  bad.id = "x";
  bad.patterns = {"fine", "(open", "[z-a]"};
  CHECK(RulePatternSyntaxError(7, bad).message().rfind(
            "rules[7] (id \"x\"): match.patterns[1]: ", 0) == 0);
  bad.patterns = {"fine"};
  CHECK(RulePatternSyntaxError(7, bad).ok());
}

TEST_CASE("list: valid fixture lists and the demo list are accepted", "[list]") {
  namespace fs = std::filesystem;
  int count = 0;
  for (const auto& entry : fs::directory_iterator(std::string(FACTLENS_SOURCE_DIR) +
                                                  "/tests/fixtures/lists/valid")) {
    std::string name = entry.path().filename().string();
    INFO(name);
    Status s = Parse(ReadSource("tests/fixtures/lists/valid/" + name));
    CHECK(s.message() == "");
    ++count;
  }
  CHECK(count >= 4);
  RuleList demo;
  Status s = Parse(ReadSource("rules/examples/demo.json"), &demo);
  CHECK(s.message() == "");
  CHECK(demo.rules.size() >= 8);
}

// Every invalid fixture is rejected with its kind, naming where (expected.json).
void CheckRejected(const std::string& folder) {
  nlohmann::json expected = ReadJson(folder + "/expected.json");
  REQUIRE(expected.is_object());
  REQUIRE(expected.size() >= 3);
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    INFO(folder << "/" << it.key());
    RuleList list;
    Status s = Parse(ReadSource(folder + "/" + it.key()), &list);
    REQUIRE_FALSE(s.ok());
    CHECK(ErrorKindName(s.kind()) == it.value()["kind"].get<std::string>());
    CHECK_THAT(s.message(), Catch::Contains(it.value()["where"].get<std::string>()));
    CHECK(list.rules.empty());  // nothing half loaded
  }
}

TEST_CASE("list: every invalid fixture is rejected naming the place", "[list]") {
  CheckRejected("tests/fixtures/lists/invalid");
  CheckRejected("tests/fixtures/lists/semantic-invalid");
}

TEST_CASE("list: JSON syntax errors give line and column", "[list]") {
  Status s = Parse("{\n  \"format\": \"factlens/1\",\n  \"list\": {,\n}");
  REQUIRE(s.kind() == ErrorKind::kFormat);
  CHECK_THAT(s.message(), Catch::StartsWith("line 3, column 12"));
}

TEST_CASE("list: semantic errors name the rule index, id and field", "[list]") {
  std::string rules = "[" + RuleJson("ok", R"({"patterns":["x"]})") + "," +
                      RuleJson("5g-covid", R"({"patterns":["a","(5g|covid"]})") + "]";
  Status s = Parse(ListWithRules(rules));
  CHECK(s.kind() == ErrorKind::kFormat);
  CHECK(s.message() ==
        "rules[1] (id \"5g-covid\"): match.patterns[1]: missing ) at offset 0");
  s = Parse(ListWithRules("[" + RuleJson("r", R"({"patterns":["ab(cd"]})") + "]"));
  CHECK(s.message() == "rules[0] (id \"r\"): match.patterns[0]: missing ) at offset 2");
  s = Parse(ListWithRules("[" + RuleJson("r", R"({"patterns":["a**"]})") + "]"));
  CHECK_THAT(s.message(),
             Catch::StartsWith(
                 "rules[0] (id \"r\"): match.patterns[0]: bad repetition operator"));
  s = Parse(ListWithRules("[" + RuleJson("r", R"({"keywords":[{"none":["x"]}]})") + "]"));
  CHECK(s.message() ==
        "rules[0] (id \"r\"): match.keywords[0]: needs at least one term in \"all\" or "
        "\"any\"");
}

TEST_CASE("list: syntax left to Compile is found later, and first when a rule fails",
          "[list]") {
  const std::string bad_pattern = RuleJson("p", R"({"patterns":["a","(5g|covid"]})");
  const std::string expected =
      "rules[1] (id \"p\"): match.patterns[1]: missing ) at offset 0";
  // Left to Compile: the list parses; the error is still there to find.
  RuleList list;
  REQUIRE(ParseList(ListWithRules("[" + RuleJson("ok", R"({"patterns":["x"]})") + "," +
                                  bad_pattern + "]"),
                    ParseLimits(), &list, PatternSyntax::kLeftToCompile)
              .ok());
  CHECK(list.pattern_syntax_unchecked);
  CHECK(FirstPatternSyntaxError(list.rules).message() == expected);
  CHECK(FirstPatternSyntaxError(list.rules, 2).ok());
  // A later rule's error, or one in the same rule after its patterns, gives way
  // to the syntax error, as when ParseList checks it; one before them does not.
  for (const std::string& after : {RuleJson("late", R"({"patterns":["y"]})", "maybe"),
                                   RuleJson("p", R"({"patterns":["y"]})")}) {
    const std::string text = ListWithRules("[" + RuleJson("ok", R"({"patterns":["x"]})") +
                                           "," + bad_pattern + "," + after + "]");
    for (PatternSyntax syntax :
         {PatternSyntax::kChecked, PatternSyntax::kLeftToCompile}) {
      CHECK(ParseList(text, ParseLimits(), &list, syntax).message() == expected);
    }
  }
  const std::string same_rule = ListWithRules(
      "[" + RuleJson("ok", R"({"patterns":["x"]})") + "," +
      RuleJson("p", R"({"patterns":["a","(5g|covid"],"keywords":[{"none":["x"]}]})") +
      "]");
  const std::string before = ListWithRules(
      "[" + RuleJson("ok", R"({"patterns":["x"]})", "maybe") + "," + bad_pattern + "]");
  for (PatternSyntax syntax : {PatternSyntax::kChecked, PatternSyntax::kLeftToCompile}) {
    CHECK(ParseList(same_rule, ParseLimits(), &list, syntax).message() == expected);
    CHECK_THAT(ParseList(before, ParseLimits(), &list, syntax).message(),
               Catch::StartsWith("rules[0] (id \"ok\"): rating"));
  }
}

TEST_CASE("list: each message names the place it is about as its JSON path", "[list]") {
  // A place becomes text only when a message needs it (Path in list.cc): each
  // kind of place, nested, indexed, before and after the rule's id is read.
  const std::string long_id(200, 'a');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[5]", "rules[0]: must be an object"},
      {R"([{"claim":"c"}])", "rules[0]: id: missing required field"},
      {"[" + RuleJson(long_id, R"({"patterns":["x"]})") + "]",
       "rules[0] (id \"" + long_id.substr(0, 128) + "\"): id: longer than 128 bytes"},
      {"[" + RuleJson("ok", R"({"patterns":["x"]})") + "," +
           RuleJson("r", R"({"patterns":["x"]})", "false", "low",
                    R"(,"zeta":1,"beta":2)") +
           "]",
       "rules[1] (id \"r\"): beta: unknown field"},
      {"[" +
           RuleJson("r", R"({"patterns":["x"]})", "false", "low",
                    R"(,"regions":["DE","FR","DE"])") +
           "]",
       "rules[0] (id \"r\"): regions[2]: \"DE\" is listed twice"},
      {"[" +
           RuleJson("r", R"({"patterns":["x"]})", "false", "low",
                    R"(,"languages":["en","??"])") +
           "]",
       "rules[0] (id \"r\"): languages[1]: \"??\" is not a BCP 47 language tag"},
      {"[" + RuleJson("r", R"({"keywords":[{"all":["a"]},{"any":["b","c","*"]}]})") + "]",
       "rules[0] (id \"r\"): match.keywords[1].any[2]: a wildcard needs a prefix"},
      {"[" + RuleJson("r", R"({"keywords":[{"all":["a"],"within":0}]})") + "]",
       "rules[0] (id \"r\"): match.keywords[0].within: must be an integer from 1 to "
       "1000"},
      {"[" + RuleJson("r", R"({"urls":["example.com",7]})") + "]",
       "rules[0] (id \"r\"): match.urls[1]: must be a string"},
      {"[" + RuleJson("r", R"({"patterns":["x"],"other":1})") + "]",
       "rules[0] (id \"r\"): match.other: unknown field"},
      {"[" +
           RuleJson("r", R"({"patterns":["x"]})", "false", "low",
                    R"(,"examples":{"no_match":["ok",""]})") +
           "]",
       "rules[0] (id \"r\"): examples.no_match[1]: must not be empty"},
  };
  for (const auto& [rules, expected] : cases) {
    INFO(rules);
    CHECK(Parse(ListWithRules(rules)).message() == expected);
  }
  // The list's own places, and the document's.
  std::string no_url = ListWithRules("[]");
  no_url.replace(no_url.find(R"("url":"https://p.example/")"), 26, R"("url":5)");
  CHECK(Parse(no_url).message() == "list.publisher.url: must be a string");
  CHECK(Parse(R"({"format":"factlens/1","rules":[]})").message() ==
        "list: missing required field");
  CHECK(Parse(R"({"format":"factlens/1","extra":1})").message() ==
        "extra: unknown field");
}

TEST_CASE("list: duplicate keys and duplicate rule ids are rejected", "[list]") {
  Status s = Parse(R"({"format":"factlens/1","format":"factlens/1"})");
  CHECK(s.kind() == ErrorKind::kFormat);
  CHECK_THAT(s.message(), Catch::Contains("duplicate key \"format\""));
  std::string rules = "[" + RuleJson("a", R"({"patterns":["x"]})") + "," +
                      RuleJson("a", R"({"patterns":["y"]})") + "]";
  s = Parse(ListWithRules(rules));
  CHECK(s.message() == "rules[1] (id \"a\"): id: duplicate rule id");
}

TEST_CASE("list: every repeated rule id is found among thousands", "[list]") {
  // Ids that share prefixes, that are prefixes of each other and that differ in
  // their last byte, some 128 bytes long: the duplicate check's table grows
  // several times on the way (ParseList's IdSet).
  std::vector<std::string> ids;
  for (int i = 0; i < 3000; ++i) {
    std::string id = "r" + std::to_string(i);
    if (i % 7 == 0) id = std::string(120, 'x') + std::to_string(i % 10000000);
    if (i % 11 == 0) id = std::string(1 + i / 11 % 128, 'a');
    ids.push_back(id);
  }
  // (The 'a' runs repeat from i = 1408 on: make those unique with a suffix.)
  for (int i = 0; i < 3000; ++i) {
    if (i % 11 == 0 && i / 11 >= 128)
      ids[i] = "b" + std::to_string(i) + "-" + ids[i].substr(0, 8);
  }
  auto list_of = [](const std::vector<std::string>& rule_ids) {
    std::string rules = "[";
    for (size_t i = 0; i < rule_ids.size(); ++i) {
      if (i) rules += ",";
      rules += RuleJson(rule_ids[i], R"({"patterns":["x"]})");
    }
    return ListWithRules(rules + "]");
  };
  RuleList list;
  REQUIRE(Parse(list_of(ids), &list).ok());
  CHECK(list.rules.size() == ids.size());
  for (size_t repeated :
       {size_t{0}, size_t{1}, size_t{7}, size_t{11}, size_t{1500}, size_t{2999}}) {
    std::vector<std::string> with = ids;
    with.push_back(ids[repeated]);
    Status s = Parse(list_of(with));
    CHECK(s.kind() == ErrorKind::kFormat);
    CHECK(s.message() ==
          "rules[3000] (id \"" + ids[repeated] + "\"): id: duplicate rule id");
  }
}

TEST_CASE("list: limits are enforced with kind limit", "[list]") {
  ParseLimits small;
  small.max_list_bytes = 100;
  Status s = Parse(std::string(200, ' '), nullptr, small);
  CHECK(s.kind() == ErrorKind::kLimit);

  std::string nested(100000, '[');
  s = Parse(nested);
  CHECK(s.kind() == ErrorKind::kLimit);
  CHECK_THAT(s.message(), Catch::Contains("nested deeper than 16"));

  ParseLimits few;
  few.max_rules = 2;
  std::string rule = RuleJson("a", R"({"patterns":["x"]})");
  s = Parse(ListWithRules("[" + rule + "," + rule + "," + rule + "]"), nullptr, few);
  CHECK(s.kind() == ErrorKind::kLimit);
  CHECK_THAT(s.message(), Catch::Contains("more than 2 rules"));

  std::string long_pattern(2001, 'a');
  s = Parse(ListWithRules(
      "[" + RuleJson("a", R"({"patterns":[")" + long_pattern + R"("]})") + "]"));
  CHECK(s.kind() == ErrorKind::kLimit);
  CHECK_THAT(s.message(),
             Catch::Contains("rules[0] (id \"a\"): match.patterns[0]: longer than 2000"));

  std::string huge_string(9000, 'a');
  s = Parse(ListWithRules(
      "[" + RuleJson("a", R"({"similar":[")" + huge_string + R"("]})") + "]"));
  CHECK(s.kind() == ErrorKind::kLimit);

  std::string many = "[";
  for (int i = 0; i < 257; ++i)
    many += std::string(i ? "," : "") + "\"t" + std::to_string(i) + "\"";
  s = Parse(ListWithRules("[" + RuleJson("a", R"({"keywords":[{"any":)" + many + "]}]}") +
                          "]"));
  CHECK(s.kind() == ErrorKind::kLimit);
  CHECK_THAT(s.message(), Catch::Contains("more than 256 entries"));
}

TEST_CASE("list: invalid UTF-8 and NUL bytes in the text are syntax errors", "[list]") {
  std::string bad = ListWithRules("[]");
  bad.replace(bad.find("\"T\""), 3, "\"\xC3\x28\"");
  Status s = Parse(bad);
  CHECK(s.kind() == ErrorKind::kFormat);
  CHECK_THAT(s.message(), Catch::StartsWith("line 1, column"));
  std::string nul = ListWithRules("[]");
  nul[nul.find("\"T\"") + 1] = '\0';
  CHECK(Parse(nul).kind() == ErrorKind::kFormat);
}

TEST_CASE("list: review links must be https", "[list]") {
  std::string rule = RuleJson("a", R"({"patterns":["x"]})");
  rule.replace(rule.find("https://r.example/x"), 19, "javascript:alert(1)");
  Status s = Parse(ListWithRules("[" + rule + "]"));
  CHECK(s.message() == "rules[0] (id \"a\"): review.url: must be an https:// URL");
}

TEST_CASE("list: RFC 3339 dates and date-times", "[list]") {
  int64_t t = 0;
  CHECK(ParseRfc3339("1970-01-01T00:00:00Z", &t));
  CHECK(t == 0);
  CHECK(ParseRfc3339("2026-01-31T12:00:00+01:00", &t));
  CHECK(t == 1769857200);
  CHECK(ParseRfc3339("2024-02-29", &t));
  CHECK(ParseRfc3339("2026-01-31T12:00:00.250Z", &t));
  CHECK_FALSE(ParseRfc3339("2023-02-29", &t));
  CHECK_FALSE(ParseRfc3339("2026-13-01", &t));
  CHECK_FALSE(ParseRfc3339("2026-01-31T12:00:00", &t));  // no offset
  CHECK_FALSE(ParseRfc3339("31/01/2026", &t));
  CHECK_FALSE(ParseRfc3339("2026-01-31T25:00:00Z", &t));
}

}  // namespace
}  // namespace factlens
