// Copyright factlens authors. claimreview: fact-checks published as schema.org
// ClaimReview (JSON-LD, in HTML pages or feeds) or through Google's Fact Check Tools
// API, turned into factlens/1 rules.
//
// Fact-checkers already publish their verdicts this way; importing them is how a
// list starts. Nothing is guessed: a textual rating the ratings table does not know,
// a review without a claim, a date or an https link is reported with its position
// and left out. The importer is engine code (no file system), so the web rule
// playground can call it through wasm as the CLI does.
#ifndef FACTLENS_CLAIMREVIEW_H_
#define FACTLENS_CLAIMREVIEW_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "factlens/jsonpos.h"
#include "factlens/list.h"
#include "factlens/status.h"

namespace factlens {

// One review of one claim, as found in the input.
struct ImportedReview {
  std::string claim;                     // claimReviewed / claims[].text
  std::string url;                       // the fact-check, absolute https
  std::string title;                     // headline / name / title
  std::string publisher;                 // author.name / publisher.name
  std::string date;                      // RFC 3339 date or date-time
  std::string textual_rating;            // reviewRating.alternateName / textualRating
  std::string language;                  // inLanguage / languageCode, if a BCP 47 tag
  std::vector<std::string> appearances;  // http(s) URLs where the claim appeared
  TextPosition where;                    // of the review object in the input
  size_t input = 0;                      // which input of an ImportClaimReviews run
};

struct ImportMessage {
  bool error = true;  // false: a warning (the item was imported, with a fix-up)
  TextPosition where;
  std::string message;
  size_t input = 0;  // the input `where` points into (ImportClaimReviews)
};

struct ExtractResult {
  // "json-ld", "json-ld @graph", "json-ld DataFeed", "json-ld array", "html",
  // "fact-check-tools".
  std::string shape;
  std::string page_url;  // the page URL used to resolve relative links, if any
  std::vector<ImportedReview> reviews;
  std::vector<ImportMessage> messages;
};

// Extracts the ClaimReviews of `text`, detecting its shape: an HTML page (its
// <script type="application/ld+json"> blocks), JSON-LD (one object, an array, an
// @graph, a DataFeed's dataFeedElement, nested anywhere), or a Fact Check Tools
// claims:search response ({"claims": [...]}). Relative review URLs are resolved
// against `page_url`, else against the page's <link rel="canonical"> or og:url.
// Returns kFormat if `text` is none of these shapes (not JSON and no script block).
Status ExtractClaimReviews(std::string_view text, std::string_view page_url,
                           ExtractResult* out);

// The table from publishers' textual ratings to factlens ratings
// (rules/ratings.json, rules/README.md). Keys are matched after normalisation
// (normalize.h: case, diacritics, punctuation), so "Pants on Fire!" finds
// "pants on fire" and "FAUX" finds "faux".
class RatingTable {
 public:
  // Parses a table: {"format": "factlens-ratings/1", "ratings": {"false": ["False",
  // "Falso", ...], "partly_false": [...], ...}}. Returns kFormat naming the entry
  // if a rating is unknown or a text is listed under two ratings.
  static Status Parse(std::string_view json_text, RatingTable* out);

  // Returns true and sets *out if `textual_rating` is in the table.
  bool Lookup(std::string_view textual_rating, Rating* out) const;

  size_t size() const { return map_.size(); }

  // Parses the table built into the engine (rules/ratings.json at build time), the
  // one `factlens import` and the JavaScript importer use unless given another.
  static Status BuiltIn(RatingTable* out);

 private:
  std::unordered_map<std::string, Rating> map_;
};

struct ImportOptions {
  // For a new list (ignored when merging): defaults derive from the reviews.
  std::string list_id, list_name, publisher_name, publisher_url;
  Severity severity = Severity::kMedium;  // severity of new rules
  // Also derive a keyword set from each new claim (its longest content words, in
  // a window), so the rule matches before similarity matching is available. A
  // starting point for an editor to review, not a finished matcher.
  bool derive_keywords = false;
  int64_t now_unix = 0;
  int64_t expires_days = 90;  // expiry of a new list
};

struct ImportChange {
  enum Kind { kAdded, kUpdated, kUnchanged, kKept };
  Kind kind = kAdded;
  std::string rule_id;
  std::string detail;  // what changed, or why it was kept
};

struct ImportReport {
  std::vector<ImportMessage> messages;  // per review (with positions) and per claim
  std::vector<ImportChange> changes;    // one per rule of the output
  size_t added = 0, updated = 0, unchanged = 0, kept = 0, skipped = 0;
  int64_t version = 0;
  bool version_bumped = false;
};

// Builds a factlens/1 list (JSON text, 2-space indented) from `reviews`, one rule
// per claim: several reviews of one claim become one rule (the latest review is
// linked, the others kept in "x-also-reviewed"); reviews that disagree on the rating
// are reported and left out. Rule ids derive from the review URL. If `existing` is
// not empty it is a list to update: rules are found again by review URL (and claim),
// keep their ids and hand-written matchers, severity and examples; new rules are
// added, none is dropped, and the version grows by one if anything changed.
// Returns kFormat if `existing` does not parse, or if no rule results at all.
Status BuildList(const std::vector<ImportedReview>& reviews, const RatingTable& table,
                 const ImportOptions& options, std::string_view existing,
                 std::string* out_text, ImportReport* report);

// One import, as `factlens import FILE...` and the wasm binding (the web rule
// playground) both run it: the reviews of every input are extracted, then one list
// is built from all of them (merged into `existing` if it is not empty).
struct ImportRun {
  struct Input {
    std::string shape;                    // ExtractResult::shape
    size_t reviews = 0;                   // reviews read
    std::vector<ImportMessage> messages;  // the extraction's, with positions
  };
  std::vector<Input> inputs;  // one per input read, up to a failing one
  // -1, or the input whose extraction failed (the returned status says why); when
  // the status fails with -1, building the list failed (e.g. `existing` is broken).
  int failed_input = -1;
  std::string list_text;  // the factlens/1 list, when the status is ok
  ImportReport report;    // BuildList's; report.messages name their input
};

// Returns the first failing status of ExtractClaimReviews (for `run->failed_input`)
// or of BuildList; `run` holds every message gathered up to then.
Status ImportClaimReviews(const std::vector<std::string_view>& inputs,
                          std::string_view page_url, const RatingTable& table,
                          const ImportOptions& options, std::string_view existing,
                          ImportRun* run);

// Returns `ref` resolved against `base` (RFC 3986, for http(s) bases), or "" if it
// cannot be.
std::string ResolveUrl(std::string_view base, std::string_view ref);

}  // namespace factlens

#endif  // FACTLENS_CLAIMREVIEW_H_
