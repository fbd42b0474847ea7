// Tests of the engine: the shared cases (also run against the wasm build by
// tests/js/engine.test.mjs), whole-or-nothing loading, the demo list's examples.
#include "factlens/engine.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "test_util.h"

namespace factlens {
namespace {

using nlohmann::json;
using testing::ListWithRules;
using testing::ReadJson;
using testing::ReadSource;
using testing::RuleJson;

LoadOptions Unsigned() {
  LoadOptions o;
  o.allow_unsigned = true;
  return o;
}

TEST_CASE("engine: the shared cases give the expected verdicts", "[engine]") {
  json cases = ReadJson("tests/fixtures/cases/cases.json");
  REQUIRE(cases.is_array());
  REQUIRE(cases.size() >= 15);
  std::string list = ReadSource("tests/fixtures/cases/list.json");
  for (const json& c : cases) {
    DYNAMIC_SECTION(c["name"].get<std::string>()) {
      Engine engine;
      REQUIRE(engine.LoadList(list, Unsigned(), nullptr).ok());
      if (c.contains("policy")) {
        Policy p = DefaultPolicy();
        REQUIRE(ParsePolicyJson(c["policy"].dump(), &p).ok());
        engine.SetPolicy(p);
      }
      CheckContext context;
      if (c.contains("context")) context.region = c["context"].value("region", "");
      std::string text = c["text"];
      json got = json::parse(VerdictToJson(engine.Check(text, context), text));
      const json& want = c["expect"];
      INFO(got.dump());
      CHECK(got["action"] == want["action"]);
      for (const char* field : {"rating", "severity"}) {
        if (want.contains(field)) CHECK(got[field] == want[field]);
      }
      std::vector<std::string> ids, kinds;
      for (const json& m : got["matches"]) {
        ids.push_back(m["ruleId"]);
        kinds.push_back(m["kind"]);
      }
      CHECK(ids == want["ruleIds"].get<std::vector<std::string>>());
      if (want.contains("kinds"))
        CHECK(kinds == want["kinds"].get<std::vector<std::string>>());
      if (want.contains("spans")) {
        for (const json& m : got["matches"]) {
          if (want["spans"].contains(m["ruleId"].get<std::string>())) {
            CHECK(m["spans"] == want["spans"][m["ruleId"].get<std::string>()]);
          }
        }
      }
    }
  }
}

TEST_CASE("engine: every example of the demo list behaves as written", "[engine]") {
  Engine engine;
  LoadedListInfo info;
  Status s = engine.LoadList(ReadSource("rules/examples/demo.json"), Unsigned(), &info);
  INFO(s.message());
  REQUIRE(s.ok());
  RuleList list;
  REQUIRE(ParseList(ReadSource("rules/examples/demo.json"), ParseLimits(), &list).ok());
  int checked = 0;
  for (const Rule& rule : list.rules) {
    // Similarity rules are matched by the similarity matcher, not built yet.
    if (rule.patterns.empty() && rule.keywords.empty() && rule.urls.empty()) continue;
    CHECK_FALSE(rule.examples_match.empty());
    CHECK_FALSE(rule.examples_no_match.empty());
    auto matched = [&](const std::string& text) {
      for (const ExplainedMatch& m : engine.Check(text, {}).matches) {
        if (m.rule->id == rule.id) return true;
      }
      return false;
    };
    for (const std::string& text : rule.examples_match) {
      INFO("rule " << rule.id << " should match: " << text);
      CHECK(matched(text));
      ++checked;
    }
    for (const std::string& text : rule.examples_no_match) {
      INFO("rule " << rule.id << " should not match: " << text);
      CHECK_FALSE(matched(text));
      ++checked;
    }
  }
  CHECK(checked >= 40);
}

TEST_CASE("engine: unsigned lists need allowUnsigned; signatures are not yet supported",
          "[engine]") {
  Engine engine;
  std::string text = ListWithRules("[" + RuleJson("a", R"({"patterns":["x"]})") + "]");
  CHECK(engine.LoadList(text, LoadOptions(), nullptr).kind() == ErrorKind::kSignature);
  LoadOptions signed_options;
  signed_options.signature = "untrusted comment: x\nRWQ...";
  signed_options.public_key = "RWQ...";
  CHECK(engine.LoadList(text, signed_options, nullptr).kind() == ErrorKind::kUnsupported);
  CHECK(engine.Lists().empty());
}

TEST_CASE("engine: a failed load leaves the engine exactly as it was", "[engine]") {
  Engine engine;
  std::string v1 =
      ListWithRules("[" + RuleJson("a", R"({"patterns":["alpha"]})") + "]", 1);
  REQUIRE(engine.LoadList(v1, Unsigned(), nullptr).ok());
  // The broken rule comes after a good one: nothing of the new version may stay.
  std::string bad = ListWithRules("[" + RuleJson("b", R"({"patterns":["beta"]})") + "," +
                                      RuleJson("c", R"({"patterns":["(gamma"]})") + "]",
                                  2);
  Status s = engine.LoadList(bad, Unsigned(), nullptr);
  CHECK(s.kind() == ErrorKind::kFormat);
  REQUIRE(engine.Lists().size() == 1);
  CHECK(engine.Lists()[0].info.version == 1);
  CHECK(engine.Check("alpha", {}).action == Action::kDemote);
  CHECK(engine.Check("beta", {}).action == Action::kNone);
  // An oversized pattern fails at compile time, also whole.
  std::string huge =
      ListWithRules("[" + RuleJson("b", R"({"patterns":["beta"]})") + "," +
                        RuleJson("c", R"({"patterns":["\\pL{1000}"]})") + "]",
                    2);
  CHECK(engine.LoadList(huge, Unsigned(), nullptr).kind() == ErrorKind::kLimit);
  CHECK(engine.Check("beta", {}).action == Action::kNone);
}

TEST_CASE("engine: a newer version replaces the list; an older one is a rollback",
          "[engine]") {
  Engine engine;
  LoadOptions o = Unsigned();
  REQUIRE(engine
              .LoadList(ListWithRules(
                            "[" + RuleJson("a", R"({"patterns":["alpha"]})") + "]", 5),
                        o, nullptr)
              .ok());
  o.last_version = 5;
  Status s = engine.LoadList(
      ListWithRules("[" + RuleJson("a", R"({"patterns":["beta"]})") + "]", 4), o,
      nullptr);
  CHECK(s.kind() == ErrorKind::kRollback);
  CHECK_THAT(s.message(),
             Catch::Contains("4 is older than the version already accepted (5)"));
  LoadedListInfo info;
  REQUIRE(engine
              .LoadList(
                  ListWithRules("[" + RuleJson("a", R"({"patterns":["beta"]})") + "]", 6),
                  o, &info)
              .ok());
  CHECK(info.info.version == 6);
  CHECK(info.rule_count == 1);
  REQUIRE(engine.Lists().size() == 1);
  CHECK(engine.Check("alpha", {}).action == Action::kNone);
  CHECK(engine.Check("beta", {}).action == Action::kDemote);
}

TEST_CASE("engine: lists unload by id", "[engine]") {
  Engine engine;
  REQUIRE(
      engine
          .LoadList(ListWithRules("[" + RuleJson("a", R"({"patterns":["alpha"]})") + "]"),
                    Unsigned(), nullptr)
          .ok());
  CHECK(engine.UnloadList("nope").kind() == ErrorKind::kNotFound);
  CHECK(engine.UnloadList("t").ok());
  CHECK(engine.Lists().empty());
  CHECK(engine.Check("alpha", {}).action == Action::kNone);
}

TEST_CASE("engine: a 10 MB post is checked on its first megabyte", "[engine]") {
  Engine engine;
  REQUIRE(engine
              .LoadList(
                  ListWithRules("[" + RuleJson("a", R"({"patterns":["needle"]})") + "]"),
                  Unsigned(), nullptr)
              .ok());
  std::string head = "needle " + std::string(10u << 20, 'x');
  CHECK(engine.Check(head, {}).action == Action::kDemote);
  std::string tail = std::string(10u << 20, 'x') + " needle";
  CHECK(engine.Check(tail, {}).action == Action::kNone);
}

}  // namespace
}  // namespace factlens
