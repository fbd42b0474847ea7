// Copyright factlens authors.
//
// Three matchers over normalised text, each indexed per list at compile time:
//  - patterns: one RE2 per pattern, compiled from the pattern rewritten by
//    NormalizePattern so that its literals are in the same form as post text;
//  - keywords: terms normalised into word sequences, looked up in a per-post word
//    index, then checked for `none` terms and the `within` proximity window;
//  - urls: canonical page URLs and domains in hash maps, looked up for each URL
//    the normaliser found in the post (and each parent domain of its host).
//  - similar: a SimilarIndex (similar.h) over all rules' claims; its hits at or above
//    the calibrated threshold become kSimilar matches for rules with match.similar.
#include "factlens/match.h"

#include <algorithm>
#include <climits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "re2/re2.h"

namespace factlens {
namespace {

// Score of a match, by kind: how directly the evidence names the claim. Patterns
// and exact pages are written for one claim; a domain or a bag of words is a
// little less specific.
constexpr double kPatternScore = 0.9;
constexpr double kKeywordScore = 0.8;
constexpr double kUrlScore = 1.0;
constexpr double kDomainScore = 0.85;
constexpr size_t kMaxSpansPerMatch = 8;

struct CompiledPattern {
  uint32_t rule_index;
  std::unique_ptr<re2::RE2> re;
};

// A keyword term as a sequence of normalised words; `prefix` makes the last word
// match any word that starts with it (the term was written with a trailing '*').
struct Term {
  std::vector<std::string> words;
  bool prefix = false;
};

struct CompiledKeywordSet {
  uint32_t rule_index;
  std::vector<Term> all, any, none;
  int within;
};

struct Occurrence {
  uint32_t first_word, last_word;  // inclusive
};

// Word positions of one post, built once per Match call when keyword sets exist.
class PostWords {
 public:
  explicit PostWords(const NormalizedText& post) : post_(post) {
    index_.reserve(post.words.size());
    for (uint32_t i = 0; i < post.words.size(); ++i) index_[Word(i)].push_back(i);
  }

  std::string_view Word(uint32_t i) const {
    const ByteRange& w = post_.words[i];
    return std::string_view(post_.text).substr(w.begin, w.end - w.begin);
  }

  // Returns every occurrence of `term` in the post.
  std::vector<Occurrence> Find(const Term& term) const {
    std::vector<Occurrence> out;
    const size_t n = term.words.size();
    auto rest_matches = [&](uint32_t start) {
      if (start + n > post_.words.size()) return false;
      for (size_t k = 1; k < n; ++k) {
        std::string_view w = Word(start + static_cast<uint32_t>(k));
        bool last = k + 1 == n;
        if (last && term.prefix ? w.substr(0, term.words[k].size()) != term.words[k]
                                : w != term.words[k]) {
          return false;
        }
      }
      return true;
    };
    if (n == 1 && term.prefix) {
      for (uint32_t i = 0; i < post_.words.size(); ++i) {
        if (Word(i).substr(0, term.words[0].size()) == term.words[0])
          out.push_back({i, i});
      }
      return out;
    }
    auto it = index_.find(term.words[0]);
    if (it == index_.end()) return out;
    for (uint32_t start : it->second) {
      if (rest_matches(start))
        out.push_back({start, start + static_cast<uint32_t>(n - 1)});
    }
    return out;
  }

  ByteRange OriginalRange(const Occurrence& o) const {
    return post_.OriginalRange(post_.words[o.first_word].begin,
                               post_.words[o.last_word].end);
  }

 private:
  const NormalizedText& post_;
  std::unordered_map<std::string_view, std::vector<uint32_t>> index_;
};

Term MakeTerm(const std::string& written) {
  Term term;
  std::string_view text = written;
  if (!text.empty() && text.back() == '*') {
    term.prefix = true;
    text.remove_suffix(1);
  }
  std::string normalised = NormalizeToString(text);
  size_t start = 0;
  while (start < normalised.size()) {
    size_t space = normalised.find(' ', start);
    if (space == std::string::npos) space = normalised.size();
    term.words.push_back(normalised.substr(start, space - start));
    start = space + 1;
  }
  return term;
}

// Finds the narrowest window holding one occurrence of every group. Returns false
// if some group has none, or the narrowest is wider than `within` (0: any width).
bool BestWindow(const std::vector<std::vector<Occurrence>>& groups, int within,
                std::vector<Occurrence>* chosen) {
  struct Event {
    Occurrence occ;
    size_t group;
  };
  std::vector<Event> events;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty()) return false;
    for (const Occurrence& o : groups[g]) events.push_back({o, g});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.occ.first_word < b.occ.first_word;
  });
  // Sweep by start; keep the latest occurrence of each group. When every group
  // has one, the window they span is a candidate; the latest ones give the
  // narrowest window that ends with the current event.
  std::vector<const Occurrence*> latest(groups.size(), nullptr);
  size_t seen = 0;
  uint32_t best_width = UINT32_MAX;
  for (const Event& e : events) {
    if (latest[e.group] == nullptr) ++seen;
    latest[e.group] = &e.occ;
    if (seen < groups.size()) continue;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (const Occurrence* o : latest) {
      lo = std::min(lo, o->first_word);
      hi = std::max(hi, o->last_word);
    }
    uint32_t width = hi - lo + 1;
    if (width < best_width) {
      best_width = width;
      chosen->clear();
      for (const Occurrence* o : latest) chosen->push_back(*o);
    }
  }
  return within == 0 || best_width <= static_cast<uint32_t>(within);
}

// Returns true if `entry` names a whole domain ("example.com") rather than a page.
bool IsDomainEntry(std::string_view entry) {
  return entry.find("://") == std::string_view::npos &&
         entry.find('/') == std::string_view::npos;
}

std::string_view WithoutQuery(std::string_view canonical) {
  return canonical.substr(0, canonical.find('?'));
}

std::string_view WithoutPort(std::string_view host) {
  return host.substr(0, host.find(':'));
}

}  // namespace

const char* MatchKindName(MatchKind kind) {
  switch (kind) {
    case MatchKind::kPattern:
      return "pattern";
    case MatchKind::kKeywords:
      return "keywords";
    case MatchKind::kUrl:
      return "url";
    case MatchKind::kDomain:
      return "domain";
    case MatchKind::kSimilar:
      return "similar";
  }
  return "pattern";
}

struct CompiledList::Matchers {
  std::vector<CompiledPattern> patterns;
  std::vector<CompiledKeywordSet> keyword_sets;
  std::unordered_map<std::string, std::vector<uint32_t>> pages;    // canonical URL
  std::unordered_map<std::string, std::vector<uint32_t>> domains;  // host, no www.
  std::unique_ptr<SimilarIndex> similar;
  bool any_similar = false;  // some rule has match.similar
};

CompiledList::CompiledList() : matchers_(std::make_unique<Matchers>()) {}
CompiledList::~CompiledList() = default;

Status CompiledList::Compile(RuleList list, std::unique_ptr<CompiledList>* out,
                             const SimilarOptions& similar) {
  std::unique_ptr<CompiledList> compiled(new CompiledList());
  Matchers& m = *compiled->matchers_;
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_case_sensitive(false);
  options.set_max_mem(8 << 20);
  for (uint32_t r = 0; r < list.rules.size(); ++r) {
    const Rule& rule = list.rules[r];
    auto where = [&](const std::string& field) {
      return "rules[" + std::to_string(r) + "] (id \"" + rule.id + "\"): match." + field;
    };
    for (size_t p = 0; p < rule.patterns.size(); ++p) {
      auto re = std::make_unique<re2::RE2>(NormalizePattern(rule.patterns[p]), options);
      if (!re->ok()) {
        return Status(re->error_code() == re2::RE2::ErrorPatternTooLarge
                          ? ErrorKind::kLimit
                          : ErrorKind::kFormat,
                      where("patterns[" + std::to_string(p) + "]") + ": " + re->error());
      }
      m.patterns.push_back({r, std::move(re)});
    }
    for (const KeywordSet& set : rule.keywords) {
      CompiledKeywordSet ks{r, {}, {}, {}, set.within};
      for (const auto& t : set.all) ks.all.push_back(MakeTerm(t));
      for (const auto& t : set.any) ks.any.push_back(MakeTerm(t));
      for (const auto& t : set.none) ks.none.push_back(MakeTerm(t));
      // A term that normalises to nothing ("!!!") could never match: say so now
      // rather than silently never matching.
      for (const auto* terms : {&ks.all, &ks.any, &ks.none}) {
        for (const Term& t : *terms) {
          if (t.words.empty() || t.words[0].empty()) {
            return Status(ErrorKind::kFormat,
                          where("keywords") + ": a term has no letters or digits");
          }
        }
      }
      m.keyword_sets.push_back(std::move(ks));
    }
    for (size_t u = 0; u < rule.urls.size(); ++u) {
      const std::string& entry = rule.urls[u];
      if (IsDomainEntry(entry)) {
        std::string canonical = CanonicalizeUrl("https://" + entry);
        if (canonical.empty() || canonical.find('.') == std::string::npos) {
          return Status(ErrorKind::kFormat, where("urls[" + std::to_string(u) + "]") +
                                                ": \"" + entry + "\" is not a domain");
        }
        m.domains[std::string(WithoutPort(CanonicalHost(canonical)))].push_back(r);
      } else {
        std::string canonical = CanonicalizeUrl(entry);
        if (canonical.empty()) {
          return Status(ErrorKind::kFormat, where("urls[" + std::to_string(u) + "]") +
                                                ": \"" + entry +
                                                "\" is not an http(s) URL");
        }
        m.pages[canonical].push_back(r);
      }
    }
  }
  std::vector<SimilarDoc> docs(list.rules.size());
  for (uint32_t r = 0; r < list.rules.size(); ++r) {
    const Rule& rule = list.rules[r];
    SimilarDoc& doc = docs[r];
    doc.rule_index = r;
    doc.phrasings.push_back(rule.claim);
    for (const std::string& p : rule.similar) {
      if (p != rule.claim) doc.phrasings.push_back(p);
    }
    doc.title = rule.review.title;
    m.any_similar = m.any_similar || !rule.similar.empty();
    doc.languages = rule.languages;
  }
  m.similar = SimilarIndex::Build(docs, similar);
  compiled->list_ = std::move(list);
  *out = std::move(compiled);
  return Status::Ok();
}

std::vector<RuleMatch> CompiledList::Match(const NormalizedText& post) const {
  const Matchers& m = *matchers_;
  std::vector<RuleMatch> out;

  // Patterns: up to kMaxSpansPerMatch non-overlapping hits per pattern.
  for (const CompiledPattern& p : m.patterns) {
    re2::StringPiece text(post.text), hit;
    size_t pos = 0;
    RuleMatch match{p.rule_index, MatchKind::kPattern, kPatternScore, {}};
    while (pos <= post.text.size() && match.spans.size() < kMaxSpansPerMatch &&
           p.re->Match(text, pos, post.text.size(), re2::RE2::UNANCHORED, &hit, 1)) {
      size_t begin = static_cast<size_t>(hit.data() - post.text.data());
      size_t end = begin + hit.size();
      if (end > begin) match.spans.push_back(post.OriginalRange(begin, end));
      pos = end > begin ? end : end + 1;
    }
    if (!match.spans.empty()) out.push_back(std::move(match));
  }

  // Keyword sets.
  if (!m.keyword_sets.empty() && !post.words.empty()) {
    PostWords words(post);
    for (const CompiledKeywordSet& ks : m.keyword_sets) {
      bool excluded = std::any_of(ks.none.begin(), ks.none.end(),
                                  [&](const Term& t) { return !words.Find(t).empty(); });
      if (excluded) continue;
      std::vector<std::vector<Occurrence>> groups;
      bool missing = false;
      for (const Term& t : ks.all) {
        groups.push_back(words.Find(t));
        if (groups.back().empty()) {
          missing = true;
          break;
        }
      }
      if (missing) continue;
      if (!ks.any.empty()) {
        std::vector<Occurrence> any;
        for (const Term& t : ks.any) {
          std::vector<Occurrence> found = words.Find(t);
          any.insert(any.end(), found.begin(), found.end());
        }
        if (any.empty()) continue;
        groups.push_back(std::move(any));
      }
      std::vector<Occurrence> chosen;
      if (!BestWindow(groups, ks.within, &chosen)) continue;
      RuleMatch match{ks.rule_index, MatchKind::kKeywords, kKeywordScore, {}};
      std::sort(chosen.begin(), chosen.end(),
                [](const Occurrence& a, const Occurrence& b) {
                  return a.first_word < b.first_word;
                });
      for (const Occurrence& o : chosen) match.spans.push_back(words.OriginalRange(o));
      out.push_back(std::move(match));
    }
  }

  // URLs and domains. Spans: the URL's word in the post.
  if ((!m.pages.empty() || !m.domains.empty()) && !post.urls.empty()) {
    auto url_span = [&](const std::string& canonical) {
      for (const ByteRange& w : post.words) {
        if (std::string_view(post.text).substr(w.begin, w.end - w.begin) == canonical) {
          return post.OriginalRange(w.begin, w.end);
        }
      }
      return ByteRange{0, 0};
    };
    for (const std::string& url : post.urls) {
      auto add = [&](const std::vector<uint32_t>& rules, MatchKind kind, double score) {
        for (uint32_t r : rules) {
          out.push_back({r, kind, score, {url_span(url)}});
        }
      };
      auto page = m.pages.find(url);
      if (page == m.pages.end()) page = m.pages.find(std::string(WithoutQuery(url)));
      if (page != m.pages.end()) add(page->second, MatchKind::kUrl, kUrlScore);
      // The host and each parent domain: "a.b.example.com", "b.example.com", ...
      std::string_view host = WithoutPort(CanonicalHost(url));
      while (!host.empty()) {
        auto domain = m.domains.find(std::string(host));
        if (domain != m.domains.end())
          add(domain->second, MatchKind::kDomain, kDomainScore);
        size_t dot = host.find('.');
        if (dot == std::string_view::npos) break;
        host.remove_prefix(dot + 1);
      }
    }
  }

  // Claim similarity, for the rules that asked for it.
  std::vector<SimilarHit> hits;
  if (m.any_similar) hits = m.similar->Search(post, kSimilarMatches);
  for (const SimilarHit& hit : hits) {
    if (hit.score < SimilarIndex::kDefaultThreshold) break;
    if (list_.rules[hit.rule_index].similar.empty()) continue;
    out.push_back({hit.rule_index, MatchKind::kSimilar, hit.score,
                   m.similar->Spans(post, hit.rule_index)});
  }

  // One match per rule and kind (several patterns or URLs of one rule merge).
  std::sort(out.begin(), out.end(), [](const RuleMatch& a, const RuleMatch& b) {
    return a.rule_index != b.rule_index ? a.rule_index < b.rule_index : a.kind < b.kind;
  });
  std::vector<RuleMatch> merged;
  for (RuleMatch& match : out) {
    if (!merged.empty() && merged.back().rule_index == match.rule_index &&
        merged.back().kind == match.kind) {
      RuleMatch& into = merged.back();
      for (const ByteRange& s : match.spans) {
        if (into.spans.size() >= kMaxSpansPerMatch) break;
        into.spans.push_back(s);
      }
      into.score = std::max(into.score, match.score);
    } else {
      merged.push_back(std::move(match));
    }
  }
  for (RuleMatch& match : merged) {
    std::sort(match.spans.begin(), match.spans.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.begin < b.begin; });
    match.spans.erase(std::unique(match.spans.begin(), match.spans.end(),
                                  [](const ByteRange& a, const ByteRange& b) {
                                    return a.begin == b.begin && a.end == b.end;
                                  }),
                      match.spans.end());
  }
  return merged;
}

std::vector<SimilarHit> CompiledList::Search(
    const NormalizedText& post, size_t k, const std::vector<uint32_t>& withheld) const {
  return matchers_->similar->Search(post, k, withheld);
}

}  // namespace factlens
