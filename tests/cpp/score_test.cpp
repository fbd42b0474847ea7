// Tests of the score component: the default policy, reader overrides, regions,
// ordering of matches and the verdict's JSON shape.
#include "factlens/score.h"

#include <catch2/catch.hpp>

#include "nlohmann/json.hpp"

namespace factlens {
namespace {

Rule MakeRule(Rating rating, Severity severity, std::vector<std::string> regions = {}) {
  Rule r;
  r.id = std::string(RatingName(rating)) + "-" + SeverityName(severity);
  r.claim = "claim";
  r.rating = rating;
  r.severity = severity;
  r.regions = std::move(regions);
  return r;
}

TEST_CASE("score: the default policy per rating", "[score]") {
  Policy p = DefaultPolicy();
  CheckContext none;
  auto action = [&](Rating r) { return ActionFor(MakeRule(r, Severity::kLow), p, none); };
  CHECK(action(Rating::kFalse) == Action::kDemote);
  CHECK(action(Rating::kAltered) == Action::kDemote);
  CHECK(action(Rating::kPartlyFalse) == Action::kLabel);
  CHECK(action(Rating::kMissingContext) == Action::kLabel);
  CHECK(action(Rating::kSatire) == Action::kLabel);
  CHECK(action(Rating::kTrue) == Action::kNone);
}

TEST_CASE("score: severity raises the action; critical hides whatever the rating",
          "[score]") {
  Policy p = DefaultPolicy();
  CheckContext none;
  for (Severity s : {Severity::kLow, Severity::kMedium, Severity::kHigh}) {
    CHECK(ActionFor(MakeRule(Rating::kPartlyFalse, s), p, none) == Action::kLabel);
  }
  CHECK(ActionFor(MakeRule(Rating::kPartlyFalse, Severity::kCritical), p, none) ==
        Action::kHide);
  CHECK(ActionFor(MakeRule(Rating::kFalse, Severity::kCritical), p, none) ==
        Action::kHide);
}

TEST_CASE("score: hiding only in the rule's regions when the reader asks", "[score]") {
  Policy p = DefaultPolicy();
  p.severity_only_in_regions = true;
  Rule rule = MakeRule(Rating::kFalse, Severity::kCritical, {"IN", "LK"});
  CHECK(ActionFor(rule, p, {"LK", ""}) == Action::kHide);
  CHECK(ActionFor(rule, p, {"DE", ""}) == Action::kDemote);
  CHECK(ActionFor(rule, p, {"", ""}) == Action::kHide);  // unknown region: keep safe
  Rule everywhere = MakeRule(Rating::kFalse, Severity::kCritical);
  CHECK(ActionFor(everywhere, p, {"DE", ""}) == Action::kHide);
  p.severity_only_in_regions = false;
  CHECK(ActionFor(rule, p, {"DE", ""}) == Action::kHide);
}

TEST_CASE("score: policy JSON overrides fields and names bad ones", "[score]") {
  Policy p = DefaultPolicy();
  REQUIRE(ParsePolicyJson(R"({"ratings":{"satire":"none","true":"label"},)"
                          R"("severities":{"critical":"demote"},"minScore":0.5})",
                          &p)
              .ok());
  CHECK(p.by_rating[static_cast<int>(Rating::kSatire)] == Action::kNone);
  CHECK(p.by_rating[static_cast<int>(Rating::kTrue)] == Action::kLabel);
  CHECK(p.by_rating[static_cast<int>(Rating::kFalse)] == Action::kDemote);
  CHECK(p.by_severity[static_cast<int>(Severity::kCritical)] == Action::kDemote);
  CHECK(p.min_score == 0.5);

  Policy q = DefaultPolicy();
  Status s = ParsePolicyJson(R"({"ratings":{"satire":"delete"}})", &q);
  CHECK(s.kind() == ErrorKind::kFormat);
  CHECK_THAT(s.message(), Catch::StartsWith("policy.ratings.satire: must be one of"));
  CHECK(ParsePolicyJson(R"({"ratings":{"fals":"none"}})", &q).message() ==
        "policy.ratings.fals: unknown rating");
  CHECK(ParsePolicyJson(R"({"minScore":2})", &q).kind() == ErrorKind::kFormat);
  CHECK(ParsePolicyJson(R"({"colour":"red"})", &q).message() ==
        "policy: unknown field \"colour\"");
  CHECK(ParsePolicyJson("{", &q).kind() == ErrorKind::kFormat);
  // A failed parse leaves the policy untouched.
  CHECK(q.by_rating[static_cast<int>(Rating::kSatire)] == Action::kLabel);
}

TEST_CASE("score: policy JSON round-trips", "[score]") {
  Policy p = DefaultPolicy();
  p.severity_only_in_regions = true;
  p.by_rating[static_cast<int>(Rating::kAltered)] = Action::kHide;
  Policy q = DefaultPolicy();
  REQUIRE(ParsePolicyJson(PolicyToJson(p), &q).ok());
  CHECK(PolicyToJson(q) == PolicyToJson(p));
}

TEST_CASE("score: the verdict takes the strongest match; ties by severity then score",
          "[score]") {
  Rule satire = MakeRule(Rating::kSatire, Severity::kLow);
  Rule fals = MakeRule(Rating::kFalse, Severity::kLow);
  Rule fals_high = MakeRule(Rating::kFalse, Severity::kHigh);
  std::vector<ExplainedMatch> matches(3);
  matches[0].rule = &satire;
  matches[0].score = 1.0;
  matches[1].rule = &fals;
  matches[1].score = 0.9;
  matches[2].rule = &fals_high;
  matches[2].score = 0.8;
  Verdict v = Decide(matches, DefaultPolicy(), {});
  CHECK(v.action == Action::kDemote);
  CHECK(v.top == &fals_high);
  CHECK(v.score == 0.8);
  REQUIRE(v.matches.size() == 3);
  CHECK(v.matches[1].rule == &fals);
  CHECK(v.matches[2].rule == &satire);
  CHECK(v.matches[2].action == Action::kLabel);
}

TEST_CASE("score: matches under minScore are dropped", "[score]") {
  Rule fals = MakeRule(Rating::kFalse, Severity::kLow);
  std::vector<ExplainedMatch> matches(1);
  matches[0].rule = &fals;
  matches[0].score = 0.4;
  Policy p = DefaultPolicy();
  p.min_score = 0.5;
  Verdict v = Decide(matches, p, {});
  CHECK(v.action == Action::kNone);
  CHECK(v.matches.empty());
  CHECK(v.top == nullptr);
}

TEST_CASE("score: verdict JSON has the API's shape with UTF-16 spans", "[score]") {
  Rule r = MakeRule(Rating::kAltered, Severity::kMedium);
  r.review = {"https://r.example/a", "Title", "Checker", "2025-01-01"};
  std::vector<ExplainedMatch> matches(1);
  matches[0].list_id = "l";
  matches[0].rule = &r;
  matches[0].kind = MatchKind::kKeywords;
  matches[0].score = 0.8;
  // "é🙂x": é is 2 bytes / 1 unit, the emoji 4 bytes / 2 units.
  std::string text = "\xC3\xA9\xF0\x9F\x99\x82x";
  matches[0].spans = {{6, 7}};
  auto j =
      nlohmann::json::parse(VerdictToJson(Decide(matches, DefaultPolicy(), {}), text));
  CHECK(j["action"] == "demote");
  CHECK(j["rating"] == "altered");
  CHECK(j["severity"] == "medium");
  CHECK(j["stance"] == "repeats");  // no evidence of refutation was given
  CHECK(j["score"] == 0.8);
  REQUIRE(j["matches"].size() == 1);
  const auto& m = j["matches"][0];
  CHECK(m["listId"] == "l");
  CHECK(m["ruleId"] == r.id);
  CHECK(m["kind"] == "keywords");
  CHECK(m["spans"] == nlohmann::json::parse("[[3,4]]"));
  CHECK(m["review"]["url"] == "https://r.example/a");
  CHECK(m["claim"] == "claim");

  auto empty = nlohmann::json::parse(VerdictToJson(Decide({}, DefaultPolicy(), {}), ""));
  CHECK(empty["action"] == "none");
  CHECK(empty["rating"].is_null());
  CHECK(empty["matches"].empty());
}

}  // namespace
}  // namespace factlens

namespace factlens {
namespace {

TEST_CASE("score: the stance caps the action; the caps are policy data", "[score]") {
  Rule r = MakeRule(Rating::kFalse, Severity::kCritical);
  auto decide = [&](Stance stance, const Policy& policy) {
    std::vector<ExplainedMatch> matches(1);
    matches[0].rule = &r;
    matches[0].score = 0.9;
    matches[0].stance = stance;
    return Decide(matches, policy, {});
  };
  Policy p = DefaultPolicy();
  CHECK(decide(Stance::kRepeats, p).action == Action::kHide);
  CHECK(decide(Stance::kUnclear, p).action == Action::kLabel);
  Verdict debunking = decide(Stance::kDebunks, p);
  CHECK(debunking.action == Action::kNone);
  CHECK(debunking.stance == Stance::kDebunks);
  CHECK(debunking.top == &r);  // still explained, just not acted on

  REQUIRE(
      ParsePolicyJson(R"({"stances":{"debunks":"label","unclear":"demote"}})", &p).ok());
  CHECK(decide(Stance::kDebunks, p).action == Action::kLabel);
  CHECK(decide(Stance::kUnclear, p).action == Action::kDemote);
  CHECK(PolicyToJson(p).find(R"("stances":{"debunks":"label","repeats":"hide",)"
                             R"("unclear":"demote"})") != std::string::npos);
  Policy q = DefaultPolicy();
  CHECK(ParsePolicyJson(R"({"stances":{"agrees":"none"}})", &q).message() ==
        "policy.stances.agrees: unknown stance (repeats, debunks, unclear)");
  CHECK(ParsePolicyJson(R"({"stances":{"debunks":"ignore"}})", &q).message() ==
        "policy.stances.debunks: must be one of \"none\", \"label\", \"demote\", "
        "\"hide\"");
  CHECK(ParsePolicyJson(R"({"stances":[]})", &q).kind() == ErrorKind::kFormat);
}

TEST_CASE("score: a verdict without matches has one text, and only such a verdict",
          "[score]") {
  const std::string nothing =
      R"({"action":"none","matches":[],"rating":null,"score":0.0,"severity":null,)"
      R"("stance":"unclear"})";
  CHECK(VerdictToJson(Verdict(), "any post") == nothing);
  CHECK(VerdictToJson(Verdict(), "") == nothing);
  CHECK(VerdictToJson(Decide({}, Policy(), CheckContext()), "post") == nothing);
  // A field that differs from a plain "none" is written as it is.
  Verdict v;
  v.score = 0.25;
  CHECK(nlohmann::json::parse(VerdictToJson(v, "p"))["score"] == 0.25);
  v = Verdict();
  v.score = -0.0;
  CHECK(VerdictToJson(v, "p").find(R"("score":-0.0)") != std::string::npos);
  v = Verdict();
  v.action = Action::kLabel;
  CHECK(nlohmann::json::parse(VerdictToJson(v, "p"))["action"] == "label");
  v = Verdict();
  v.stance = Stance::kDebunks;
  const Rule rule = MakeRule(Rating::kFalse, Severity::kLow);
  v.top = &rule;
  const nlohmann::json top = nlohmann::json::parse(VerdictToJson(v, "p"));
  CHECK(top["rating"] == "false");
  CHECK(top["stance"] == "debunks");
}

}  // namespace
}  // namespace factlens
