// Copyright factlens authors. list: the rule-list format factlens/1 (rules/FORMAT.md).
//
// ParseList turns list text into a RuleList or rejects it whole with an error that
// says where: JSON syntax errors with line and column, semantic errors with the
// rule's index, id and field. Hard limits are checked while parsing, before work can
// grow with hostile input. Rule text is stored as written; matchers normalise it.
#ifndef FACTLENS_LIST_H_
#define FACTLENS_LIST_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "factlens/status.h"

namespace factlens {

inline constexpr std::string_view kFormatV1 = "factlens/1";

enum class Rating { kFalse, kAltered, kPartlyFalse, kMissingContext, kSatire, kTrue };
inline constexpr int kRatingCount = 6;
enum class Severity { kLow, kMedium, kHigh, kCritical };
inline constexpr int kSeverityCount = 4;

// Returns the format's name of a rating / severity ("partly_false", "critical").
const char* RatingName(Rating rating);
const char* SeverityName(Severity severity);
// Returns true and sets *out if `name` is a rating / severity of the format.
bool ParseRating(std::string_view name, Rating* out);
bool ParseSeverity(std::string_view name, Severity* out);

struct Review {
  std::string url;  // https only
  std::string title;
  std::string publisher;
  std::string date;  // RFC 3339 date or date-time
};

// One entry of match.keywords: every `all` term, at least one `any` term (if any
// are given), no `none` term; the matched terms must fit inside `within`
// consecutive words (0: anywhere in the post). A term is a word or a phrase; a
// trailing '*' matches any word starting with the rest.
struct KeywordSet {
  std::vector<std::string> all;
  std::vector<std::string> any;
  std::vector<std::string> none;
  int within = 0;
};

struct Rule {
  std::string id;
  std::string claim;
  Rating rating = Rating::kFalse;
  Severity severity = Severity::kLow;
  std::vector<std::string> regions;    // ISO 3166-1 alpha-2, upper case
  std::vector<std::string> languages;  // BCP 47
  std::vector<std::string> patterns;   // RE2 syntax, over normalised text
  std::vector<KeywordSet> keywords;
  std::vector<std::string> similar;  // claim phrasings (similarity matcher)
  std::vector<std::string> urls;     // pages or domains
  Review review;
  std::vector<std::string> examples_match;
  std::vector<std::string> examples_no_match;
};

struct ListInfo {
  std::string format;
  std::string id;
  std::string name;
  std::string publisher_name;
  std::string publisher_url;
  int64_t version = 0;
  std::string issued;   // RFC 3339
  std::string expires;  // RFC 3339
  int64_t issued_unix = 0;
  int64_t expires_unix = 0;
};

struct RuleList {
  ListInfo info;
  std::vector<Rule> rules;
  // True if ParseList left its patterns' RE2 syntax to CompiledList::Compile
  // (PatternSyntax::kLeftToCompile): until Compile succeeds, a pattern may hold an
  // error that FirstPatternSyntaxError finds.
  bool pattern_syntax_unchecked = false;
};

// The hard limits. Defaults are generous for real lists (100k rules) and still
// bound the memory and time a hostile list can cost.
struct ParseLimits {
  size_t max_list_bytes = 64u << 20;
  size_t max_rules = 200000;
  size_t max_depth = 16;            // JSON nesting depth (the format needs 5)
  size_t max_string_bytes = 8192;   // any one string, patterns excepted
  size_t max_pattern_bytes = 2000;  // one RE2 pattern
  size_t max_items = 256;           // entries in any one array inside a rule
  // JSON values in the whole list (strings, numbers, objects, arrays...): while
  // parsed each costs 30-100 bytes, so 64 MiB of `0,` in an `x-` array would need
  // 1 GB. 20 per rule at the rule limit; real lists have about 16.
  size_t max_values = 4000000;
  // Unicode class escapes (\pL, \p{Lu}, \PN...) in all patterns together: RE2
  // takes 0.3-2 ms to parse each general category, so 3M of them would take an hour.
  size_t max_unicode_classes = 4000;
};

// Who checks each pattern's RE2 syntax, as its author wrote it.
enum class PatternSyntax {
  kChecked,  // ParseList: the list it returns has no pattern RE2 rejects
  // CompiledList::Compile, which parses the patterns for their atoms anyway (a
  // load then parses most of them once, not twice). The load still reports what
  // kChecked would have: ParseList, failing on a rule, reports a syntax error in
  // an earlier pattern first; so do Compile and every step between them
  // (FirstPatternSyntaxError). Engine::LoadList does this.
  kLeftToCompile,
};

// Parses `text` as a factlens/1 list into *out. Returns kFormat with a located
// message for any syntax or semantic error, kLimit when a limit is exceeded. On
// error *out is left empty.
Status ParseList(std::string_view text, const ParseLimits& limits, RuleList* out,
                 PatternSyntax syntax = PatternSyntax::kChecked);

// ParseList's reading with each rule handed to `sink` as soon as it is read and
// checked (in order, with its index) instead of kept: Engine::LoadList compiles
// each rule as it comes, so that a list's rules are never all in memory as Rule
// objects beside its text (at 100k rules, 53 MB of them beside 39 MB of text). The
// sink may move from the rule. A sink's error stops the reading of rules there, as
// the rule's own error would: later rules are dropped, and the document's syntax
// and header errors still come first. With kLeftToCompile the sink must return
// each rule's pattern syntax error (RulePatternSyntaxError), which ParseList,
// failing on a later rule, then takes for checked. On success sets *info and
// *rule_count (the rules the sink took).
using RuleSink = std::function<Status(Rule& rule, size_t index)>;
Status ParseList(std::string_view text, const ParseLimits& limits, const RuleSink& sink,
                 ListInfo* info, size_t* rule_count,
                 PatternSyntax syntax = PatternSyntax::kChecked);

// About how many rules `text` holds, without parsing it, to reserve for them: the
// count of "claim" keys (every rule has one, and one cannot occur inside a string,
// where its quotes would be escaped). Keys elsewhere (x- fields) make it larger.
size_t EstimateRuleCount(std::string_view text);

// RE2's verdict on `pattern` as its author wrote it (parsed with
// re2::Regexp::LikePerl): "" or a message with the offset in their text, such as
// "missing ) at offset 14".
std::string PatternSyntaxError(const std::string& pattern);

// The error ParseList reports for the first pattern RE2 rejects in rules
// [first_rule, end) of a list (rule i at index i), or OK if there is none.
Status FirstPatternSyntaxError(const std::vector<Rule>& rules, size_t first_rule = 0);
// The same for one rule, rule `index` of its list: its first pattern RE2 rejects.
Status RulePatternSyntaxError(size_t index, const Rule& rule);

// Returns true if `tag` is a BCP 47 language tag in the shape lists use
// (^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{1,8})*$: "en", "pt-BR", "zh-Hant-TW").
bool IsLanguageTag(std::string_view tag);

// Returns seconds since the Unix epoch for an RFC 3339 date-time
// ("2026-01-31T12:00:00Z", offsets allowed) or full date ("2026-01-31", read as
// midnight UTC), or false if `text` is not one.
bool ParseRfc3339(std::string_view text, int64_t* unix_seconds);

}  // namespace factlens

#endif  // FACTLENS_LIST_H_
