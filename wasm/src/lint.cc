// Copyright factlens authors.
#include "factlens/lint.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>

#include "factlens/engine.h"
#include "factlens/match.h"
#include "factlens/normalize.h"
#include "factlens/score.h"
#include "nlohmann/json.hpp"
#include "re2/re2.h"

namespace factlens {
namespace {

using nlohmann::json;

std::string Idx(const std::string& base, size_t i) {
  return base + "[" + std::to_string(i) + "]";
}

std::string Quote(std::string_view s, size_t max = 80) {
  std::string out = "\"";
  if (s.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    out.append(s.substr(0, cut));
    out += "...";
  } else {
    out.append(s);
  }
  return out + "\"";
}

class Linter {
 public:
  Linter(std::string_view text, const LintOptions& options)
      : text_(text),
        options_(options),
        positions_(text, 0, {}, options.limits.max_values) {}

  LintReport Run() {
    if (text_.size() > options_.limits.max_list_bytes) {
      Add(FindingLevel::kError, "limit", "",
          "the list is " + std::to_string(text_.size()) + " bytes, over the limit of " +
              std::to_string(options_.limits.max_list_bytes));
      return Finish();
    }
    RuleList list;
    Status s = ParseList(text_, options_.limits, &list);
    // The raw checks read the whole document again, without the parser's limits:
    // not for a list over one (a 50 MB array of zeros took 1.7 GB, 3M Unicode-class
    // patterns over two minutes).
    if (s.kind() != ErrorKind::kLimit) RawChecks();
    if (!s.ok()) {
      ParseFinding(s);
      return Finish();
    }
    report_.parsed = true;
    Lifetime(list.info);
    std::unique_ptr<CompiledList> compiled;
    Status c = CompiledList::Compile(list, &compiled);
    if (!c.ok()) ParseFinding(c);
    for (size_t i = 0; i < list.rules.size(); ++i) RuleChecks(list.rules[i], i);
    Shadowing(list);
    if (!options_.corpus.empty()) Breadth(list);
    return Finish();
  }

 private:
  void Add(FindingLevel level, const std::string& code, const std::string& path,
           const std::string& message, const TextPosition* at = nullptr) {
    LintFinding f;
    f.level = level;
    f.code = code;
    f.path = path;
    f.message = message;
    if (at != nullptr) {
      f.where = *at;
    } else if (!path.empty()) {
      positions_.FindNearest(path, &f.where);
    }
    reported_paths_.insert(path);
    report_.findings.push_back(std::move(f));
  }

  LintReport Finish() {
    std::stable_sort(report_.findings.begin(), report_.findings.end(),
                     [](const LintFinding& a, const LintFinding& b) {
                       // Unlocated findings (line 0) go last.
                       size_t la = a.where.line == 0 ? SIZE_MAX : a.where.offset;
                       size_t lb = b.where.line == 0 ? SIZE_MAX : b.where.offset;
                       return la < lb;
                     });
    for (const LintFinding& f : report_.findings) {
      (f.level == FindingLevel::kError ? report_.errors : report_.warnings)++;
    }
    return std::move(report_);
  }

  // Checks on the raw JSON that the parser would stop at one by one: every
  // duplicate id, every non-https review link, every RE2 error is reported.
  void RawChecks() {
    json root = json::parse(text_, nullptr, false);
    if (root.is_discarded() || !root.is_object()) return;
    auto list = root.find("list");
    if (list != root.end() && list->is_object()) {
      auto pub = list->find("publisher");
      if (pub != list->end() && pub->is_object()) {
        auto url = pub->find("url");
        if (url != pub->end() && url->is_string() &&
            url->get_ref<const std::string&>().rfind("https://", 0) != 0) {
          Add(FindingLevel::kError, "review-url", "list.publisher.url",
              "publisher link " + Quote(url->get_ref<const std::string&>()) +
                  " is not https: readers only follow https links");
        }
      }
    }
    auto rules = root.find("rules");
    if (rules == root.end() || !rules->is_array()) return;
    std::unordered_map<std::string, size_t> first;
    for (size_t i = 0; i < rules->size(); ++i) {
      const json& r = (*rules)[i];
      if (!r.is_object()) continue;
      std::string where = Idx("rules", i);
      auto id = r.find("id");
      if (id != r.end() && id->is_string()) {
        const std::string& s = id->get_ref<const std::string&>();
        auto [it, inserted] = first.emplace(s, i);
        if (!inserted) {
          TextPosition p;
          positions_.Find(Idx("rules", it->second) + ".id", &p);
          Add(FindingLevel::kError, "duplicate-id", where + ".id",
              "duplicate rule id " + Quote(s) + " (first used by rules[" +
                  std::to_string(it->second) + "] at line " + std::to_string(p.line) +
                  "); ids must be unique and stable: give this rule its own id");
        }
      }
      auto review = r.find("review");
      if (review != r.end() && review->is_object()) {
        auto url = review->find("url");
        if (url != review->end() && url->is_string()) {
          const std::string& u = url->get_ref<const std::string&>();
          if (u.rfind("https://", 0) != 0 || u.size() <= 8) {
            Add(FindingLevel::kError, "review-url", where + ".review.url",
                "review link " + Quote(u) +
                    " is not https: readers only follow https links, so the label "
                    "would have no fact-check to point to");
          }
        }
      }
      auto match = r.find("match");
      if (match == r.end() || !match->is_object()) continue;
      auto patterns = match->find("patterns");
      if (patterns == match->end() || !patterns->is_array()) continue;
      for (size_t p = 0; p < patterns->size(); ++p) {
        if (!(*patterns)[p].is_string()) continue;
        const std::string& pattern = (*patterns)[p].get_ref<const std::string&>();
        RE2::Options o;
        o.set_log_errors(false);
        RE2 re(pattern, o);
        if (re.ok()) continue;
        std::string path = Idx(where + ".match.patterns", p);
        size_t offset = 0;
        const std::string& arg = re.error_arg();
        if (!arg.empty()) {
          size_t at = pattern.find(arg);
          if (at != std::string::npos) offset = at;
        }
        TextPosition pos;
        // +1: FindInString counts from the opening quote's successor.
        bool located = positions_.FindInString(path, offset, &pos);
        Add(FindingLevel::kError, "re2", path,
            "RE2 cannot compile pattern " + Quote(pattern) + ": " + re.error() +
                " (at offset " + std::to_string(offset) + ")",
            located ? &pos : nullptr);
      }
    }
  }

  // The parser's first error, located; skipped if a raw check already said it.
  void ParseFinding(const Status& s) {
    const std::string& m = s.message();
    unsigned line = 0, column = 0;
    int consumed = 0;
    if (std::sscanf(m.c_str(), "line %u, column %u: %n", &line, &column, &consumed) ==
            2 &&
        consumed > 0) {
      TextPosition p;
      p.line = line;
      p.column = column;
      p.offset = 0;
      Add(FindingLevel::kError, "parse", "", m.substr(consumed), &p);
      return;
    }
    std::string path = JsonPositions::PathOfMessage(m);
    if (!path.empty() && reported_paths_.count(path)) return;
    bool re2_error = path.find(".match.patterns[") != std::string::npos;
    const char* code = s.kind() == ErrorKind::kLimit ? "limit"
                       : re2_error                   ? "re2"
                                                     : "parse";
    TextPosition p;
    size_t offset = 0;
    size_t at = m.rfind("at offset ");
    if (re2_error && at != std::string::npos &&
        std::sscanf(m.c_str() + at, "at offset %zu", &offset) == 1 &&
        positions_.FindInString(path, offset, &p)) {
      Add(FindingLevel::kError, code, path, m, &p);
    } else {
      Add(FindingLevel::kError, code, path, m);
    }
  }

  void Lifetime(const ListInfo& info) {
    int64_t left = info.expires_unix - options_.now_unix;
    if (left <= 0) {
      Add(FindingLevel::kError, "expired", "list.expires",
          "the list expired on " + info.expires +
              ": readers refuse it; publish a new version (factlens publish sets a new "
              "expiry)");
    } else if (left < options_.expiry_warning_seconds) {
      Add(FindingLevel::kWarning, "expires-soon", "list.expires",
          "the list expires in " + std::to_string((left + 86399) / 86400) +
              " day(s), on " + info.expires + ": publish a new version before then");
    }
  }

  void RuleChecks(const Rule& rule, size_t i) {
    std::string where = Idx("rules", i);
    std::string name = "rule " + Quote(rule.id);
    size_t live = 0;  // matchers that can match something
    for (size_t p = 0; p < rule.patterns.size(); ++p) {
      std::string path = Idx(where + ".match.patterns", p);
      std::string normalized = NormalizePattern(rule.patterns[p]);
      RE2::Options o;
      o.set_log_errors(false);
      RE2 re(normalized, o);
      if (!re.ok()) continue;  // reported by the compile step
      // A post of nonsense words shares nothing with any claim; a pattern that
      // finds a (non-empty: the engine ignores empty hits) match there matches
      // nearly every post.
      static const char kNonsense[] = "zqxj vwkp 48213 example.invalid/zqxj";
      re2::StringPiece hit;
      if (re.Match(kNonsense, 0, sizeof kNonsense - 1, RE2::UNANCHORED, &hit, 1) &&
          !hit.empty()) {
        Add(FindingLevel::kError, "matches-everything", path,
            name + ": pattern " + Quote(rule.patterns[p]) + " matches " +
                Quote(hit.ToString()) + " in the nonsense post " + Quote(kNonsense) +
                ", so it matches nearly every post");
      } else if (RE2::PartialMatch("", re)) {
        Add(FindingLevel::kWarning, "matches-empty", path,
            name + ": pattern " + Quote(rule.patterns[p]) +
                " can match the empty string; empty matches are ignored, so only its "
                "non-empty part counts: make the optional part required");
      }
      if (normalized != rule.patterns[p]) {
        Add(FindingLevel::kWarning, "pattern-style", path,
            name + ": pattern " + Quote(rule.patterns[p]) + " is matched as " +
                Quote(normalized) +
                " (normalised text is lower case, without diacritics); write it that "
                "way");
      }
      ++live;
    }
    for (size_t k = 0; k < rule.keywords.size(); ++k) {
      const KeywordSet& set = rule.keywords[k];
      std::string path = Idx(where + ".match.keywords", k);
      std::string dead;
      std::vector<std::string> all;
      for (const auto* terms : {&set.all, &set.any, &set.none}) {
        for (const std::string& t : *terms) {
          std::string n = NormalizeToString(t);
          if (n.empty()) dead = "term " + Quote(t) + " has no letters or digits";
          if (terms == &set.all) all.push_back(n);
          if (set.within > 0 && terms != &set.none) {
            size_t words = n.empty() ? 0 : std::count(n.begin(), n.end(), ' ') + 1;
            if (words > static_cast<size_t>(set.within)) {
              dead = "term " + Quote(t) + " has " + std::to_string(words) +
                     " words, more than within " + std::to_string(set.within);
            }
          }
        }
      }
      for (const std::string& t : set.none) {
        std::string n = NormalizeToString(t);
        if (std::find(all.begin(), all.end(), n) != all.end()) {
          dead = "term " + Quote(t) + " is in both \"all\" and \"none\"";
        }
      }
      if (!dead.empty()) {
        Add(FindingLevel::kError, "never-matches", path,
            name + ": this keyword set can never match: " + dead);
      } else {
        ++live;
      }
    }
    live += rule.urls.size() + rule.similar.size();
    if (live == 0) {
      Add(FindingLevel::kError, "never-matches", where + ".match",
          name + " can never match: none of its matchers can match any post");
    }
    if (rule.examples_match.empty()) {
      Add(FindingLevel::kWarning, "no-examples", where,
          name +
              " has no examples.match: add posts that must match, so `factlens test` "
              "holds the rule to them");
    }
    if (rule.examples_no_match.empty()) {
      Add(FindingLevel::kWarning, "no-match-examples", where,
          name + " has no examples.no_match: add near misses (same topic, no claim)");
    }
  }

  // Returns the keys of a rule's matchers in the normalised form the engine
  // matches them in, so equal matchers written differently compare equal.
  static std::vector<std::string> MatcherKeys(const Rule& rule) {
    std::vector<std::string> keys;
    for (const std::string& p : rule.patterns) keys.push_back("p:" + NormalizePattern(p));
    for (const KeywordSet& k : rule.keywords) {
      std::string key = "k:";
      for (const auto* terms : {&k.all, &k.any, &k.none}) {
        std::vector<std::string> n;
        for (const std::string& t : *terms) n.push_back(NormalizeToString(t));
        std::sort(n.begin(), n.end());
        for (const std::string& t : n) key += t + "\x1f";
        key += "\x1e";
      }
      keys.push_back(key + std::to_string(k.within));
    }
    for (const std::string& u : rule.urls) {
      std::string c = CanonicalizeUrl(u);
      keys.push_back("u:" + (c.empty() ? u : c));
    }
    for (const std::string& s : rule.similar) keys.push_back("s:" + NormalizeToString(s));
    return keys;
  }

  // A rule all of whose matchers another rule also has only matches where that
  // rule matches; if that rule outranks it (stronger action, higher severity, or
  // equal and earlier: the engine's stable order), it never decides a verdict.
  void Shadowing(const RuleList& list) {
    Policy policy = DefaultPolicy();
    std::vector<std::vector<std::string>> keys(list.rules.size());
    std::unordered_map<std::string, std::vector<size_t>> by_key;
    for (size_t i = 0; i < list.rules.size(); ++i) {
      keys[i] = MatcherKeys(list.rules[i]);
      std::vector<std::string> sorted = keys[i];
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 1; k < sorted.size(); ++k) {
        if (sorted[k] == sorted[k - 1]) {
          Add(FindingLevel::kWarning, "duplicate-matcher", Idx("rules", i) + ".match",
              "rule " + Quote(list.rules[i].id) +
                  " has the same matcher twice (after normalisation)");
          break;
        }
      }
      for (const std::string& k : keys[i]) {
        auto& v = by_key[k];
        if (v.empty() || v.back() != i) v.push_back(i);
      }
    }
    auto rank = [&](size_t i) {
      const Rule& r = list.rules[i];
      return std::make_pair(static_cast<int>(ActionFor(r, policy, {})),
                            static_cast<int>(r.severity));
    };
    for (size_t j = 0; j < list.rules.size(); ++j) {
      if (keys[j].empty()) continue;
      for (size_t i : by_key[keys[j][0]]) {
        if (i == j) continue;
        bool subset = std::all_of(keys[j].begin(), keys[j].end(), [&](const auto& k) {
          return std::find(keys[i].begin(), keys[i].end(), k) != keys[i].end();
        });
        if (!subset) continue;
        bool outranks = rank(i) > rank(j) || (rank(i) == rank(j) && i < j);
        if (!outranks) continue;
        TextPosition p;
        positions_.Find(Idx("rules", i), &p);
        Add(FindingLevel::kError, "shadowed", Idx("rules", j),
            "rule " + Quote(list.rules[j].id) +
                " never decides a verdict: every matcher it has is also in rule " +
                Quote(list.rules[i].id) + " (line " + std::to_string(p.line) +
                "), which ranks before it; merge the two or give this rule its own "
                "matchers");
        break;
      }
    }
  }

  void Breadth(const RuleList& list) {
    Engine engine;
    LoadOptions o;
    o.allow_unsigned = true;
    o.now_unix = list.info.issued_unix;
    o.limits = options_.limits;
    if (!engine.LoadList(text_, o, nullptr).ok()) return;  // reported above
    std::unordered_map<std::string, std::pair<size_t, std::string>> hits;
    for (const std::string& post : options_.corpus) {
      for (const ExplainedMatch& m : engine.Check(post, {}).matches) {
        auto& h = hits[m.rule->id];
        if (h.first++ == 0) h.second = post;
      }
    }
    size_t n = options_.corpus.size();
    for (size_t i = 0; i < list.rules.size(); ++i) {
      auto it = hits.find(list.rules[i].id);
      if (it == hits.end()) continue;
      double share = static_cast<double>(it->second.first) / static_cast<double>(n);
      if (share <= options_.max_corpus_share) continue;
      char figures[160];
      std::snprintf(figures, sizeof figures,
                    "matched %zu of %zu corpus posts (%.1f%%; the limit is %.1f%%)",
                    it->second.first, n, share * 100, options_.max_corpus_share * 100);
      Add(FindingLevel::kError, "too-broad", Idx("rules", i),
          "rule " + Quote(list.rules[i].id) + " is too broad: " + figures + ", e.g. " +
              Quote(it->second.second) + "; narrow its matchers");
    }
  }

  std::string_view text_;
  const LintOptions& options_;
  JsonPositions positions_;
  LintReport report_;
  std::set<std::string> reported_paths_;
};

}  // namespace

LintReport LintList(std::string_view text, const LintOptions& options) {
  return Linter(text, options).Run();
}

std::string FormatFinding(const std::string& file, const LintFinding& f) {
  std::string out = file;
  if (f.where.line > 0) {
    out += ":" + std::to_string(f.where.line) + ":" + std::to_string(f.where.column);
  }
  out += f.level == FindingLevel::kError ? ": error: " : ": warning: ";
  return out + f.message + " [" + f.code + "]";
}

namespace {

// Returns true if this build's engine matches by claim similarity: a rule whose
// only matcher is `similar` is given its own phrasing as a post.
bool EngineHasSimilarity() {
  static const char kProbe[] =
      R"({"format":"factlens/1","list":{"id":"probe","name":"probe","publisher":)"
      R"({"name":"p","url":"https://p.invalid/"},"version":1,"issued":)"
      R"("2020-01-01T00:00:00Z","expires":"2100-01-01T00:00:00Z"},"rules":[{"id":"s",)"
      R"("claim":"The moon landing was filmed in a television studio.","rating":"false",)"
      R"("severity":"low","match":{"similar":["the moon landing was filmed in a )"
      R"(television studio"]},"review":{"url":"https://p.invalid/r","title":"t",)"
      R"("publisher":"p","date":"2020-01-01"}}]})";
  Engine engine;
  LoadOptions o;
  o.allow_unsigned = true;
  o.now_unix = 1700000000;
  if (!engine.LoadList(kProbe, o, nullptr).ok()) return false;
  return !engine.Check("The moon landing was filmed in a television studio", {})
              .matches.empty();
}

std::string SpanText(std::string_view text, const std::vector<ByteRange>& spans) {
  std::string out;
  for (const ByteRange& r : spans) {
    if (!out.empty()) out += ", ";
    if (r.end <= text.size() && r.begin < r.end) {
      out += Quote(text.substr(r.begin, r.end - r.begin));
    }
  }
  return out.empty() ? "(no span)" : out;
}

}  // namespace

Status RunExamples(std::string_view text, ExamplesReport* report) {
  *report = ExamplesReport();
  RuleList list;
  Status s = ParseList(text, ParseLimits(), &list);
  if (!s.ok()) return s;
  Engine engine;
  LoadOptions o;
  o.allow_unsigned = true;
  o.now_unix = list.info.issued_unix;
  s = engine.LoadList(text, o, nullptr);
  if (!s.ok()) return s;
  const bool similarity = EngineHasSimilarity();
  JsonPositions positions(text);
  for (size_t i = 0; i < list.rules.size(); ++i) {
    const Rule& rule = list.rules[i];
    const bool only_similar =
        rule.patterns.empty() && rule.keywords.empty() && rule.urls.empty();
    for (int want = 1; want >= 0; --want) {
      const auto& examples = want ? rule.examples_match : rule.examples_no_match;
      for (size_t k = 0; k < examples.size(); ++k) {
        ExampleResult r;
        r.rule_id = rule.id;
        r.rule_index = i;
        r.should_match = want;
        r.example_index = k;
        r.text = examples[k];
        positions.Find(Idx("rules", i) +
                           (want ? ".examples.match" : ".examples.no_match") + "[" +
                           std::to_string(k) + "]",
                       &r.where);
        Verdict verdict = engine.Check(r.text, {});
        const ExplainedMatch* mine = nullptr;
        for (const ExplainedMatch& m : verdict.matches) {
          if (m.list_id == list.info.id && m.rule->id == rule.id) {
            mine = &m;
            break;
          }
        }
        std::string normalized =
            " (normalised: " + Quote(NormalizeToString(r.text)) + ")";
        if (want && mine == nullptr && only_similar && !similarity) {
          r.skipped = true;
          r.explanation =
              "skipped: the rule matches only by claim similarity, which this build's "
              "engine does not provide";
          ++report->skipped;
        } else if (want && mine == nullptr) {
          std::string why = "did not match" + normalized;
          if (verdict.matches.empty()) {
            why += "; no rule of the list matched it";
          } else {
            const ExplainedMatch& other = verdict.matches.front();
            why += "; matched instead: rule " + Quote(other.rule->id) + " by its " +
                   MatchKindName(other.kind) + " matcher on " +
                   SpanText(r.text, other.spans);
          }
          r.explanation = why;
          ++report->failed;
        } else if (!want && mine != nullptr) {
          r.explanation = std::string("matched by its ") + MatchKindName(mine->kind) +
                          " matcher on " + SpanText(r.text, mine->spans) + normalized;
          ++report->failed;
        } else {
          r.passed = true;
          ++report->passed;
        }
        report->results.push_back(std::move(r));
      }
    }
  }
  return Status::Ok();
}

}  // namespace factlens
