// Copyright factlens authors. lint: a publisher's checks of a list before it ships.
//
// LintList finds what the parser accepts but a careful editor would not ship, and
// locates every finding in the file (line and column, through jsonpos.h): RE2
// errors, duplicate ids, rules that can never match or never decide a verdict,
// rules too broad for a background corpus, missing examples, lists expired or about
// to expire, non-https review links. RunExamples runs every rule's examples through
// the real Engine, exactly as readers' posts are checked, and explains failures.
// Both serve the CLI (`factlens lint`, `factlens test`) and could serve the web
// rule playground through wasm.
#ifndef FACTLENS_LINT_H_
#define FACTLENS_LINT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "factlens/jsonpos.h"
#include "factlens/list.h"
#include "factlens/status.h"

namespace factlens {

enum class FindingLevel { kError, kWarning };

struct LintFinding {
  FindingLevel level = FindingLevel::kError;
  std::string code;     // stable name: "parse", "re2", "duplicate-id", "shadowed", ...
  std::string path;     // JSON path of the value it concerns ("rules[3].review.url")
  TextPosition where;   // line 0 when unknown
  std::string message;  // says what is wrong and what to do
};

struct LintOptions {
  int64_t now_unix = 0;                         // the clock for expiry checks
  int64_t expiry_warning_seconds = 14 * 86400;  // warn when expiring this soon
  std::vector<std::string> corpus;              // background posts, for breadth
  double max_corpus_share = 0.01;               // error above this share matched
  ParseLimits limits;
};

struct LintReport {
  std::vector<LintFinding> findings;  // in file order
  size_t errors = 0;
  size_t warnings = 0;
  bool parsed = false;  // false: the list was rejected by the parser
};

// Lints the list `text`. Never fails: every problem, including a list the parser
// rejects, is a finding. Codes: parse, limit, duplicate-id, review-url, re2,
// never-matches, matches-everything, matches-empty, shadowed, duplicate-matcher,
// too-broad, no-examples, no-match-examples, expired, expires-soon, pattern-style.
LintReport LintList(std::string_view text, const LintOptions& options);

// Returns "file:line:col: error: message [code]" (or "file: warning: ...").
std::string FormatFinding(const std::string& file, const LintFinding& finding);

struct ExampleResult {
  std::string rule_id;
  size_t rule_index = 0;
  bool should_match = true;  // from examples.match (true) or examples.no_match
  size_t example_index = 0;
  std::string text;
  bool passed = false;
  bool skipped = false;     // the rule's only matchers are missing from this build
  std::string explanation;  // for failures and skips: what matched instead, and why
  TextPosition where;       // of the example in the list file
};

struct ExamplesReport {
  std::vector<ExampleResult> results;
  size_t passed = 0, failed = 0, skipped = 0;
};

// Runs every rule's examples through an Engine holding `text` (loaded unsigned,
// with the clock at the list's `issued`, so a draft's expiry does not matter). A
// match example passes if the rule is among the verdict's matches; a no_match
// example passes if it is not. Rules whose only matchers are `similar` are
// skipped (reported, not failed) when this build's engine has no similarity
// matcher, which is detected by probing the engine, not assumed.
// Returns the parser's or the engine's error if the list does not load.
Status RunExamples(std::string_view text, ExamplesReport* report);

}  // namespace factlens

#endif  // FACTLENS_LINT_H_
