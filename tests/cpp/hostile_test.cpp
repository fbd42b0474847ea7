// Hostile inputs: each gives a clear error or is handled at a bounded cost, never a
// crash or a hang. (Run under ASan + UBSan by scripts/test-sanitizers.sh.)
#include <catch2/catch.hpp>
#include <string>

#include "factlens/engine.h"
#include "factlens/lint.h"
#include "factlens/verify.h"
#include "nlohmann/json.hpp"
#include "test_util.h"

namespace factlens {
namespace {

using testing::ListWithRules;
using testing::RuleJson;

Status Load(Engine& engine, const std::string& text) {
  LoadOptions o;
  o.allow_unsigned = true;
  return engine.LoadList(text, o, nullptr);
}

TEST_CASE("hostile: JSON nested 100k levels deep is refused at depth 16", "[hostile]") {
  Engine engine;
  for (const char* open : {"[", "{\"a\":"}) {
    std::string text;
    for (int i = 0; i < 100000; ++i) text += open;
    Status s = Load(engine, text);
    CHECK(s.kind() == ErrorKind::kLimit);
    CHECK_THAT(s.message(), Catch::Contains("nested deeper than 16 levels"));
  }
}

TEST_CASE("hostile: a list over 64 MiB is refused before it is read", "[hostile]") {
  Engine engine;
  std::string huge(65u << 20, ' ');
  Status s = Load(engine, huge);
  CHECK(s.kind() == ErrorKind::kLimit);
  CHECK_THAT(s.message(), Catch::Contains("exceeds the limit of 67108864"));
}

TEST_CASE("hostile: a 50 MB list of a million rules stops at the rule limit",
          "[hostile]") {
  std::string rules = "[";
  rules.reserve(52u << 20);
  const std::string rule = RuleJson("r", R"({"keywords":[{"all":["x"]}]})");
  // A million tiny rule objects: the builder must stop counting at 200,001,
  // without building the rest.
  for (int i = 0; i < 1000000; ++i) rules += i ? ",{}" : "{}";
  rules += "]";
  Engine engine;
  Status s = Load(engine, ListWithRules(rules));
  CHECK(s.kind() == ErrorKind::kLimit);
  CHECK_THAT(s.message(), Catch::Contains("more than 200000 rules"));
  // 50 MB of real rules: over the rule limit as well, refused the same way.
  std::string big = "[";
  for (int i = 0; big.size() < (50u << 20); ++i) {
    big += (i ? "," : "") +
           RuleJson("r" + std::to_string(i), R"({"keywords":[{"all":["x"]}]})");
  }
  big += "]";
  s = Load(engine, ListWithRules(big));
  CHECK(s.kind() == ErrorKind::kLimit);
  CHECK(engine.Lists().empty());
}

TEST_CASE("hostile: 50 MB of tiny values in an x- field stop at the value budget",
          "[hostile]") {
  // Unchecked extension fields can hold any JSON: 25M zeros would need about 1 GB
  // while parsed. The builder counts every value and stops at 4,000,001.
  std::string zeros = "[0";
  zeros.reserve(50u << 20);
  for (int i = 1; i < (25 << 20); ++i) zeros += ",0";
  zeros += "]";
  std::string text = ListWithRules(
      "[" +
      RuleJson("r", R"({"patterns":["hoax"]})", "false", "low", ",\"x-big\":" + zeros) +
      "]");
  Engine engine;
  Status s = Load(engine, text);
  CHECK(s.kind() == ErrorKind::kLimit);
  CHECK_THAT(s.message(), Catch::StartsWith("rules[0].x-big[3999"));
  CHECK_THAT(s.message(), Catch::Contains("more than 4000000 JSON values"));
  // Lint reports the same limit, located, and indexes positions only up to the
  // budget (a lower one here, to keep the test quick) rather than 25M paths.
  LintOptions lint;
  lint.limits.max_values = 1000;
  LintReport report = LintList(text, lint);
  REQUIRE(report.errors == 1);
  CHECK(report.findings[0].code == "limit");
  CHECK_THAT(report.findings[0].message, Catch::Contains("more than 1000 JSON values"));
  CHECK(report.findings[0].where.line == 1);
}

TEST_CASE("hostile: duplicate keys are refused where they are", "[hostile]") {
  Engine engine;
  // A key twice in a rule, after a nested object: the path is the rule's, not the
  // previous member's.
  Status s = Load(engine, ListWithRules("[" +
                                        RuleJson("r", R"({"patterns":["hoax"]})", "false",
                                                 "low", R"(,"rating":"satire")") +
                                        "]"));
  CHECK(s.kind() == ErrorKind::kFormat);
  CHECK(s.message() == "rules[0]: duplicate key \"rating\"");
  // At the top level, and in an object inside an extension field.
  s = Load(engine, ListWithRules("[],\"rules\":[]"));
  CHECK(s.message() == "duplicate key \"rules\"");
  s = Load(engine, ListWithRules("[" +
                                 RuleJson("r", R"({"patterns":["hoax"]})", "false", "low",
                                          R"(,"x-a":{"k":{"b":1},"k":2})") +
                                 "]"));
  CHECK(s.message() == "rules[0].x-a: duplicate key \"k\"");
  // In an object of many members (searched through a set past 16 members), as the
  // first and as the last: 100k distinct members load, one repeated does not.
  std::string many = "{";
  for (int i = 0; i < 100000; ++i)
    many += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":1";
  for (const char* repeat : {"k0", "k99999", "k17"}) {
    s = Load(engine,
             ListWithRules("[" +
                           RuleJson("r", R"({"patterns":["hoax"]})", "false", "low",
                                    ",\"x-a\":" + many + ",\"" + repeat + "\":2}") +
                           "]"));
    CHECK(s.message() == "rules[0].x-a: duplicate key \"" + std::string(repeat) + "\"");
  }
  CHECK(engine.Lists().empty());
  s = Load(engine, ListWithRules("[" +
                                 RuleJson("r", R"({"patterns":["hoax"]})", "false", "low",
                                          ",\"x-a\":" + many + "}") +
                                 "]"));
  CHECK(s.ok());
}

TEST_CASE("hostile: of several unknown fields, the first in byte order is named",
          "[hostile]") {
  // Whatever order the author wrote them in: the message must not depend on it.
  for (const char* extra :
       {R"(,"zeta":1,"Beta":2,"alpha":3)", R"(,"alpha":3,"zeta":1,"Beta":2)",
        R"(,"Beta":2,"alpha":3,"zeta":1)"}) {
    Engine engine;
    Status s = Load(engine, ListWithRules("[" +
                                          RuleJson("r", R"({"patterns":["hoax"]})",
                                                   "false", "low", extra) +
                                          "]"));
    CHECK(s.message() == "rules[0] (id \"r\"): Beta: unknown field");
  }
}

TEST_CASE("hostile: lint of 200,000 rules locates 400,000 findings in linear time",
          "[hostile]") {
  // Every rule lacks examples: two warnings each, each located by line and column.
  // Counting lines from the start for each one took minutes on a 37 MB list.
  std::string rules = "[";
  for (int i = 0; i < 200000; ++i) {
    rules += (i ? ",\n" : "\n") +
             RuleJson("r" + std::to_string(i),
                      R"({"patterns":["hoax)" + std::to_string(i) + R"(x"]})");
  }
  LintReport report = LintList(ListWithRules(rules + "]"), LintOptions());
  CHECK(report.errors == 0);
  size_t no_examples = 0;
  TextPosition last;
  for (const LintFinding& f : report.findings) {
    if (f.code != "no-examples") continue;
    ++no_examples;
    last = f.where;
  }
  CHECK(no_examples == 200000);
  CHECK(last.line == 200001);  // rule i starts on line i + 2
  CHECK(last.column == 1);
}

TEST_CASE("hostile: a pattern of 100k characters is refused", "[hostile]") {
  Engine engine;
  std::string pattern(100000, 'a');
  Status s = Load(
      engine,
      ListWithRules("[" + RuleJson("p", R"({"patterns":[")" + pattern + R"("]})") + "]"));
  CHECK(s.kind() == ErrorKind::kLimit);
}

TEST_CASE("hostile: patterns that would blow up RE2's memory are refused", "[hostile]") {
  for (const char* pattern : {R"(\\pL{1000})", R"(\\p{Greek}{500}\\pL{500})",
                              R"((\\pL{100}){10})", R"(((((a{10}){10}){10}){10}))"}) {
    Engine engine;
    INFO(pattern);
    Status s = Load(engine, ListWithRules("[" +
                                          RuleJson("p", std::string(R"({"patterns":[")") +
                                                            pattern + R"("]})") +
                                          "]"));
    CHECK_FALSE(s.ok());
    CHECK((s.kind() == ErrorKind::kLimit || s.kind() == ErrorKind::kFormat));
    CHECK(engine.Lists().empty());
  }
}

TEST_CASE("hostile: many large patterns stop at the list's compile budget", "[hostile]") {
  // Each \pL{60} is within RE2's budget (140k instructions, 0.3 s to compile),
  // but 2,560 of them would take minutes and gigabytes.
  std::string rules = "[";
  for (int r = 0; r < 10; ++r) {
    std::string patterns;
    for (int p = 0; p < 256; ++p) {
      patterns += std::string(p ? "," : "") + "\"\\\\pL{60}" + std::to_string(r) + "x" +
                  std::to_string(p) + "\"";
    }
    rules += (r ? "," : "") +
             RuleJson("r" + std::to_string(r), R"({"patterns":[)" + patterns + "]}");
  }
  Engine engine;
  Status s = Load(engine, ListWithRules(rules + "]"));
  CHECK(s.kind() == ErrorKind::kLimit);
  CHECK_THAT(s.message(), Catch::StartsWith("rules[0] (id \"r0\"): match.patterns[7]: "));
  CHECK_THAT(s.message(), Catch::Contains("more than 1000000 RE2 instructions together"));
  CHECK(engine.Lists().empty());
  // The same pattern in 20 rules is one program, counted once: it loads.
  std::string same = "[";
  for (int r = 0; r < 20; ++r) {
    same += (r ? "," : "") +
            RuleJson("r" + std::to_string(r), R"({"patterns":["\\pL{60}x"]})");
  }
  CHECK(Load(engine, ListWithRules(same + "]")).ok());
}

TEST_CASE("hostile: Unicode classes in patterns stop at their budget", "[hostile]") {
  // RE2 takes 0.3-2 ms to parse each \pL: 3M of them in a 60 MB list would take an
  // hour before any compile budget is reached. The 4,001st is refused.
  std::string rules = "[";
  for (int r = 0; r < 16; ++r) {
    std::string patterns;
    for (int p = 0; p < 256; ++p) {
      patterns +=
          std::string(p ? "," : "") + "\"\\\\pN\\\\p{Lu}x" + std::to_string(p) + "\"";
    }
    rules += (r ? "," : "") +
             RuleJson("r" + std::to_string(r), R"({"patterns":[)" + patterns + "]}");
  }
  Engine engine;
  Status s = Load(engine, ListWithRules(rules + "]"));
  CHECK(s.kind() == ErrorKind::kLimit);
  CHECK_THAT(s.message(),
             Catch::StartsWith("rules[7] (id \"r7\"): match.patterns[208]: "));
  CHECK_THAT(s.message(), Catch::Contains("Unicode classes (\\p) more than 4000 times"));
  // Lint stops there too, rather than checking every pattern's syntax again.
  LintReport report = LintList(ListWithRules(rules + "]"), LintOptions());
  REQUIRE(report.errors == 1);
  CHECK(report.findings[0].code == "limit");
  // An escaped backslash before p is no class: 2 * 4096 of them load.
  std::string escaped = "[";
  for (int r = 0; r < 16; ++r) {
    std::string patterns;
    for (int p = 0; p < 256; ++p) {
      patterns +=
          std::string(p ? "," : "") + "\"\\\\\\\\pN\\\\\\\\px" + std::to_string(p) + "\"";
    }
    escaped += (r ? "," : "") +
               RuleJson("r" + std::to_string(r), R"({"patterns":[)" + patterns + "]}");
  }
  CHECK(Load(engine, ListWithRules(escaped + "]")).ok());
}

TEST_CASE("hostile: invalid UTF-8 and NUL bytes", "[hostile]") {
  Engine engine;
  REQUIRE(Load(engine,
               ListWithRules("[" + RuleJson("r", R"({"patterns":["microchip"]})") + "]"))
              .ok());
  // In a post: separators, never a crash; matching goes on around them.
  std::string post = "\xFF\xFEmicrochip\xC0\x80\xED\xA0\x80 \xF4\x90\x80\x80";
  post += std::string("\0microchip\0", 11);
  Verdict v = engine.Check(post, {});
  CHECK(v.action == Action::kDemote);
  for (const ByteRange& s : v.matches[0].spans)
    CHECK(post.substr(s.begin, s.end - s.begin) == "microchip");
  CHECK_FALSE(nlohmann::json::parse(VerdictToJson(v, post), nullptr, false)
                  .is_discarded());  // the JSON out is valid
  // In a list, a key or a signature: refused with a message.
  std::string list =
      ListWithRules("[" + RuleJson("r", R"({"patterns":["h\xFFoax"]})") + "]");
  CHECK(Load(engine, list).kind() == ErrorKind::kFormat);
  std::string with_nul = ListWithRules("[]");
  with_nul.insert(10, std::string(1, '\0'));
  CHECK(Load(engine, with_nul).kind() == ErrorKind::kFormat);
  PublicKey pub;
  CHECK(ParsePublicKey("untrusted comment: \xFF\nRWQ\xFF", &pub).kind() ==
        ErrorKind::kKey);
  Signature sig;
  CHECK(ParseSignature(std::string("a\0b\nc\nd\ne", 9), &sig).kind() ==
        ErrorKind::kSignature);
}

TEST_CASE("hostile: numbers out of range are format errors", "[hostile]") {
  Engine engine;
  std::string base = ListWithRules("[]", 1);
  for (const char* version : {"1e400", "18446744073709551616", "-1", "9007199254740992",
                              "1.5", "-0.0", "NaN"}) {
    INFO(version);
    std::string text = base;
    text.replace(text.find("\"version\":1"), 11, std::string("\"version\":") + version);
    CHECK(Load(engine, text).kind() == ErrorKind::kFormat);
  }
  std::string within = ListWithRules(
      "[" + RuleJson("r", R"({"keywords":[{"all":["x"],"within":1e308}]})") + "]");
  CHECK(Load(engine, within).kind() == ErrorKind::kFormat);
}

TEST_CASE("hostile: a post of 10 MB and one of a million combining marks", "[hostile]") {
  Engine engine;
  REQUIRE(Load(engine,
               ListWithRules(
                   "[" +
                   RuleJson("r", R"({"keywords":[{"all":["cafe","hoax"],"within":3}]})") +
                   "]"))
              .ok());
  std::string big;
  for (int i = 0; big.size() < (10u << 20); ++i) big += "lorem ipsum dolor sit amet ";
  CHECK(engine.Check(big, {}).action == Action::kNone);
  std::string marks = "cafe";
  for (int i = 0; i < 1000000; ++i) marks += "\xCC\x81";  // U+0301
  marks += " hoax";
  // Truncated at 1 MiB, inside the marks: the keyword pair is cut off.
  CHECK(engine.Check(marks, {}).action == Action::kNone);
  std::string few = "cafe";
  for (int i = 0; i < 100000; ++i) few += "\xCC\x81";
  few += " hoax";
  CHECK(engine.Check(few, {}).action == Action::kDemote);
}

TEST_CASE("hostile: HTML and script payloads in every field stay inert data",
          "[hostile]") {
  const std::string x = "<img src=x onerror=alert(1)><script>alert(2)</script>";
  nlohmann::json rule = {
      {"id", "xss"},
      {"claim", x},
      {"rating", "false"},
      {"severity", "low"},
      {"match",
       {{"patterns", {"alert"}}, {"keywords", {{{"all", {x}}}}}, {"similar", {x}}}},
      {"review",
       {{"url", "https://r.example/\"><script>"},
        {"title", x},
        {"publisher", x},
        {"date", "2025-01-01"}}},
      {"examples", {{"match", {x}}, {"no_match", {x}}}},
      {"x-note", x}};
  std::string text = ListWithRules("[" + rule.dump() + "]");
  nlohmann::json list = nlohmann::json::parse(text);
  list["list"]["name"] = x;
  list["list"]["publisher"]["name"] = x;
  list["list"]["description"] = x;
  Engine engine;
  LoadedListInfo info;
  LoadOptions o;
  o.allow_unsigned = true;
  REQUIRE(engine.LoadList(list.dump(), o, &info).ok());
  CHECK(info.info.name == x);  // kept verbatim: it is the UI's job to insert text only
  Verdict v = engine.Check(x, {});
  REQUIRE(v.action == Action::kDemote);
  nlohmann::json out = nlohmann::json::parse(VerdictToJson(v, x));
  CHECK(out["matches"][0]["claim"] == x);
  // But a review link that is not https never loads.
  for (const char* bad :
       {"javascript:alert(1)", "data:text/html,<script>", "http://r.example/",
        "JAVASCRIPT:alert(1)", " https://r.example/", "//r.example/"}) {
    list["rules"][0]["review"]["url"] = bad;
    INFO(bad);
    CHECK(engine.LoadList(list.dump(), o, nullptr).kind() == ErrorKind::kFormat);
  }
}

}  // namespace
}  // namespace factlens
