// Copyright factlens authors.
#include "factlens/score.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "nlohmann/json.hpp"

namespace factlens {
namespace {

using nlohmann::json;

// Parses without exceptions, which the wasm build does not have.
Status ParseJson(std::string_view text, json* out) {
  *out = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) return Status(ErrorKind::kFormat, "policy: not valid JSON");
  return Status::Ok();
}

}  // namespace

const char* ActionName(Action action) {
  switch (action) {
    case Action::kNone:
      return "none";
    case Action::kLabel:
      return "label";
    case Action::kDemote:
      return "demote";
    case Action::kHide:
      return "hide";
  }
  return "none";
}

bool ParseAction(std::string_view name, Action* out) {
  for (Action a : {Action::kNone, Action::kLabel, Action::kDemote, Action::kHide}) {
    if (name == ActionName(a)) {
      *out = a;
      return true;
    }
  }
  return false;
}

Policy DefaultPolicy() {
  Policy p;
  p.by_rating[static_cast<int>(Rating::kFalse)] = Action::kDemote;
  p.by_rating[static_cast<int>(Rating::kAltered)] = Action::kDemote;
  p.by_rating[static_cast<int>(Rating::kPartlyFalse)] = Action::kLabel;
  p.by_rating[static_cast<int>(Rating::kMissingContext)] = Action::kLabel;
  p.by_rating[static_cast<int>(Rating::kSatire)] = Action::kLabel;
  p.by_rating[static_cast<int>(Rating::kTrue)] = Action::kNone;
  p.by_severity[static_cast<int>(Severity::kLow)] = Action::kNone;
  p.by_severity[static_cast<int>(Severity::kMedium)] = Action::kNone;
  p.by_severity[static_cast<int>(Severity::kHigh)] = Action::kNone;
  p.by_severity[static_cast<int>(Severity::kCritical)] = Action::kHide;
  p.max_by_stance[static_cast<int>(Stance::kRepeats)] = Action::kHide;
  p.max_by_stance[static_cast<int>(Stance::kDebunks)] = Action::kNone;
  p.max_by_stance[static_cast<int>(Stance::kUnclear)] = Action::kLabel;
  return p;
}

Status ParsePolicyJson(std::string_view text, Policy* policy) {
  json j;
  Status s = ParseJson(text, &j);
  if (!s.ok()) return s;
  if (!j.is_object()) return Status(ErrorKind::kFormat, "policy: must be an object");
  Policy p = *policy;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (key == "ratings" || key == "severities") {
      if (!v.is_object())
        return Status(ErrorKind::kFormat, "policy." + key + ": must be an object");
      for (auto e = v.begin(); e != v.end(); ++e) {
        std::string where = "policy." + key + "." + e.key();
        Action action;
        if (!e.value().is_string() ||
            !ParseAction(e.value().get_ref<const std::string&>(), &action)) {
          return Status(
              ErrorKind::kFormat,
              where + ": must be one of \"none\", \"label\", \"demote\", \"hide\"");
        }
        if (key == "ratings") {
          Rating r;
          if (!ParseRating(e.key(), &r)) {
            return Status(ErrorKind::kFormat, where + ": unknown rating");
          }
          p.by_rating[static_cast<int>(r)] = action;
        } else {
          Severity sv;
          if (!ParseSeverity(e.key(), &sv)) {
            return Status(ErrorKind::kFormat, where + ": unknown severity");
          }
          p.by_severity[static_cast<int>(sv)] = action;
        }
      }
    } else if (key == "stances") {
      if (!v.is_object())
        return Status(ErrorKind::kFormat, "policy.stances: must be an object");
      for (auto e = v.begin(); e != v.end(); ++e) {
        std::string where = "policy.stances." + e.key();
        Stance stance;
        if (!ParseStance(e.key(), &stance)) {
          return Status(ErrorKind::kFormat,
                        where + ": unknown stance (repeats, debunks, unclear)");
        }
        Action action;
        if (!e.value().is_string() ||
            !ParseAction(e.value().get_ref<const std::string&>(), &action)) {
          return Status(
              ErrorKind::kFormat,
              where + ": must be one of \"none\", \"label\", \"demote\", \"hide\"");
        }
        p.max_by_stance[static_cast<int>(stance)] = action;
      }
    } else if (key == "severityOnlyInRegions") {
      if (!v.is_boolean()) {
        return Status(ErrorKind::kFormat,
                      "policy.severityOnlyInRegions: must be true or false");
      }
      p.severity_only_in_regions = v.get<bool>();
    } else if (key == "minScore") {
      if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1) {
        return Status(ErrorKind::kFormat,
                      "policy.minScore: must be a number from 0 to 1");
      }
      p.min_score = v.get<double>();
    } else {
      return Status(ErrorKind::kFormat, "policy: unknown field \"" + key + "\"");
    }
  }
  *policy = p;
  return Status::Ok();
}

std::string PolicyToJson(const Policy& policy) {
  json j;
  for (int i = 0; i < kRatingCount; ++i) {
    j["ratings"][RatingName(static_cast<Rating>(i))] = ActionName(policy.by_rating[i]);
  }
  for (int i = 0; i < kSeverityCount; ++i) {
    j["severities"][SeverityName(static_cast<Severity>(i))] =
        ActionName(policy.by_severity[i]);
  }
  for (int i = 0; i < kStanceCount; ++i) {
    j["stances"][StanceName(static_cast<Stance>(i))] =
        ActionName(policy.max_by_stance[i]);
  }
  j["severityOnlyInRegions"] = policy.severity_only_in_regions;
  j["minScore"] = policy.min_score;
  return j.dump();
}

Action ActionFor(const Rule& rule, const Policy& policy, const CheckContext& context) {
  Action action = policy.by_rating[static_cast<int>(rule.rating)];
  Action by_severity = policy.by_severity[static_cast<int>(rule.severity)];
  bool in_region = true;
  if (policy.severity_only_in_regions && !rule.regions.empty() &&
      !context.region.empty()) {
    in_region = std::find(rule.regions.begin(), rule.regions.end(), context.region) !=
                rule.regions.end();
  }
  if (in_region) action = std::max(action, by_severity);
  return action;
}

Verdict Decide(std::vector<ExplainedMatch> matches, const Policy& policy,
               const CheckContext& context) {
  Verdict verdict;
  matches.erase(
      std::remove_if(matches.begin(), matches.end(),
                     [&](const ExplainedMatch& m) { return m.score < policy.min_score; }),
      matches.end());
  for (ExplainedMatch& m : matches) {
    m.action = std::min(ActionFor(*m.rule, policy, context),
                        policy.max_by_stance[static_cast<int>(m.stance)]);
  }
  std::stable_sort(matches.begin(), matches.end(),
                   [](const ExplainedMatch& a, const ExplainedMatch& b) {
                     if (a.action != b.action) return a.action > b.action;
                     if (a.rule->severity != b.rule->severity) {
                       return a.rule->severity > b.rule->severity;
                     }
                     return a.score > b.score;
                   });
  if (!matches.empty()) {
    verdict.action = matches.front().action;
    verdict.top = matches.front().rule;
    verdict.score = matches.front().score;
    verdict.stance = matches.front().stance;
  }
  verdict.matches = std::move(matches);
  return verdict;
}

namespace {

std::string VerdictJson(const Verdict& verdict, std::string_view original_text) {
  json j;
  j["action"] = ActionName(verdict.action);
  j["rating"] = verdict.top ? json(RatingName(verdict.top->rating)) : json(nullptr);
  j["severity"] = verdict.top ? json(SeverityName(verdict.top->severity)) : json(nullptr);
  j["score"] = std::round(verdict.score * 10000) / 10000;
  j["stance"] = verdict.top ? StanceName(verdict.stance) : "unclear";
  j["matches"] = json::array();
  if (!verdict.matches.empty()) {
    Utf16Index utf16(original_text);
    for (const ExplainedMatch& m : verdict.matches) {
      json spans = json::array();
      for (const ByteRange& s : m.spans) {
        spans.push_back({utf16.ToUtf16(s.begin), utf16.ToUtf16(s.end)});
      }
      const Rule& r = *m.rule;
      j["matches"].push_back({
          {"listId", m.list_id},
          {"ruleId", r.id},
          {"kind", MatchKindName(m.kind)},
          {"score", std::round(m.score * 10000) / 10000},
          {"action", ActionName(m.action)},
          {"rating", RatingName(r.rating)},
          {"severity", SeverityName(r.severity)},
          {"stance", StanceName(m.stance)},
          {"spans", std::move(spans)},
          {"claim", r.claim},
          {"review",
           {{"url", r.review.url},
            {"title", r.review.title},
            {"publisher", r.review.publisher},
            {"date", r.review.date}}},
      });
    }
  }
  // Replace invalid UTF-8 rather than abort: list strings are validated, but be
  // safe for anything that reaches here.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::string VerdictToJson(const Verdict& verdict, std::string_view original_text) {
  // Most posts match nothing, and the verdict of each is the same text: made once,
  // by the same code as any other. (Building and dumping nlohmann's tree for it
  // was 12k instructions a post natively, 2% of a check at 10k rules.)
  if (verdict.matches.empty() && verdict.top == nullptr &&
      verdict.action == Action::kNone && verdict.stance == Stance::kUnclear &&
      verdict.score == 0 && !std::signbit(verdict.score)) {
    static const std::string nothing = VerdictJson(Verdict(), {});
    return nothing;
  }
  return VerdictJson(verdict, original_text);
}

}  // namespace factlens
