// Copyright factlens authors. factlens import: ClaimReview markup and Fact Check Tools
// responses in, a factlens/1 list out (claimreview.h does the work).
#include <ctime>
#include <iostream>

#include "factlens/claimreview.h"
#include "publisher.h"

namespace factlens::cli {
namespace {

const char kImportHelp[] =
    "usage: factlens import FILE... [-o OUT] [--merge LIST] [--ratings FILE]\n"
    "                       [--page-url URL] [--keywords] [--severity S]\n"
    "                       [--id ID] [--name NAME] [--publisher NAME]\n"
    "                       [--publisher-url URL] [--now RFC3339]\n"
    "\n"
    "Reads fact-checks and writes a factlens/1 list with one rule per claim: the claim\n"
    "as `match.similar` and as a match example, the fact-check as `review`, the pages\n"
    "where the claim appeared (itemReviewed.appearance) as `match.urls`. Each FILE's\n"
    "shape is detected: schema.org ClaimReview JSON-LD (one object, an array, an\n"
    "@graph, a DataFeed), an HTML page with <script type=\"application/ld+json\">\n"
    "blocks, or a Google Fact Check Tools claims:search response.\n"
    "\n"
    "Textual ratings (\"False\", \"Pants on Fire!\", \"Falso\", \"Faux\", ...) map to\n"
    "factlens ratings through a table (rules/ratings.json, built in; --ratings FILE\n"
    "for your own). An unknown rating, a review without claim, date or https link is\n"
    "reported as FILE:LINE:COL and left out, never guessed. Several reviews of one\n"
    "claim become one rule linking the latest; reviews that disagree are left out.\n"
    "\n"
    "  -o OUT             write the list to OUT (default: standard output; with\n"
    "                     --merge, the merged list itself)\n"
    "  --merge LIST       update LIST: rules are found again by review URL and keep\n"
    "                     their ids, severities, matchers and examples; new claims\n"
    "                     are added; no rule is dropped; the version grows by one if\n"
    "                     anything changed. Every rule is reported added, updated,\n"
    "                     unchanged or kept.\n"
    "  --ratings FILE     the ratings table (format: rules/README.md)\n"
    "  --page-url URL     the page's address, for relative links (an HTML page's\n"
    "                     <link rel=canonical> or og:url is used otherwise)\n"
    "  --keywords         also derive a keyword set from each new claim (its longest\n"
    "                     words within a window): a starting point to review, so the\n"
    "                     rules match before claim similarity is available\n"
    "  --severity S       severity of new rules: low, medium (default), high, critical\n"
    "  --id, --name, --publisher, --publisher-url   a new list's metadata (defaults\n"
    "                     from the first review)\n"
    "  --now RFC3339      the clock for issued/expires (reproducible output)\n"
    "\n"
    "Exit status: 0 all imported, 1 some reviews reported and left out (the list is\n"
    "still written), 2 usage or input errors (nothing written).\n";

std::string Located(const std::string& file, const ImportMessage& m) {
  std::string out = file;
  if (m.where.line > 0) {
    out += ":" + std::to_string(m.where.line) + ":" + std::to_string(m.where.column);
  }
  return out + (m.error ? ": error: " : ": warning: ") + m.message;
}

}  // namespace

const char* ImportHelp() { return kImportHelp; }

int Import(const Args& args) {
  std::vector<std::string> inputs;
  std::string out, merge, ratings_file, page_url, now, severity = "medium";
  ImportOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-o" || a == "--merge" || a == "--ratings" || a == "--page-url" ||
        a == "--severity" || a == "--id" || a == "--name" || a == "--publisher" ||
        a == "--publisher-url" || a == "--now") {
      if (i + 1 >= args.size())
        return UsageError("import", a + " needs a value", kImportHelp);
      const std::string& v = args[++i];
      if (a == "-o") out = v;
      if (a == "--merge") merge = v;
      if (a == "--ratings") ratings_file = v;
      if (a == "--page-url") page_url = v;
      if (a == "--severity") severity = v;
      if (a == "--id") options.list_id = v;
      if (a == "--name") options.list_name = v;
      if (a == "--publisher") options.publisher_name = v;
      if (a == "--publisher-url") options.publisher_url = v;
      if (a == "--now") now = v;
    } else if (a == "--keywords") {
      options.derive_keywords = true;
    } else if (a == "-h" || a == "--help") {
      std::cout << kImportHelp;
      return kExitOk;
    } else if (a.size() > 1 && a[0] == '-') {
      return UsageError("import", "unknown option " + a, kImportHelp);
    } else {
      inputs.push_back(a);
    }
  }
  if (inputs.empty()) return UsageError("import", "no input FILE", kImportHelp);
  if (!ParseSeverity(severity, &options.severity)) {
    return UsageError("import", "--severity: \"" + severity + "\" is not a severity",
                      kImportHelp);
  }
  options.now_unix = static_cast<int64_t>(std::time(nullptr));
  if (!now.empty() && !ParseRfc3339(now, &options.now_unix)) {
    return UsageError("import", "--now needs an RFC 3339 time", kImportHelp);
  }
  std::string error;
  RatingTable table;
  Status s = RatingTable::BuiltIn(&table);
  if (!ratings_file.empty()) {
    std::string ratings_text;
    if (!ReadFile(ratings_file, &ratings_text, &error)) {
      std::cerr << error << "\n";
      return kExitUsage;
    }
    s = RatingTable::Parse(ratings_text, &table);
    if (!s.ok()) s = Status(s.kind(), ratings_file + ": error: " + s.message());
  }
  if (!s.ok()) {
    std::cerr << s.message() << "\n";
    return kExitUsage;
  }
  std::string existing;
  if (!merge.empty() && !ReadFile(merge, &existing, &error)) {
    std::cerr << error << "\n";
    return kExitUsage;
  }
  std::vector<std::string> texts(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!ReadFile(inputs[i], &texts[i], &error)) {
      std::cerr << error << "\n";
      return kExitUsage;
    }
  }

  // The same run as the wasm importer's (claimreview.h ImportClaimReviews).
  ImportRun run;
  s = ImportClaimReviews(std::vector<std::string_view>(texts.begin(), texts.end()),
                         page_url, table, options, existing, &run);
  size_t errors = 0;
  for (size_t i = 0; i < run.inputs.size(); ++i) {
    std::cerr << inputs[i] << ": " << run.inputs[i].shape << ", " << run.inputs[i].reviews
              << " review(s) read\n";
    for (const ImportMessage& m : run.inputs[i].messages) {
      std::cerr << Located(inputs[i], m) << "\n";
      if (m.error) ++errors;
    }
  }
  if (run.failed_input >= 0) {
    std::cerr << inputs[run.failed_input] << ": error: " << s.message() << "\n";
    return kExitUsage;
  }
  const ImportReport& report = run.report;
  for (const ImportMessage& m : report.messages) {
    std::cerr << Located(inputs[m.input], m) << "\n";
    if (m.error) ++errors;
  }
  if (!s.ok()) {
    std::cerr << (merge.empty() ? "factlens import" : merge) << ": error: " << s.message()
              << "\n";
    return kExitUsage;
  }
  for (const ImportChange& c : report.changes) {
    if (c.kind != ImportChange::kUnchanged && c.kind != ImportChange::kKept) {
      std::cerr << "  " << c.rule_id << ": " << c.detail << "\n";
    } else if (c.kind == ImportChange::kKept) {
      std::cerr << "  " << c.rule_id << ": " << c.detail << "\n";
    }
  }
  std::cerr << "factlens import: " << report.added << " added, " << report.updated
            << " updated, " << report.unchanged << " unchanged, " << report.kept
            << " kept, " << report.skipped << " skipped; version " << report.version
            << (report.version_bumped ? " (bumped)" : "") << "\n";
  if (out.empty() && !merge.empty()) out = merge;
  if (out.empty() || out == "-") {
    std::cout << run.list_text;
  } else if (!WriteFileAtomic(out, run.list_text, 0644, &error)) {
    std::cerr << error << "\n";
    return kExitUsage;
  }
  return errors > 0 ? kExitFinding : kExitOk;
}

}  // namespace factlens::cli
