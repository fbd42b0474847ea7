// Copyright factlens authors.
#include "factlens/claimreview.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>
#include <set>
#include <utility>

#include "factlens/normalize.h"
#include "factlens/verify.h"
#include "nlohmann/json.hpp"

namespace factlens {
namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n\f");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n\f");
  return std::string(s.substr(b, e - b + 1));
}

bool StartsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}

// ------------------------------------------------------------------- HTML scan --

struct ScriptBlock {
  size_t begin = 0, end = 0;  // content bytes
};

// Returns the attributes of the tag whose name ends at `i` (just after "<script"),
// up to '>', and sets *after to the byte after '>'. Values are unescaped only for
// the few entities attribute values of interest can hold.
std::map<std::string, std::string> Attributes(std::string_view h, size_t i,
                                              size_t* after) {
  std::map<std::string, std::string> attrs;
  size_t n = h.size();
  while (i < n) {
    while (i < n && (std::isspace(static_cast<unsigned char>(h[i])) || h[i] == '/')) ++i;
    if (i >= n) break;
    if (h[i] == '>') {
      ++i;
      break;
    }
    size_t start = i;
    while (i < n && h[i] != '=' && h[i] != '>' && h[i] != '/' &&
           !std::isspace(static_cast<unsigned char>(h[i]))) {
      ++i;
    }
    std::string name = Lower(h.substr(start, i - start));
    while (i < n && std::isspace(static_cast<unsigned char>(h[i]))) ++i;
    std::string value;
    if (i < n && h[i] == '=') {
      ++i;
      while (i < n && std::isspace(static_cast<unsigned char>(h[i]))) ++i;
      if (i < n && (h[i] == '"' || h[i] == '\'')) {
        char q = h[i++];
        size_t vs = i;
        while (i < n && h[i] != q) ++i;
        value = std::string(h.substr(vs, i - vs));
        if (i < n) ++i;
      } else {
        size_t vs = i;
        while (i < n && h[i] != '>' && !std::isspace(static_cast<unsigned char>(h[i])))
          ++i;
        value = std::string(h.substr(vs, i - vs));
      }
    }
    if (!name.empty() && !attrs.count(name)) attrs[name] = value;  // first one wins
  }
  *after = i;
  for (auto& [k, v] : attrs) {
    for (auto [from, to] : {std::pair<const char*, const char*>{"&amp;", "&"},
                            {"&quot;", "\""},
                            {"&#39;", "'"}}) {
      size_t p;
      while ((p = v.find(from)) != std::string::npos) v.replace(p, std::strlen(from), to);
    }
  }
  return attrs;
}

// Finds `needle` (lower case) in `h` from `from`, ignoring ASCII case.
size_t FindNoCase(std::string_view h, std::string_view needle, size_t from) {
  for (size_t i = from; i + needle.size() <= h.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() &&
           std::tolower(static_cast<unsigned char>(h[i + k])) == needle[k]) {
      ++k;
    }
    if (k == needle.size()) return i;
  }
  return std::string_view::npos;
}

// Scans an HTML page for <script type="application/ld+json"> blocks and the page's
// own URL (<link rel="canonical">, <meta property="og:url">). A real scan, small:
// comments are skipped, tag and attribute names are case-insensitive, attribute
// order, quoting and whitespace are free; script content runs to "</script".
void ScanHtml(std::string_view h, std::vector<ScriptBlock>* blocks,
              std::string* page_url) {
  size_t i = 0;
  std::string og_url;
  while ((i = h.find('<', i)) != std::string_view::npos) {
    if (h.compare(i, 4, "<!--") == 0) {
      size_t end = h.find("-->", i + 4);
      i = end == std::string_view::npos ? h.size() : end + 3;
      continue;
    }
    size_t name_start = i + 1, j = name_start;
    while (j < h.size() && std::isalnum(static_cast<unsigned char>(h[j]))) ++j;
    std::string tag = Lower(h.substr(name_start, j - name_start));
    if (tag.empty()) {
      ++i;
      continue;
    }
    size_t after = j;
    auto attrs = Attributes(h, j, &after);
    if (tag == "script") {
      size_t close = FindNoCase(h, "</script", after);
      size_t content_end = close == std::string_view::npos ? h.size() : close;
      std::string type = Lower(Trim(attrs["type"]));
      type = Trim(type.substr(0, type.find(';')));
      if (type == "application/ld+json") blocks->push_back({after, content_end});
      i = content_end;
      continue;
    }
    if (tag == "link" && page_url->empty()) {
      std::string rel = Lower(attrs["rel"]);
      if (rel == "canonical" && !attrs["href"].empty()) *page_url = Trim(attrs["href"]);
    }
    if (tag == "meta" && og_url.empty() && Lower(attrs["property"]) == "og:url") {
      og_url = Trim(attrs["content"]);
    }
    i = after;
  }
  if (page_url->empty()) *page_url = og_url;
}

// ------------------------------------------------------------ JSON-LD reading --

bool IsType(const json& node, std::string_view type) {
  auto t = node.find("@type");
  if (t == node.end()) return false;
  auto one = [&](const json& v) {
    if (!v.is_string()) return false;
    const std::string& s = v.get_ref<const std::string&>();
    size_t cut = s.find_last_of("/:#");
    return (cut == std::string::npos ? s : s.substr(cut + 1)) == type;
  };
  if (t->is_array()) return std::any_of(t->begin(), t->end(), one);
  return one(*t);
}

// Returns the string at node[key], or node[key].name etc. for objects (schema.org
// allows a Thing where a Text is expected), or the first of an array.
std::string Text(const json& node, const char* key,
                 std::initializer_list<const char*> inner = {"name"}) {
  auto it = node.find(key);
  if (it == node.end()) return "";
  const json* v = &*it;
  if (v->is_array()) {
    if (v->empty()) return "";
    v = &(*v)[0];
  }
  if (v->is_string()) return Trim(v->get_ref<const std::string&>());
  if (v->is_object()) {
    for (const char* k : inner) {
      auto in = v->find(k);
      if (in != v->end() && in->is_string())
        return Trim(in->get_ref<const std::string&>());
    }
  }
  return "";
}

class Extractor {
 public:
  Extractor(ExtractResult* out, std::string_view page_url) : out_(out), base_(page_url) {}

  void Error(const TextPosition& at, std::string message) {
    out_->messages.push_back({true, at, std::move(message)});
  }
  void Warn(const TextPosition& at, std::string message) {
    out_->messages.push_back({false, at, std::move(message)});
  }

  // Makes a review link absolute and https, or reports why it cannot be used.
  bool Link(const std::string& raw, const TextPosition& at, const char* what,
            std::string* out) {
    if (StartsWith(raw, "https://") && raw.size() > 8) {
      *out = raw;
      return true;
    }
    if (StartsWith(Lower(raw), "http://")) {
      Error(at, std::string(what) + " \"" + raw +
                    "\" is not https: readers only follow https links; publish the "
                    "https address; skipped");
      return false;
    }
    bool relative =
        raw.find(':') == std::string::npos || raw.find(':') > raw.find_first_of("/?#");
    if (!relative) {
      Error(at, std::string(what) + " \"" + raw + "\" is not an https link; skipped");
      return false;
    }
    if (base_.empty()) {
      Error(at, std::string(what) + " \"" + raw +
                    "\" is relative and the page URL is unknown (give it: --page-url, "
                    "or pageUrl in JavaScript); "
                    "skipped");
      return false;
    }
    std::string resolved = ResolveUrl(base_, raw);
    if (!StartsWith(resolved, "https://")) {
      Error(at, std::string(what) + " \"" + raw + "\" resolves to \"" + resolved +
                    "\", which is not https; skipped");
      return false;
    }
    Warn(at, std::string(what) + " \"" + raw +
                 "\" is relative: resolved against the "
                 "page URL to \"" +
                 resolved + "\"");
    *out = resolved;
    return true;
  }

  void Date(const std::string& raw, const TextPosition& at, ImportedReview* r) {
    int64_t t;
    if (ParseRfc3339(raw, &t)) {
      r->date = raw;
    } else if (raw.size() > 10 && ParseRfc3339(raw.substr(0, 10), &t)) {
      Warn(at,
           "date \"" + raw + "\" is not RFC 3339; using its day " + raw.substr(0, 10));
      r->date = raw.substr(0, 10);
    }
  }

  // Reads one ClaimReview object; reports and drops it if it lacks what a rule needs.
  void ClaimReview(const json& c, const TextPosition& at) {
    ImportedReview r;
    r.where = at;
    r.claim = Text(c, "claimReviewed");
    if (r.claim.empty()) {
      Error(at, "ClaimReview without claimReviewed (the claim's text); skipped");
      return;
    }
    std::string url = Text(c, "url");
    if (url.empty()) url = Text(c, "@id");
    if (url.empty() && !base_.empty()) {
      Warn(at, "ClaimReview without url: using the page URL \"" + base_ + "\"");
      url = base_;
    }
    if (url.empty()) {
      Error(at, "ClaimReview of \"" + r.claim + "\" has no url; skipped");
      return;
    }
    if (!Link(url, at, "review url", &r.url)) return;
    r.title = Text(c, "headline");
    if (r.title.empty()) r.title = Text(c, "name");
    if (r.title.empty()) {
      Warn(at, "ClaimReview without headline or name: titled after its claim");
      r.title = "Fact check: " + r.claim;
    }
    r.publisher = Text(c, "author");
    if (r.publisher.empty()) r.publisher = Text(c, "publisher");
    auto rating = c.find("reviewRating");
    if (rating != c.end()) {
      const json* rr = &*rating;
      if (rr->is_array() && !rr->empty()) rr = &(*rr)[0];
      if (rr->is_object()) {
        r.textual_rating = Text(*rr, "alternateName");
        if (r.textual_rating.empty()) r.textual_rating = Text(*rr, "name");
      }
    }
    if (r.textual_rating.empty()) {
      Error(at, "ClaimReview of \"" + r.claim +
                    "\" has no textual rating (reviewRating.alternateName); skipped");
      return;
    }
    std::string date = Text(c, "datePublished");
    if (date.empty()) date = Text(c, "dateModified");
    if (!date.empty()) Date(date, at, &r);
    if (r.date.empty()) {
      Error(at, "ClaimReview of \"" + r.claim + "\" has no valid datePublished (\"" +
                    date + "\"); skipped");
      return;
    }
    std::string lang = Text(c, "inLanguage", {"alternateName", "name"});
    if (IsLanguageTag(lang)) r.language = lang;
    auto item = c.find("itemReviewed");
    if (item != c.end() && item->is_object()) {
      for (const char* key : {"appearance", "firstAppearance"}) {
        auto a = item->find(key);
        if (a == item->end()) continue;
        std::vector<const json*> list;
        if (a->is_array()) {
          for (const json& x : *a) list.push_back(&x);
        } else {
          list.push_back(&*a);
        }
        for (const json* x : list) {
          std::string u = x->is_string()   ? x->get<std::string>()
                          : x->is_object() ? Text(*x, "url")
                                           : "";
          if ((StartsWith(u, "https://") || StartsWith(u, "http://")) &&
              !CanonicalizeUrl(u).empty() &&
              std::find(r.appearances.begin(), r.appearances.end(), u) ==
                  r.appearances.end()) {
            r.appearances.push_back(u);
          }
        }
      }
    }
    out_->reviews.push_back(std::move(r));
  }

  // Walks JSON-LD looking for ClaimReview objects wherever they are nested: @graph,
  // DataFeed.dataFeedElement, DataFeedItem.item, mainEntity, plain arrays.
  void Walk(const json& node, std::string& path, const JsonPositions& pos, int depth) {
    if (depth > 32) return;
    if (node.is_array()) {
      for (size_t i = 0; i < node.size(); ++i) {
        size_t keep = path.size();
        path += "[" + std::to_string(i) + "]";
        Walk(node[i], path, pos, depth + 1);
        path.resize(keep);
      }
      return;
    }
    if (!node.is_object()) return;
    if (IsType(node, "ClaimReview")) {
      TextPosition at;
      pos.Find(path, &at);
      ++found_;
      ClaimReview(node, at);
      return;
    }
    if (node.contains("@graph")) graph_ = true;
    if (IsType(node, "DataFeed")) feed_ = true;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->is_structured()) continue;
      size_t keep = path.size();
      if (!path.empty()) path += '.';
      path += it.key();
      Walk(*it, path, pos, depth + 1);
      path.resize(keep);
    }
  }

  // Reads a Fact Check Tools claims:search response.
  void FactCheckTools(const json& root, const JsonPositions& pos) {
    const json& claims = root["claims"];
    for (size_t i = 0; i < claims.size(); ++i) {
      const json& claim = claims[i];
      std::string where = "claims[" + std::to_string(i) + "]";
      TextPosition at;
      pos.Find(where, &at);
      if (!claim.is_object()) continue;
      std::string text = Text(claim, "text");
      if (text.empty()) {
        Error(at, "claim without text; skipped");
        continue;
      }
      auto reviews = claim.find("claimReview");
      if (reviews == claim.end() || !reviews->is_array() || reviews->empty()) {
        Error(at, "claim \"" + text + "\" has no claimReview; skipped");
        continue;
      }
      for (size_t j = 0; j < reviews->size(); ++j) {
        const json& rv = (*reviews)[j];
        TextPosition rat;
        pos.Find(where + ".claimReview[" + std::to_string(j) + "]", &rat);
        if (!rv.is_object()) continue;
        ++found_;
        ImportedReview r;
        r.where = rat;
        r.claim = text;
        std::string url = Text(rv, "url");
        if (url.empty()) {
          Error(rat, "review of \"" + text + "\" has no url; skipped");
          continue;
        }
        if (!Link(url, rat, "review url", &r.url)) continue;
        r.title = Text(rv, "title");
        if (r.title.empty()) {
          Warn(rat, "review without title: titled after its claim");
          r.title = "Fact check: " + text;
        }
        r.publisher = Text(rv, "publisher");
        r.textual_rating = Text(rv, "textualRating");
        if (r.textual_rating.empty()) {
          Error(rat, "review of \"" + text + "\" has no textualRating; skipped");
          continue;
        }
        std::string date = Text(rv, "reviewDate");
        if (!date.empty()) Date(date, rat, &r);
        if (r.date.empty()) {
          Error(rat, "review of \"" + text + "\" has no valid reviewDate; skipped");
          continue;
        }
        std::string lang = Text(rv, "languageCode");
        if (IsLanguageTag(lang)) r.language = lang;
        out_->reviews.push_back(std::move(r));
      }
    }
  }

  size_t found_ = 0;
  bool graph_ = false, feed_ = false;
  ExtractResult* out_;
  std::string base_;
};

// ------------------------------------------------------------ building lists --

std::string Slug(std::string_view s, size_t max) {
  std::string out;
  for (char ch : s) {
    unsigned char c =
        static_cast<unsigned char>(std::tolower(static_cast<unsigned char>(ch)));
    if (std::isalnum(c) && c < 0x80) {
      out += static_cast<char>(c);
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > max) out.resize(max);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// The rule id a review URL suggests: its last path segment, as a slug
// ("https://x.example/checks/5g-covid.html?x=1" -> "5g-covid").
std::string IdFromUrl(const std::string& url) {
  std::string path = url.substr(0, url.find_first_of("?#"));
  size_t host_end = path.find('/', 8);
  std::string host =
      path.substr(8, host_end == std::string::npos ? std::string::npos : host_end - 8);
  path = host_end == std::string::npos ? "" : path.substr(host_end);
  while (!path.empty() && path.back() == '/') path.pop_back();
  std::string last = path.substr(path.find_last_of('/') + 1);
  size_t dot = last.rfind('.');
  if (dot != std::string::npos && last.size() - dot <= 5) last.resize(dot);
  std::string id = Slug(last, 100);
  if (id.empty()) id = Slug(host, 100);
  return id.empty() ? "claim" : id;
}

std::string Today(int64_t now, int64_t plus_days = 0) {
  std::time_t t = static_cast<std::time_t>(now + plus_days * 86400);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// A keyword set from a claim: its (up to) four longest content words, all required
// within a window a little wider than the claim. Short and very common words say
// little about a claim, so they are left out.
ojson DeriveKeywords(const std::string& claim) {
  static const std::set<std::string> kCommon = {
      "that",  "this",  "with",  "from", "have",  "were", "been", "they",   "their",
      "there", "which", "about", "will", "would", "what", "when", "your",   "than",
      "para",  "como",  "pero",  "esta", "este",  "pour", "dans", "avec",   "sont",
      "cette", "eine",  "einen", "sind", "nicht", "dass", "oder", "dieser", "wird"};
  std::string n = NormalizeToString(claim);
  std::vector<std::pair<std::string, size_t>> words;  // word, first position
  size_t count = 0, start = 0;
  while (start <= n.size() && !n.empty()) {
    size_t end = n.find(' ', start);
    if (end == std::string::npos) end = n.size();
    std::string w = n.substr(start, end - start);
    ++count;
    bool seen = std::any_of(words.begin(), words.end(),
                            [&](const auto& p) { return p.first == w; });
    if (w.size() >= 4 && !kCommon.count(w) && !seen) words.push_back({w, count});
    start = end + 1;
  }
  std::stable_sort(words.begin(), words.end(), [](const auto& a, const auto& b) {
    return a.first.size() > b.first.size();
  });
  if (words.size() > 4) words.resize(4);
  if (words.size() < 2) return nullptr;  // too little to go on
  std::sort(words.begin(), words.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  ojson all = ojson::array();
  for (const auto& w : words) all.push_back(w.first);
  return ojson{{"all", all}, {"within", std::max<size_t>(12, count + 6)}};
}

void AddUnique(ojson& array, const std::string& value) {
  for (const ojson& v : array) {
    if (v.is_string() && v.get_ref<const std::string&>() == value) return;
  }
  array.push_back(value);
}

}  // namespace

std::string ResolveUrl(std::string_view base, std::string_view ref) {
  std::string b(base);
  if (!(StartsWith(b, "https://") || StartsWith(b, "http://"))) return "";
  std::string r(ref);
  if (StartsWith(r, "//")) return b.substr(0, b.find("//")) + r;
  size_t scheme_end = b.find("//") + 2;
  size_t path_start = b.find('/', scheme_end);
  std::string origin = path_start == std::string::npos ? b : b.substr(0, path_start);
  if (StartsWith(r, "/")) return origin + r;
  std::string path = path_start == std::string::npos ? "/" : b.substr(path_start);
  path = path.substr(0, path.find_first_of("?#"));
  if (r.empty()) return origin + path;
  if (r[0] == '?' || r[0] == '#') return origin + path + r;
  path = path.substr(0, path.rfind('/') + 1) + r;
  // Remove dot segments.
  std::vector<std::string> out;
  size_t i = 1;
  std::string tail;
  size_t q = path.find_first_of("?#");
  if (q != std::string::npos) {
    tail = path.substr(q);
    path.resize(q);
  }
  while (i <= path.size()) {
    size_t e = path.find('/', i);
    if (e == std::string::npos) e = path.size();
    std::string seg = path.substr(i, e - i);
    bool last = e == path.size();
    if (seg == "..") {
      if (!out.empty()) out.pop_back();
      if (last) out.push_back("");
    } else if (seg == ".") {
      if (last) out.push_back("");
    } else {
      out.push_back(seg);
    }
    i = e + 1;
  }
  std::string joined;
  for (const std::string& s : out) joined += "/" + s;
  return origin + (joined.empty() ? "/" : joined) + tail;
}

Status ExtractClaimReviews(std::string_view text, std::string_view page_url,
                           ExtractResult* out) {
  *out = ExtractResult();
  if (StartsWith(text, "\xEF\xBB\xBF")) text.remove_prefix(3);
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return Status(ErrorKind::kFormat, "the input is empty");
  }
  if (text[first] == '<') {
    out->shape = "html";
    std::vector<ScriptBlock> blocks;
    std::string canonical;
    ScanHtml(text, &blocks, &canonical);
    out->page_url = page_url.empty() ? canonical : std::string(page_url);
    if (blocks.empty()) {
      return Status(ErrorKind::kFormat,
                    "HTML page without <script type=\"application/ld+json\"> blocks");
    }
    Extractor ex(out, out->page_url);
    for (const ScriptBlock& b : blocks) {
      std::string_view content = text.substr(b.begin, b.end - b.begin);
      // Some CMSs wrap the JSON in CDATA markers for old XHTML parsers.
      std::string body(content);
      for (const char* marker : {"//<![CDATA[", "<![CDATA[", "//]]>", "]]>"}) {
        size_t p = body.find(marker);
        if (p != std::string::npos)
          body.replace(p, std::strlen(marker), std::strlen(marker), ' ');
      }
      json j = json::parse(body, nullptr, false);
      if (j.is_discarded()) {
        TextPosition at = PositionAt(text, b.begin);
        // nlohmann reports where in the block; re-parse for the message.
        Status s;
        {
          struct Probe : nlohmann::json_sax<json> {
            std::string message;
            bool null() override { return true; }
            bool boolean(bool) override { return true; }
            bool number_integer(number_integer_t) override { return true; }
            bool number_unsigned(number_unsigned_t) override { return true; }
            bool number_float(number_float_t, const string_t&) override { return true; }
            bool string(string_t&) override { return true; }
            bool binary(binary_t&) override { return true; }
            bool start_object(std::size_t) override { return true; }
            bool key(string_t&) override { return true; }
            bool end_object() override { return true; }
            bool start_array(std::size_t) override { return true; }
            bool end_array() override { return true; }
            bool parse_error(std::size_t pos, const std::string&,
                             const nlohmann::detail::exception& e) override {
              message = e.what();
              offset = pos;
              return false;
            }
            size_t offset = 0;
          } probe;
          json::sax_parse(body, &probe);
          size_t cut = probe.message.find("syntax error");
          std::string what =
              cut == std::string::npos ? probe.message : probe.message.substr(cut);
          at = PositionAt(text, b.begin + (probe.offset > 0 ? probe.offset - 1 : 0));
          ex.Error(at, "ld+json block is not valid JSON (" + what + "); skipped");
        }
        continue;
      }
      JsonPositions pos(body, b.begin, text);
      std::string path;
      ex.Walk(j, path, pos, 0);
    }
    if (ex.found_ == 0) {
      out->messages.push_back(
          {false, TextPosition(), "no ClaimReview in the page's ld+json blocks"});
    }
    return Status::Ok();
  }
  json root = json::parse(text, nullptr, false);
  if (root.is_discarded()) {
    return Status(
        ErrorKind::kFormat,
        "neither JSON nor an HTML page (JSON-LD, a Fact Check Tools response or "
        "an HTML page with ld+json blocks are imported)");
  }
  JsonPositions pos(text);
  Extractor ex(out, page_url);
  out->page_url = std::string(page_url);
  if (root.is_object() && root.contains("claims") && root["claims"].is_array() &&
      !root.contains("@context")) {
    out->shape = "fact-check-tools";
    ex.FactCheckTools(root, pos);
    return Status::Ok();
  }
  std::string path;
  ex.Walk(root, path, pos, 0);
  out->shape = ex.feed_          ? "json-ld DataFeed"
               : ex.graph_       ? "json-ld @graph"
               : root.is_array() ? "json-ld array"
                                 : "json-ld";
  if (ex.found_ == 0) {
    return Status(ErrorKind::kFormat,
                  "no ClaimReview (\"@type\": \"ClaimReview\") found");
  }
  return Status::Ok();
}

Status RatingTable::Parse(std::string_view json_text, RatingTable* out) {
  json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status(ErrorKind::kFormat, "a ratings table is a JSON object");
  }
  auto format = j.find("format");
  if (format == j.end() || *format != "factlens-ratings/1") {
    return Status(ErrorKind::kFormat, "format: must be \"factlens-ratings/1\"");
  }
  auto ratings = j.find("ratings");
  if (ratings == j.end() || !ratings->is_object()) {
    return Status(ErrorKind::kFormat, "ratings: must be an object of rating: [texts]");
  }
  RatingTable table;
  for (auto it = ratings->begin(); it != ratings->end(); ++it) {
    Rating rating;
    if (!ParseRating(it.key(), &rating)) {
      return Status(ErrorKind::kFormat,
                    "ratings." + it.key() +
                        ": not a factlens rating (false, altered, "
                        "partly_false, missing_context, satire, true)");
    }
    if (!it->is_array()) {
      return Status(ErrorKind::kFormat, "ratings." + it.key() + ": must be an array");
    }
    for (size_t i = 0; i < it->size(); ++i) {
      const json& t = (*it)[i];
      std::string where = "ratings." + it.key() + "[" + std::to_string(i) + "]";
      if (!t.is_string()) return Status(ErrorKind::kFormat, where + ": must be a string");
      std::string key = NormalizeToString(t.get_ref<const std::string&>());
      if (key.empty()) return Status(ErrorKind::kFormat, where + ": has no letters");
      auto [at, inserted] = table.map_.emplace(key, rating);
      if (!inserted && at->second != rating) {
        return Status(ErrorKind::kFormat, where + ": \"" + t.get<std::string>() +
                                              "\" is also listed under " +
                                              RatingName(at->second));
      }
    }
  }
  *out = std::move(table);
  return Status::Ok();
}

Status RatingTable::BuiltIn(RatingTable* out) {
  // rules/ratings.json, embedded at build time (CMakeLists.txt) so that the CLI and
  // the wasm module work anywhere. Parsed per call: 3.5 KB, once per import.
  static const char kText[] =
#include "factlens_ratings.inc"
      ;
  Status s = Parse(kText, out);
  if (!s.ok()) return Status(s.kind(), "rules/ratings.json (built in): " + s.message());
  return s;
}

bool RatingTable::Lookup(std::string_view textual_rating, Rating* out) const {
  auto it = map_.find(NormalizeToString(textual_rating));
  if (it == map_.end()) return false;
  *out = it->second;
  return true;
}

Status BuildList(const std::vector<ImportedReview>& reviews, const RatingTable& table,
                 const ImportOptions& options, std::string_view existing,
                 std::string* out_text, ImportReport* report) {
  *report = ImportReport();
  // One claim, one rule: group reviews by the claim's normalised text.
  struct Claim {
    std::vector<std::pair<const ImportedReview*, Rating>> reviews;
  };
  std::vector<std::string> order;
  std::map<std::string, Claim> claims;
  for (const ImportedReview& r : reviews) {
    Rating rating;
    if (!table.Lookup(r.textual_rating, &rating)) {
      report->messages.push_back(
          {true, r.where,
           "unknown rating \"" + r.textual_rating + "\" (review " + r.url +
               "): add it to the ratings table (rules/ratings.json, or your own: "
               "--ratings FILE, the ratings option in JavaScript); skipped",
           r.input});
      ++report->skipped;
      continue;
    }
    std::string key = NormalizeToString(r.claim);
    if (!claims.count(key)) order.push_back(key);
    claims[key].reviews.push_back({&r, rating});
  }

  ojson list;
  if (!existing.empty()) {
    RuleList parsed;
    Status s = ParseList(existing, ParseLimits(), &parsed);
    if (!s.ok()) return Status(s.kind(), "the list to merge into: " + s.message());
    list = ojson::parse(existing, nullptr, false);
  } else {
    std::string publisher = options.publisher_name;
    std::string url = options.publisher_url;
    if (publisher.empty() || url.empty()) {
      for (const ImportedReview& r : reviews) {
        if (publisher.empty() && !r.publisher.empty()) publisher = r.publisher;
        if (url.empty()) url = r.url.substr(0, r.url.find('/', 8)) + "/";
      }
    }
    if (publisher.empty()) publisher = "Unnamed fact-checker";
    std::string id = options.list_id.empty() ? Slug(publisher, 64) : options.list_id;
    if (id.empty()) id = "imported";
    list =
        ojson{{"format", "factlens/1"},
              {"list",
               {{"id", id},
                {"name", options.list_name.empty() ? publisher + ": fact-checked claims"
                                                   : options.list_name},
                {"publisher", {{"name", publisher}, {"url", url}}},
                {"version", 1},
                {"issued", Today(options.now_unix)},
                {"expires", Today(options.now_unix, options.expires_days)}}},
              {"rules", ojson::array()}};
  }
  ojson& rules = list["rules"];

  // Existing rules by review URL (and claim), so a rule is found again after its
  // claim was reworded.
  std::map<std::string, std::vector<size_t>> by_url;
  std::set<std::string> ids;
  for (size_t i = 0; i < rules.size(); ++i) {
    by_url[rules[i]["review"]["url"].get<std::string>()].push_back(i);
    ids.insert(rules[i]["id"].get<std::string>());
  }
  std::vector<bool> touched(rules.size(), false);
  std::map<std::string, size_t> imported_per_url;
  for (const std::string& key : order) {
    for (const auto& [r, rating] : claims[key].reviews) {
      (void)rating;
      imported_per_url[r->url]++;
    }
  }

  bool changed = false;
  for (const std::string& key : order) {
    const Claim& claim = claims[key];
    // Reviews must agree; the latest (then the first) is the one linked.
    const ImportedReview* best = claim.reviews[0].first;
    Rating rating = claim.reviews[0].second;
    bool disagree = false;
    int64_t best_t = 0;
    ParseRfc3339(best->date, &best_t);
    for (const auto& [r, rt] : claim.reviews) {
      if (rt != rating) disagree = true;
      int64_t t = 0;
      ParseRfc3339(r->date, &t);
      if (t > best_t) best = r, best_t = t;
    }
    if (disagree) {
      std::string detail;
      for (const auto& [r, rt] : claim.reviews) {
        detail += std::string(detail.empty() ? "" : ", ") + RatingName(rt) + " (\"" +
                  r->textual_rating + "\", " + r->url + ")";
      }
      report->messages.push_back(
          {true, claim.reviews[0].first->where,
           "the reviews of \"" + best->claim + "\" disagree: " + detail + "; skipped",
           claim.reviews[0].first->input});
      ++report->skipped;
      continue;
    }
    ojson review = {
        {"url", best->url},
        {"title", best->title},
        {"publisher", best->publisher.empty()
                          ? list["list"]["publisher"]["name"].get<std::string>()
                          : best->publisher},
        {"date", best->date}};
    ojson also = ojson::array();
    for (const auto& [r, rt] : claim.reviews) {
      if (r != best && r->url != best->url) AddUnique(also, r->url);
    }
    std::string claim_text = best->claim;
    if (claim_text.size() > 1000) {
      size_t cut = 997;
      while (cut > 0 && (static_cast<unsigned char>(claim_text[cut]) & 0xC0) == 0x80)
        --cut;
      claim_text = claim_text.substr(0, cut) + "...";
      report->messages.push_back(
          {false, best->where, "claim longer than 1000 bytes: cut", best->input});
    }

    // Find the rule again: the only rule with this review URL when this URL
    // reviews one claim, else the rule with this URL and this claim.
    long found = -1;
    auto urls = by_url.find(best->url);
    if (urls != by_url.end()) {
      if (urls->second.size() == 1 && imported_per_url[best->url] == 1) {
        found = static_cast<long>(urls->second[0]);
      } else {
        for (size_t i : urls->second) {
          if (NormalizeToString(rules[i]["claim"].get<std::string>()) == key) {
            found = static_cast<long>(i);
          }
        }
      }
    }
    if (found < 0) {
      for (const auto& [r, rt] : claim.reviews) {
        (void)rt;
        for (const std::string& u : {r->url}) {
          auto it = by_url.find(u);
          if (it == by_url.end()) continue;
          for (size_t i : it->second) {
            if (NormalizeToString(rules[i]["claim"].get<std::string>()) == key) {
              found = static_cast<long>(i);
            }
          }
        }
      }
    }

    if (found >= 0) {
      ojson& rule = rules[static_cast<size_t>(found)];
      touched[static_cast<size_t>(found)] = true;
      ojson before = rule;
      rule["claim"] = claim_text;
      rule["rating"] = RatingName(rating);
      rule["review"] = review;
      if (!best->language.empty()) {
        if (!rule.contains("languages")) rule["languages"] = ojson::array();
        AddUnique(rule["languages"], best->language);
      }
      ojson& match = rule["match"];
      if (!match.contains("similar")) match["similar"] = ojson::array();
      AddUnique(match["similar"], claim_text);
      for (const std::string& u : best->appearances) {
        if (!match.contains("urls")) match["urls"] = ojson::array();
        AddUnique(match["urls"], u);
      }
      if (options.derive_keywords && !match.contains("keywords")) {
        ojson k = DeriveKeywords(claim_text);
        if (!k.is_null()) match["keywords"] = ojson::array({k});
      }
      if (!also.empty()) rule["x-also-reviewed"] = also;
      if (!rule.contains("examples")) rule["examples"] = ojson::object();
      if (!rule["examples"].contains("match")) rule["examples"]["match"] = ojson::array();
      AddUnique(rule["examples"]["match"], claim_text);
      std::string id = rule["id"].get<std::string>();
      if (rule == before) {
        report->changes.push_back({ImportChange::kUnchanged, id, "unchanged"});
        ++report->unchanged;
      } else {
        std::string detail;
        for (auto it = rule.begin(); it != rule.end(); ++it) {
          if (!before.contains(it.key()) || before[it.key()] != it.value()) {
            detail += std::string(detail.empty() ? "" : ", ") + it.key();
          }
        }
        report->changes.push_back({ImportChange::kUpdated, id, "updated: " + detail});
        ++report->updated;
        changed = true;
      }
      continue;
    }

    std::string id = IdFromUrl(best->url);
    if (ids.count(id)) {
      id += "-" + ContentDigest(best->url + "\n" + key).substr(0, 6);
    }
    for (int n = 2; ids.count(id); ++n)
      id = IdFromUrl(best->url) + "-" + std::to_string(n);
    ids.insert(id);
    ojson match = {{"similar", ojson::array({claim_text})}};
    if (options.derive_keywords) {
      ojson k = DeriveKeywords(claim_text);
      if (!k.is_null()) {
        match["keywords"] = ojson::array({k});
      } else {
        report->messages.push_back(
            {false, best->where,
             "claim \"" + claim_text + "\" has too few content words for keywords",
             best->input});
      }
    }
    if (!best->appearances.empty()) match["urls"] = best->appearances;
    ojson rule = {{"id", id},
                  {"claim", claim_text},
                  {"rating", RatingName(rating)},
                  {"severity", SeverityName(options.severity)}};
    if (!best->language.empty()) rule["languages"] = ojson::array({best->language});
    rule["match"] = match;
    rule["review"] = review;
    rule["examples"] = {{"match", ojson::array({claim_text})}};
    if (!also.empty()) rule["x-also-reviewed"] = also;
    rules.push_back(rule);
    touched.push_back(true);
    report->changes.push_back({ImportChange::kAdded, id, "added"});
    ++report->added;
    changed = true;
  }
  for (size_t i = 0; i < touched.size(); ++i) {
    if (touched[i]) continue;
    report->changes.push_back({ImportChange::kKept, rules[i]["id"].get<std::string>(),
                               "kept: not in this import"});
    ++report->kept;
  }
  if (rules.empty()) {
    return Status(ErrorKind::kFormat, "no rule could be imported");
  }
  int64_t version = list["list"]["version"].get<int64_t>();
  if (!existing.empty() && changed) {
    ++version;
    list["list"]["version"] = version;
    list["list"]["issued"] = Today(options.now_unix);
    int64_t expires = 0;
    ParseRfc3339(list["list"]["expires"].get<std::string>(), &expires);
    if (expires <= options.now_unix) {
      list["list"]["expires"] = Today(options.now_unix, options.expires_days);
    }
    report->version_bumped = true;
  }
  report->version = version;
  *out_text = list.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
  // What is written must load: check it with the real parser.
  RuleList check;
  Status s = ParseList(*out_text, ParseLimits(), &check);
  if (!s.ok())
    return Status(s.kind(), "the imported list does not parse: " + s.message());
  return Status::Ok();
}

Status ImportClaimReviews(const std::vector<std::string_view>& inputs,
                          std::string_view page_url, const RatingTable& table,
                          const ImportOptions& options, std::string_view existing,
                          ImportRun* run) {
  *run = ImportRun();
  std::vector<ImportedReview> reviews;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ExtractResult result;
    Status s = ExtractClaimReviews(inputs[i], page_url, &result);
    if (!s.ok()) {
      run->failed_input = static_cast<int>(i);
      return s;
    }
    for (ImportMessage& m : result.messages) m.input = i;
    run->inputs.push_back(
        {result.shape, result.reviews.size(), std::move(result.messages)});
    for (ImportedReview& r : result.reviews) {
      r.input = i;
      reviews.push_back(std::move(r));
    }
  }
  return BuildList(reviews, table, options, existing, &run->list_text, &run->report);
}

}  // namespace factlens
