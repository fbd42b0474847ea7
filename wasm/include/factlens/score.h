// Copyright factlens authors. score: from matches to a verdict the reader's policy
// decides.
//
// The default policy follows how platforms treat rated claims: false and altered
// claims are labelled and demoted, partly false and missing-context claims labelled,
// satire labelled as satire, true claims left alone, and critical severity (could
// lead to violence) hidden behind a click-through. The reader may change all of it.
#ifndef FACTLENS_SCORE_H_
#define FACTLENS_SCORE_H_

#include <string>
#include <string_view>
#include <vector>

#include "factlens/list.h"
#include "factlens/match.h"
#include "factlens/stance.h"
#include "factlens/status.h"

namespace factlens {

// Ordered: each step includes the ones before it (demote also labels).
enum class Action { kNone, kLabel, kDemote, kHide };
const char* ActionName(Action action);
bool ParseAction(std::string_view name, Action* out);

struct Policy {
  Action by_rating[kRatingCount];
  // Applied on top of the rating's action (the stronger wins); kNone adds nothing.
  Action by_severity[kSeverityCount];
  // If true, a severity action applies only when the post's region is one of
  // the rule's `regions` (rules without regions apply everywhere; an unknown
  // region counts as inside, so the safer action is kept).
  bool severity_only_in_regions = false;
  // Matches scoring below this are ignored.
  double min_score = 0;
  // The most a match may get by its stance (stance.h): a post that debunks a claim
  // is not acted on by default, one whose stance is unclear only labelled.
  Action max_by_stance[kStanceCount];
};

// Returns the default policy described above.
Policy DefaultPolicy();

// Parses a policy given as JSON, e.g. {"ratings":{"satire":"none"},
// "severities":{"critical":"demote"}, "severityOnlyInRegions":true, "minScore":0.5,
// "stances":{"debunks":"none","unclear":"label"}}.
// Fields not given keep their values in *policy. Returns kFormat naming the field.
Status ParsePolicyJson(std::string_view json, Policy* policy);
// Returns `policy` as JSON in the shape ParsePolicyJson reads.
std::string PolicyToJson(const Policy& policy);

struct CheckContext {
  std::string region;    // ISO 3166-1 alpha-2 of the reader, if known
  std::string language;  // BCP 47 of the post, if known
};

struct ExplainedMatch {
  std::string list_id;
  const Rule* rule = nullptr;  // owned by the engine's loaded list
  MatchKind kind = MatchKind::kPattern;
  double score = 0;
  Action action = Action::kNone;
  // Without evidence of refutation (stance.h) a match repeats the claim.
  Stance stance = Stance::kRepeats;
  std::vector<ByteRange> spans;  // original bytes
};

struct Verdict {
  Action action = Action::kNone;
  const Rule* top = nullptr;  // the match that decided the action, if any
  double score = 0;
  Stance stance = Stance::kUnclear;
  std::vector<ExplainedMatch> matches;  // strongest first
};

// Returns the action `policy` gives a match of `rule` in `context`, before its
// stance caps it.
Action ActionFor(const Rule& rule, const Policy& policy, const CheckContext& context);

// Returns the verdict for `matches`: drops those under policy.min_score, sets each
// match's action (ActionFor, capped by policy.max_by_stance[stance]), orders them
// strongest first (action, then severity, then score) and takes the verdict's action,
// rating, severity and score from the first.
Verdict Decide(std::vector<ExplainedMatch> matches, const Policy& policy,
               const CheckContext& context);

// Returns `verdict` as one line of JSON, spans as UTF-16 [start, end) indices into
// `original_text` (the JavaScript API's and the CLI's shared shape).
std::string VerdictToJson(const Verdict& verdict, std::string_view original_text);

}  // namespace factlens

#endif  // FACTLENS_SCORE_H_
