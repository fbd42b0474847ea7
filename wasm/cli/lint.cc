// Copyright factlens authors. factlens lint and factlens test (lint.h does the work).
#include "factlens/lint.h"

#include <ctime>
#include <fstream>
#include <iostream>

#include "nlohmann/json.hpp"
#include "publisher.h"

namespace factlens::cli {
namespace {

const char kLintHelp[] =
    "usage: factlens lint LIST... [--corpus FILE] [--max-share PERCENT]\n"
    "                     [--expiry-warning DAYS] [--now RFC3339] [--werror]\n"
    "\n"
    "Checks rule lists before they ship, and prints each finding as\n"
    "FILE:LINE:COL: error|warning: message [code]. Errors:\n"
    "  parse, limit          the list does not load (JSON syntax, format, limits)\n"
    "  re2                   a pattern RE2 cannot compile (every one, located in it)\n"
    "  duplicate-id          two rules with one id (every duplicate)\n"
    "  review-url            a review or publisher link that is not https\n"
    "  never-matches         a keyword set or rule that can never match\n"
    "  matches-everything    a pattern that matches a post of nonsense words\n"
    "  shadowed              a rule whose matchers are all in a rule that ranks\n"
    "                        before it, so it never decides a verdict\n"
    "  too-broad             with --corpus: a rule matching more than --max-share\n"
    "                        (default 1%) of the corpus; the share is reported\n"
    "  expired               list.expires has passed\n"
    "Warnings: expires-soon (within --expiry-warning days, default 14),\n"
    "no-examples, no-match-examples, duplicate-matcher, pattern-style,\n"
    "matches-empty (a pattern whose empty match is ignored by the engine).\n"
    "\n"
    "  --corpus FILE      background posts (one per line, or JSON Lines with \"text\")\n"
    "  --now RFC3339      the clock for expiry checks\n"
    "  --werror           warnings count as errors\n"
    "\n"
    "Exit status: 0 no errors, 1 errors found, 2 usage or input errors.\n";

const char kTestHelp[] =
    "usage: factlens test LIST... [-v]\n"
    "\n"
    "Runs every rule's examples through the engine, exactly as readers' posts are\n"
    "checked: each examples.match post must be matched by its rule, each\n"
    "examples.no_match post must not be. Prints each failure as\n"
    "FILE:LINE:COL: FAIL rule ID: must match|must not match: \"post\": why (what\n"
    "matched instead, by which rule, kind and span; the normalised text), then a\n"
    "summary. Rules that only have `similar` matchers are reported as skipped when the\n"
    "engine has no similarity matcher. -v also lists passing examples.\n"
    "\n"
    "Exit status: 0 all examples pass, 1 an example failed, 2 usage or input errors.\n";

bool ReadCorpus(const std::string& path, std::vector<std::string>* posts) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << path << ": error: cannot read file\n";
    return false;
  }
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line[0] == '{') {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.contains("text") && j["text"].is_string()) {
        posts->push_back(j["text"].get<std::string>());
        continue;
      }
      std::cerr << path << ":" << n << ":1: error: a JSON line needs a string \"text\"\n";
      return false;
    }
    posts->push_back(line);
  }
  return true;
}

}  // namespace

const char* LintHelp() { return kLintHelp; }
const char* TestHelp() { return kTestHelp; }

int Lint(const Args& args) {
  std::vector<std::string> files;
  LintOptions options;
  options.now_unix = static_cast<int64_t>(std::time(nullptr));
  bool werror = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--corpus" || a == "--max-share" || a == "--expiry-warning" ||
        a == "--now") {
      if (i + 1 >= args.size())
        return UsageError("lint", a + " needs a value", kLintHelp);
      const std::string& v = args[++i];
      char* end = nullptr;
      if (a == "--corpus" && !ReadCorpus(v, &options.corpus)) return kExitUsage;
      if (a == "--max-share") {
        double pct = std::strtod(v.c_str(), &end);
        if (*end != '\0' || pct < 0 || pct > 100)
          return UsageError("lint", "--max-share needs a percentage", kLintHelp);
        options.max_corpus_share = pct / 100;
      }
      if (a == "--expiry-warning") {
        long days = std::strtol(v.c_str(), &end, 10);
        if (*end != '\0' || days < 0)
          return UsageError("lint", "--expiry-warning needs days", kLintHelp);
        options.expiry_warning_seconds = days * 86400;
      }
      if (a == "--now" && !ParseRfc3339(v, &options.now_unix))
        return UsageError("lint", "--now needs an RFC 3339 time", kLintHelp);
    } else if (a == "--werror") {
      werror = true;
    } else if (a == "-h" || a == "--help") {
      std::cout << kLintHelp;
      return kExitOk;
    } else if (a.size() > 1 && a[0] == '-') {
      return UsageError("lint", "unknown option " + a, kLintHelp);
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) return UsageError("lint", "no LIST given", kLintHelp);
  bool failed = false;
  for (const std::string& file : files) {
    std::string text, error;
    if (!ReadFile(file, &text, &error)) {
      std::cerr << error << "\n";
      return kExitUsage;
    }
    LintReport report = LintList(text, options);
    for (const LintFinding& f : report.findings) {
      std::cerr << FormatFinding(file, f) << "\n";
    }
    std::cerr << file << ": " << report.errors << " error(s), " << report.warnings
              << " warning(s)";
    if (!options.corpus.empty()) {
      std::cerr << "; corpus of " << options.corpus.size() << " posts";
    }
    std::cerr << "\n";
    if (report.errors > 0 || (werror && report.warnings > 0)) failed = true;
  }
  return failed ? kExitFinding : kExitOk;
}

int Test(const Args& args) {
  std::vector<std::string> files;
  bool verbose = false;
  for (const std::string& a : args) {
    if (a == "-v") {
      verbose = true;
    } else if (a == "-h" || a == "--help") {
      std::cout << kTestHelp;
      return kExitOk;
    } else if (a.size() > 1 && a[0] == '-') {
      return UsageError("test", "unknown option " + a, kTestHelp);
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) return UsageError("test", "no LIST given", kTestHelp);
  bool failed = false;
  for (const std::string& file : files) {
    std::string text, error;
    if (!ReadFile(file, &text, &error)) {
      std::cerr << error << "\n";
      return kExitUsage;
    }
    ExamplesReport report;
    Status s = RunExamples(text, &report);
    if (!s.ok()) {
      std::cerr << LocatedError(file, s) << "\n";
      return kExitUsage;
    }
    for (const ExampleResult& r : report.results) {
      if (r.passed && !verbose) continue;
      std::string where = file;
      if (r.where.line > 0) {
        where +=
            ":" + std::to_string(r.where.line) + ":" + std::to_string(r.where.column);
      }
      const char* state = r.passed ? "ok" : r.skipped ? "SKIP" : "FAIL";
      std::cout << where << ": " << state << " rule " << r.rule_id << ": "
                << (r.should_match ? "must match" : "must not match") << ": \"" << r.text
                << "\"";
      if (!r.explanation.empty()) std::cout << ": " << r.explanation;
      std::cout << "\n";
    }
    std::cout << file << ": " << report.results.size() << " examples: " << report.passed
              << " passed, " << report.failed << " failed, " << report.skipped
              << " skipped\n";
    if (report.failed > 0) failed = true;
  }
  return failed ? kExitFinding : kExitOk;
}

}  // namespace factlens::cli
