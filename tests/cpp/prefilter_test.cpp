// Tests of the prefilter: it never loses a match (property test over randomised
// lists and posts, fixed seed), the compiled form restores identical verdicts, and
// corrupted or foreign bytes are refused with kind format, never a crash.
#include "factlens/prefilter.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "factlens/binary.h"
#include "factlens/engine.h"
#include "factlens/normalize.h"
#include "nlohmann/json.hpp"
#include "re2/re2.h"
#include "re2/regexp.h"
#include "test_util.h"

// re2/regexp.h brings RE2's own CHECK, which aborts; these tests mean Catch's.
#undef CHECK
#define CHECK(...) \
  INTERNAL_CATCH_TEST("CHECK", Catch::ResultDisposition::ContinueOnFailure, __VA_ARGS__)

namespace factlens {
namespace {

using nlohmann::json;

const char* kWords[] = {"vaccine", "chip",  "gates", "moon", "landing", "staged",
                        "flat",    "earth", "hoax",  "5g",   "tower",   "cure",
                        "bleach",  "ab",    "x",     "kiss", "skunk"};

std::string Word(std::mt19937& rng) {
  return kWords[rng() % (sizeof(kWords) / sizeof(kWords[0]))];
}

// A random pattern from constructs the atom extraction must reason about.
std::string RandomPattern(std::mt19937& rng) {
  switch (rng() % 10) {
    case 0:
      return "\\b" + Word(rng) + "s? (" + Word(rng) + "|" + Word(rng) + ")\\b";
    case 1:
      return Word(rng) + "\\W+(?:\\w+\\W+){0,2}" + Word(rng);
    case 2:
      return "(?:" + Word(rng) + ")?" + Word(rng).substr(0, 2) + "[a-z]*";
    case 3:
      return "[a-c]" + Word(rng) + "|" + Word(rng) + "+";
    case 4:
      return "\\d{2,3}" + Word(rng);
    case 5:
      return "(" + Word(rng) + ")+ " + Word(rng) + "{1,2}";
    case 6:
      return "V[AÄ]CC" + Word(rng).substr(0, 1) + ".*";
    case 7:
      switch (rng() % 4) {
        case 0:
          return ".";
        case 1:
          return "\\x{212A}" + Word(rng);  // KELVIN SIGN, folds to k
        case 2:
          return "(?-i)K" + Word(rng);  // case-sensitive: never in a post
        default:
          return Word(rng) + "\\x{17F}";  // LONG S, folds to s
      }
    case 8:  // (the second word is not word-anchored: \W* may be empty)
      return Word(rng) + (rng() % 2 ? "\\W*" : "[-.]?") + Word(rng);
    default:
      return "\\b" + Word(rng) + "\\b.{0,20}\\b" + Word(rng) + "\\b";
  }
}

json RandomRule(std::mt19937& rng, int i) {
  json match = json::object();
  if (rng() % 2) match["patterns"] = {RandomPattern(rng)};
  if (rng() % 2 || match.empty()) {
    json set = {{"all", {Word(rng) + (rng() % 4 == 0 ? "*" : "")}}};
    if (rng() % 2) set["any"] = {Word(rng), Word(rng) + " " + Word(rng)};
    if (rng() % 3 == 0) set["none"] = {Word(rng)};
    if (rng() % 2) set["within"] = 1 + static_cast<int>(rng() % 6);
    match["keywords"] = {set};
  }
  return {{"id", "r" + std::to_string(i)},
          {"claim", "claim " + std::to_string(i)},
          {"rating", "false"},
          {"severity", "low"},
          {"match", match},
          {"review",
           {{"url", "https://example.org/" + std::to_string(i)},
            {"title", "t"},
            {"publisher", "p"},
            {"date", "2025-01-01"}}}};
}

std::string RandomPost(std::mt19937& rng) {
  std::string post;
  int n = 1 + static_cast<int>(rng() % 14);
  const char* dress[] = {"", "!", " ", "  ", "-", "0", "S"};
  for (int i = 0; i < n; ++i) {
    std::string w = Word(rng);
    if (rng() % 5 == 0) w[0] = static_cast<char>(std::toupper(w[0]));
    if (rng() % 7 == 0) w = "\xD1\x81" + w;  // Cyrillic es: a lookalike prefix
    // The other case forms of k and s (KELVIN SIGN, LONG S), and upper case.
    if (rng() % 6 == 0) w = (rng() % 2 ? "\xE2\x84\xAA" : "\xC5\xBF") + w;
    if (rng() % 6 == 0) w = (rng() % 2 ? "K" : "S") + w;
    post += w + dress[rng() % 7];
    if (rng() % 9 == 0) post += "123";
    if (rng() % 8 != 0) post += ' ';  // (else glued to the next word)
  }
  return post;
}

// Two engines holding the list `text`: one with the prefilter, one checking every
// item of every post everywhere, each pattern with its case-insensitive program in
// the post as it is (the reference).
struct WithAndWithout {
  Engine with, without;
  explicit WithAndWithout(const std::string& text) {
    LoadOptions options;
    options.allow_unsigned = true;
    Status s = with.LoadList(text, options, nullptr);
    INFO(s.message());
    REQUIRE(s.ok());
    options.use_prefilter = false;
    options.use_case_sensitive = false;
    REQUIRE(without.LoadList(text, options, nullptr).ok());
  }
  // Returns the verdict of `post` (JSON), after requiring both engines give it.
  std::string Verdict(const std::string& post) {
    const std::string a = VerdictToJson(with.Check(post, {}), post);
    INFO(post);
    REQUIRE(a == VerdictToJson(without.Check(post, {}), post));
    return a;
  }
};

// A list of one rule per pattern, rule i with patterns[i] alone.
template <size_t kCount>
std::string ListOfPatterns(const char* const (&patterns)[kCount]) {
  json rules = json::array();
  for (size_t i = 0; i < kCount; ++i) {
    json rule = RandomRule(*std::make_unique<std::mt19937>(i), static_cast<int>(i));
    rule["match"] = {{"patterns", {patterns[i]}}};
    rules.push_back(rule);
  }
  return testing::ListWithRules(rules.dump());
}

TEST_CASE(
    "match: a case-insensitive ASCII letter matches its two cases, and U+017F for s, "
    "U+212A for k, nothing else",
    "[prefilter]") {
  // What LazyRegex's case-sensitive programs rest on (CaseSensitiveOnLowered in
  // match.cc): in a text without U+017F and U+212A, a case-insensitive pattern of
  // lower-case ASCII matches where the same pattern, case-sensitive, matches the text
  // ASCII-lowered.
  std::string every;  // every code point but the surrogates, one a line
  for (int32_t cp = 1; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    AppendUtf8(static_cast<uint32_t>(cp), &every);
    every += '\n';
  }
  re2::RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false);
  for (char letter = 'a'; letter <= 'z'; ++letter) {
    re2::RE2 re(std::string("(?m)^") + letter + "$", options);
    REQUIRE(re.ok());
    std::vector<int32_t> matched;
    re2::StringPiece rest(every), hit;
    while (re.Match(rest, 0, rest.size(), re2::RE2::UNANCHORED, &hit, 1)) {
      int32_t cp;
      DecodeUtf8(reinterpret_cast<const unsigned char*>(hit.data()), hit.size(), 0, &cp);
      matched.push_back(cp);
      rest.remove_prefix(hit.data() + hit.size() - rest.data());
    }
    std::vector<int32_t> expected = {letter - 'a' + 'A', letter};
    if (letter == 'k') expected.push_back(0x212A);
    if (letter == 's') expected.push_back(0x17F);
    INFO(letter);
    CHECK(matched == expected);
  }
}

TEST_CASE(
    "match: patterns that can name a capital or stop folding are searched as written",
    "[prefilter]") {
  // Four below ((?-i:), [[:upper:]], and \x4b and \113 naming capitals) would find
  // something else case-sensitively in lowered text than case-insensitively in the
  // post (a URL's path keeps its case), so CaseSensitiveOnLowered must refuse them;
  // it refuses \pL, \Q and (?i) too, without telling them apart. The rest take the
  // case-sensitive program. Every verdict must be the reference's.
  const char* patterns[] = {"(?-i:kiss)",
                            "news\\.example/[[:upper:]]+",
                            "\\x4b\\x49ss",
                            "\\113iss",
                            "\\pLiss",
                            "\\Qkiss\\E",
                            "(?i)kiss",
                            "\\bkiss\\b",
                            "[^a-z]iss",
                            "[a-z]iss",
                            "\\w+iss",
                            "news\\.example/\\W\\w",
                            "[\\x{212A}]iss",
                            "mo\\x{17F}t",
                            "MOST"};
  // Both without the prefilter, so that only the programs differ.
  const std::string text = ListOfPatterns(patterns);
  Engine plain, reference;
  LoadOptions options;
  options.allow_unsigned = true;
  options.use_prefilter = false;
  REQUIRE(plain.LoadList(text, options, nullptr).ok());
  options.use_case_sensitive = false;
  REQUIRE(reference.LoadList(text, options, nullptr).ok());
  int matched = 0;
  for (const std::string post :
       {"see https://news.example/KISS/x", "see https://news.example/Kiss",
        "see https://news.example/\xE2\x84\xAAiss", "https://news.example/\xC5\xBFkiss",
        "a kiss", "MOST of it", "https://news.example/MO\xC5\xBFT",
        "https://news.example/-kISS"}) {
    const std::string verdict = VerdictToJson(plain.Check(post, {}), post);
    INFO(post);
    CHECK(verdict == VerdictToJson(reference.Check(post, {}), post));
    matched += verdict.find("\"ruleId\"") != std::string::npos;
  }
  CHECK(matched == 8);
}

TEST_CASE("prefilter: a URL's U+017F and U+212A match as s and k, as without it",
          "[prefilter]") {
  // A URL's path keeps its characters as written, so these two, which a
  // case-insensitive s and k match, reach the scan there: it reads them as s and k,
  // lets word-anchored atoms start after them, and searches such a post whole.
  const char* patterns[] = {"\\x4b\\x49ss", "\\Qkiss\\E", "\\bkiss\\b",
                            "\\bkiss",      "most",       "\\bmost\\b",
                            "[^x]iss",      "\\Wkiss",    "news\\.example/\\w+ \\bkiss"};
  WithAndWithout engines(ListOfPatterns(patterns));
  const std::string filler(300, 'a');  // past the length searched whole anyway
  int matched = 0;
  for (const std::string url :
       {"https://news.example/\xE2\x84\xAAiss", "https://news.example/MO\xC5\xBFT",
        "https://news.example/\xC5\xBFkiss",
        "https://news.example/x\xE2\x84\xAAKISS\xC5\xBF",
        "https://news.example/k\xC5\xBF\xE2\x84\xAAi"}) {
    for (const std::string& post :
         {"see " + url, filler + " " + url + " " + filler + " kiss"}) {
      matched += engines.Verdict(post).find("\"ruleId\"") != std::string::npos;
    }
  }
  CHECK(matched == 9);
}

TEST_CASE("prefilter: randomised lists give the same verdicts with and without it",
          "[prefilter]") {
  std::mt19937 rng(20250115);
  int compared = 0, matched = 0;
  for (int trial = 0; trial < 40; ++trial) {
    json rules = json::array();
    for (int i = 0; i < 30; ++i) rules.push_back(RandomRule(rng, i));
    WithAndWithout engines(testing::ListWithRules(rules.dump()));
    for (int p = 0; p < 60; ++p) {
      const std::string a = engines.Verdict(RandomPost(rng));
      ++compared;
      matched += a.find("\"ruleId\"") != std::string::npos;
    }
  }
  // The property means little if nothing matched: most posts should.
  CHECK(matched > compared / 2);
}

// A pattern whose matches have a bounded length, the kind RE2 searches for only
// near its atoms (SearchWindow in match.cc); anchors and word boundaries test the
// context at the window's edges.
std::string RandomBoundedPattern(std::mt19937& rng) {
  switch (rng() % 8) {
    case 0:
      return "^" + Word(rng) + " " + Word(rng);
    case 1:
      return Word(rng) + " " + Word(rng) + "$";
    case 2:
      return "\\b" + Word(rng) + "\\b.{0," + std::to_string(rng() % 40) + "}\\b" +
             Word(rng) + "\\b";
    case 3:
      return "\\B" + Word(rng).substr(0, 2) + "[a-z\\x{430}-\\x{44f}]{0,3}";
    case 4:
      return "(?:" + Word(rng) + "|" + Word(rng) + ") (?:\\w+ ){0,3}" + Word(rng);
    case 5:
      return "\\b" + Word(rng) + "s?\\b";
    case 6:
      return "(?m)^" + Word(rng) + "|" + Word(rng) + "\\z";
    default:
      return RandomPattern(rng);
  }
}

TEST_CASE("prefilter: patterns searched near their atoms match as searched everywhere",
          "[prefilter]") {
  // Long posts, where the search range is a small part of the text: every verdict
  // (spans included) must be the one a search of the whole post gives (without
  // the prefilter, CompiledList::Match searches every pattern everywhere).
  std::mt19937 rng(20261201);
  int compared = 0, matched = 0;
  for (int trial = 0; trial < 30; ++trial) {
    json rules = json::array();
    for (int i = 0; i < 20; ++i) {
      json rule = RandomRule(rng, i);
      rule["match"] = {
          {"patterns", {RandomBoundedPattern(rng), RandomBoundedPattern(rng)}}};
      rules.push_back(rule);
    }
    WithAndWithout engines(testing::ListWithRules(rules.dump()));
    for (int p = 0; p < 40; ++p) {
      std::string post;
      const int pieces = 5 + static_cast<int>(rng() % 40);
      for (int k = 0; k < pieces; ++k) post += RandomPost(rng);
      if (rng() % 3 == 0) {  // a URL, whose path keeps its case
        std::string upper = Word(rng);
        for (char& c : upper) c = static_cast<char>(std::toupper(c));
        // and, sometimes, a LONG S or KELVIN SIGN as written (case-insensitive k
        // and s match them: the post is then searched as it is)
        const char* outsider[] = {"", "", "\xC5\xBF", "\xE2\x84\xAA"};
        post += " https://news.example/" + upper + "/" + outsider[rng() % 4] + Word(rng) +
                " ";
      }
      if (rng() % 3 == 0) post += Word(rng);  // a word at the very end
      const std::string a = engines.Verdict(post);
      ++compared;
      matched += a.find("\"ruleId\"") != std::string::npos;
    }
  }
  CHECK(matched > compared / 2);
}

TEST_CASE("prefilter: no match is longer than MaxMatchBytes", "[prefilter]") {
  struct Case {
    const char* pattern;
    int64_t most;
  };
  // A folded letter counts 4 bytes (its other case forms may be longer); a class
  // holds its folded forms already: [k] has U+212A, 3 bytes.
  const Case cases[] = {{"ab", 8},
                        {"12", 2},
                        {"a|bcd", 12},
                        {"x{2,5}", 20},
                        {"x+", -1},
                        {"(?:\\bx\\b)*", -1},
                        {"(?:\\b)*", 0},
                        {"[a-c]", 1},
                        {"[k]", 3},
                        {"(?-i)[a-c]{3}", 3},
                        {".{0,3}", 12},
                        {"\\x{430}", 2},
                        {"(?-i)\\x{430}", 2},
                        {"x{3,}", -1},
                        {"^(?:ab)?$", 8},
                        {"[\\x{10000}]", 4}};
  for (const Case& c : cases) {
    re2::RegexpStatus status;
    re2::Regexp* re =
        re2::Regexp::Parse(c.pattern,
                           static_cast<re2::Regexp::ParseFlags>(re2::Regexp::LikePerl |
                                                                re2::Regexp::FoldCase),
                           &status);
    INFO(c.pattern);
    REQUIRE(re != nullptr);
    CHECK(MaxMatchBytes(re) == c.most);
    re->Decref();
  }
  // And on texts with other case forms and scripts, as RE2 matches (case-insensitive,
  // as the engine compiles patterns): each match spans at most the bound.
  std::mt19937 rng(7);
  re2::RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false);
  int bounded = 0, hits = 0;
  for (int i = 0; i < 400; ++i) {
    const std::string pattern = RandomBoundedPattern(rng);
    re2::RE2 re(pattern, options);
    REQUIRE(re.ok());
    const int64_t most = MaxMatchBytes(re.Regexp());
    if (most < 0) continue;
    ++bounded;
    std::string text = "\xD0\x90\xE2\x84\xAA ";
    for (int k = 0; k < 8; ++k) text += RandomPost(rng);
    re2::StringPiece input(text), hit;
    size_t pos = 0;
    while (pos <= text.size() &&
           re.Match(input, pos, text.size(), re2::RE2::UNANCHORED, &hit, 1)) {
      INFO(pattern << " on " << text);
      CHECK(static_cast<int64_t>(hit.size()) <= most);
      ++hits;
      pos =
          static_cast<size_t>(hit.data() - text.data()) + std::max<size_t>(hit.size(), 1);
    }
  }
  CHECK(bounded > 200);
  CHECK(hits > 100);
}

TEST_CASE("prefilter: no post keeps a case form of k or s other than k and s",
          "[prefilter]") {
  // ParseForAtoms relies on it (prefilter.h): atoms of a pattern parsed without
  // case folding lack U+212A (KELVIN SIGN) and U+017F (LONG S), so no normalised
  // post may hold them, whatever the code point and its neighbours.
  const std::string kelvin = "\xE2\x84\xAA", long_s = "\xC5\xBF";
  int checked = 0;
  for (uint32_t c = 1; c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    std::string one;
    AppendUtf8(c, &one);
    for (const std::string& text : {one, "a" + one + "b", one + "\xCC\x81"}) {
      const std::string out = NormalizeToString(text);
      if (out.find(kelvin) != std::string::npos ||
          out.find(long_s) != std::string::npos) {
        FAIL("U+" << std::hex << c << " normalises to \"" << out << "\"");
      }
    }
    ++checked;
  }
  CHECK(checked == 0x110000 - 1 - 0x800);
}

TEST_CASE("prefilter: patterns parsed without folding keep the folded estimate's verdict",
          "[prefilter]") {
  // ParseForAtoms decides `large` from a bound when it skips the folded parse; it
  // must agree with the folded parse's estimate at every threshold.
  std::mt19937 rng(99);
  std::vector<std::string> patterns = {"kiss",
                                       "skunks",
                                       "\\bkiss(es)? (ask|sks)\\b",
                                       "s",
                                       "k",
                                       "K",
                                       "(?i)kiss",
                                       "(?-i)Kiss",
                                       "[k]iss",
                                       "\\x{212A}",
                                       "\\x4Bs",
                                       "k{10}",
                                       "(sk){3,5}s?",
                                       "ab|s|k",
                                       "kissing.*sun",
                                       "(?:ks)+",
                                       "s*k",
                                       "a",
                                       "ab",
                                       "\\bvaccines? (cause|causes) autism\\b"};
  for (int i = 0; i < 500; ++i) patterns.push_back(NormalizePattern(RandomPattern(rng)));
  // The bench's kinds of pattern, and classes folding changes.
  for (const char* p :
       {"\\bstas\\W+(?:\\w+\\W+){0,3}kusk\\b", "kiskus\\w*", "\\bs[kx]y\\b", "[^k]s",
        "[a-z]+ks", "[K-S]{2}", "[j-t]|[J-T]", "(sa|ka|sb|kb){2,4}", "\\d+ks",
        "[[:alpha:]]s", "\\Sk", "[s-z0-9_]\\s+k", "(?:skis|skas|skos)[^a-z]"}) {
    patterns.push_back(NormalizePattern(p));
  }
  const int flags = re2::Regexp::LikePerl | re2::Regexp::FoldCase;
  int fast = 0, bounded = 0;
  for (const std::string& p : patterns) {
    re2::RegexpStatus status;
    re2::Regexp* folded =
        re2::Regexp::Parse(p, static_cast<re2::Regexp::ParseFlags>(flags), &status);
    REQUIRE(folded != nullptr);
    const int64_t estimate = EstimateProgramSize(folded);
    folded->Decref();
    re2::Regexp* plain = re2::Regexp::Parse(
        p, static_cast<re2::Regexp::ParseFlags>(flags & ~re2::Regexp::FoldCase), &status);
    REQUIRE(plain != nullptr);
    if (FoldFree(plain)) {
      INFO(p);
      CHECK(FoldedEstimateBound(plain) >= estimate);
      ++bounded;
    }
    plain->Decref();
    for (int64_t threshold : {0, 8, 50, 100, 120, 300, 1000, 40000}) {
      bool large = true;
      re2::Regexp* parsed = ParseForAtoms(p, flags, threshold, &large, &status);
      REQUIRE(parsed != nullptr);
      fast += (parsed->parse_flags() & re2::Regexp::FoldCase) == 0;
      parsed->Decref();
      INFO(p << " at " << threshold << ", folded estimate " << estimate);
      CHECK(large == (estimate > threshold));
    }
  }
  CHECK(bounded > 400);
  CHECK(fast > 500);
  re2::RegexpStatus status;
  bool large = false;
  CHECK(ParseForAtoms("(unclosed", flags, 100, &large, &status) == nullptr);
  CHECK(status.Text() == "missing ): (unclosed");
}

TEST_CASE("prefilter: k and s match in every case form, with and without it",
          "[prefilter]") {
  const char* patterns[] = {"\\bkiss\\b", "\\bskunks?\\b", "\\x{212A}iss", "mo\\x{17F}t"};
  WithAndWithout engines(ListOfPatterns(patterns));
  int matched = 0;
  for (const std::string post :
       {"a KISS", "a \xE2\x84\xAAiss", "\xC5\xBFkunk", "SKUNKS", "kiss", "MOST",
        "mo\xC5\xBFt", "Kiss \xE2\x84\xAA", "ki ss"}) {
    matched += engines.Verdict(post).find("\"ruleId\"") != std::string::npos;
  }
  CHECK(matched == 8);
}

TEST_CASE("prefilter: atoms of a phrase pattern are its variants", "[prefilter]") {
  re2::RegexpStatus status;
  re2::Regexp* re =
      re2::Regexp::Parse("\\bchips? (are|is) bad", re2::Regexp::LikePerl, &status);
  REQUIRE(re != nullptr);
  RegexpAtoms atoms = ExtractAtoms(re);
  re->Decref();
  REQUIRE(atoms.usable);
  REQUIRE(atoms.groups.size() == 1);
  const std::vector<std::string> expected = {"chip are bad", "chip is bad",
                                             "chips are bad", "chips is bad"};
  CHECK(atoms.groups[0] == expected);
  re = re2::Regexp::Parse(".*", re2::Regexp::LikePerl, &status);
  CHECK_FALSE(ExtractAtoms(re).usable);
  re->Decref();
}

TEST_CASE("prefilter: a pattern without atoms is always checked", "[prefilter]") {
  Prefilter pf;
  pf.AddItem(0, {{"moon"}, {"landing", "staged"}});
  pf.AddAlwaysItem(1);
  pf.Build(2);
  CHECK(pf.Candidates("the moon") == std::vector<uint32_t>{1});
  const std::vector<uint32_t> both = {0, 1};
  CHECK(pf.Candidates("the MOON was staged") == both);
}

// An item of several groups is keyed by the group whose atoms name the fewest
// items: a post holding a common atom walks the keys of the few items whose lead
// group holds it, not of every item naming it.
TEST_CASE("prefilter: an item of several groups is keyed by its lead group alone",
          "[prefilter]") {
  Prefilter pf;
  // (The x ends each: no rare atom is in another.)
  const auto rare = [](uint32_t i) { return "rare" + std::to_string(i) + "x"; };
  // 40 items of a common atom and a rare one of their own, the common one first in
  // half of them; 10 of three groups: the common atom, "middle" (in all 10), and
  // two rare atoms of their own.
  for (uint32_t i = 0; i < 40; ++i) {
    if (i % 2 == 0) {
      pf.AddItem(i, {{"vaccine"}, {rare(i)}});
    } else {
      pf.AddItem(i, {{rare(i)}, {"vaccine"}});
    }
  }
  for (uint32_t i = 40; i < 50; ++i)
    pf.AddItem(i, {{"vaccine"}, {"middle"}, {rare(i), rare(i + 100)}});
  pf.Build(50);
  // Each item's rare atoms, and one key each for "vaccine" and "middle" (their
  // items are keyed by their other groups). Keyed by every group: 40 * 2 + 10 * 4.
  CHECK(pf.key_count() == 40 + 10 * 2 + 2);
  ByteWriter w;
  pf.Serialize(&w);
  Prefilter restored;
  ByteReader r(w.bytes());
  REQUIRE(restored.Deserialize(&r));
  for (const Prefilter* p : {&pf, &restored}) {
    CHECK(p->Candidates("the vaccine").empty());
    CHECK(p->Candidates(rare(7) + " and " + rare(8)).empty());
    CHECK(p->Candidates("the vaccine " + rare(7) + " and " + rare(8)) ==
          std::vector<uint32_t>{7, 8});
    CHECK(p->Candidates(rare(7) + " vaccine").size() == 1);
    CHECK(p->Candidates("vaccine middle").empty());
    CHECK(p->Candidates("vaccine " + rare(41)).empty());
    CHECK(p->Candidates("middle " + rare(141) + " vaccine") == std::vector<uint32_t>{41});
    CHECK(p->Candidates(rare(42) + " middle vaccine " + rare(43) + " " + rare(44)) ==
          std::vector<uint32_t>{42, 43, 44});
  }
}

// The dense states are a DFA of the shallowest states, derived from the records:
// a scan through any number of them finds what the sparse records alone find.
std::string AsciiUpper(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  return s;
}

// Both tries: the scan's automaton and the word-anchored atoms' trie (a third of
// the atoms), each dense to the same number of states or fewer (it may have fewer).
TEST_CASE("prefilter: dense states give the candidates of the sparse scan and walk",
          "[prefilter]") {
  std::mt19937 rng(57);
  for (int list = 0; list < 20; ++list) {
    Prefilter pf;
    std::vector<std::string> atoms;
    const uint32_t items = 20 + static_cast<uint32_t>(rng() % 300);
    for (uint32_t i = 0; i < items; ++i) {
      std::vector<std::vector<std::string>> groups(1 + rng() % 2);
      std::vector<std::vector<bool>> word_start;
      for (auto& g : groups) {
        word_start.emplace_back();
        for (int k = 0; k < 2; ++k) {
          std::string atom = Word(rng);
          if (rng() % 3 == 0) atom = atom.substr(0, 1 + rng() % atom.size());
          if (rng() % 4 == 0) atom += " " + Word(rng);
          if (rng() % 9 == 0) atom = "\xD1\x81" + atom;  // bytes outside ASCII
          g.push_back(atom);
          atoms.push_back(atom);
          word_start.back().push_back(rng() % 3 == 0);
        }
      }
      pf.AddItem(i, groups, word_start);
    }
    pf.Build(items);
    REQUIRE(pf.state_count() > 1);
    REQUIRE(pf.word_state_count() > 1);
    // (Small lists: all fit.)
    REQUIRE(pf.dense_states() == pf.state_count());
    REQUIRE(pf.word_dense_states() == pf.word_state_count());
    std::vector<std::string> posts;
    // Random words with atoms planted, after a space, a letter or a hyphen, some
    // in capitals.
    for (int p = 0; p < 30; ++p) {
      std::string post = RandomPost(rng);
      for (int k = static_cast<int>(rng() % 4); k > 0; --k) {
        std::string atom = atoms[rng() % atoms.size()];
        if (rng() % 3 == 0) atom = AsciiUpper(atom);
        post += std::string(1, " x-"[rng() % 3]) + atom;
      }
      posts.push_back(post + RandomPost(rng));
    }
    std::vector<std::vector<uint32_t>> dense;
    for (const std::string& post : posts) dense.push_back(pf.Candidates(post));
    size_t found = 0;
    for (size_t states :
         {size_t{0}, size_t{1}, size_t{2}, size_t{7}, pf.word_state_count() / 3,
          pf.word_state_count() - 1, pf.state_count() / 3, pf.state_count() - 1}) {
      pf.SetDenseStates(states);
      CHECK(pf.dense_states() == std::min<size_t>(states, pf.state_count()));
      CHECK(pf.word_dense_states() == std::min<size_t>(states, pf.word_state_count()));
      for (size_t p = 0; p < posts.size(); ++p) {
        INFO("list " << list << ", dense states " << states << ", post " << posts[p]);
        REQUIRE(pf.Candidates(posts[p]) == dense[p]);
        found += dense[p].size();
      }
    }
    CHECK(found > 0);
  }
}

std::string AsciiLowered(std::string s) {
  for (char& c : s) c = AsciiLower(c);
  return s;
}

// The scan's answer is exactly what a naive search gives: the items each of whose
// groups has an atom (ASCII lower-cased) somewhere in the text (lower-cased), plus
// the items always checked. Atoms of 1 byte to several words, with capitals and
// bytes outside ASCII, sharing prefixes (cut short where they part, their tails
// compared) and suffixes (dictionary links), planted whole or cut one byte short
// and at a post's end; the restored form answers the same.
TEST_CASE("prefilter: candidates are exactly those of a naive search for the atoms",
          "[prefilter]") {
  std::mt19937 rng(58);
  size_t found = 0, near_misses = 0;
  for (int list = 0; list < 30; ++list) {
    Prefilter pf;
    const uint32_t items = 20 + static_cast<uint32_t>(rng() % 300);
    std::vector<std::vector<std::vector<std::string>>> item_groups(items);
    std::vector<std::string> atoms;
    for (uint32_t i = 0; i < items; ++i) {
      if (rng() % 40 == 0) {
        pf.AddAlwaysItem(i);
        continue;
      }
      std::vector<std::vector<std::string>> groups(1 + rng() % 3);
      for (auto& g : groups) {
        for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k) {
          std::string atom = Word(rng);
          if (rng() % 3 == 0) atom = atom.substr(0, 1 + rng() % atom.size());
          if (rng() % 3 == 0) atom += " " + Word(rng);
          if (rng() % 4 == 0) atom = Word(rng) + " " + atom;
          if (rng() % 9 == 0) atom = "\xD1\x81" + atom;  // bytes outside ASCII
          if (rng() % 5 == 0 && atom[0] >= 'a' && atom[0] <= 'z') atom[0] -= 'a' - 'A';
          g.push_back(atom);
          atoms.push_back(atom);
        }
      }
      pf.AddItem(i, groups);
      for (auto& g : groups) {  // (the reference searches the lowered text)
        for (std::string& atom : g) atom = AsciiLowered(atom);
      }
      item_groups[i] = std::move(groups);
    }
    pf.Build(items);
    ByteWriter w;
    pf.Serialize(&w);
    Prefilter restored;
    ByteReader r(w.bytes());
    REQUIRE(restored.Deserialize(&r));
    REQUIRE(r.at_end());

    for (int p = 0; p < 40; ++p) {
      std::string post = RandomPost(rng);
      for (int k = static_cast<int>(rng() % 4); k > 0; --k) {
        const std::string& atom = atoms[rng() % atoms.size()];
        post += (rng() % 2 ? " " : "") + atom.substr(0, atom.size() - (rng() % 4 == 0));
      }
      const std::string lowered = AsciiLowered(post);
      std::vector<uint32_t> expected;
      for (uint32_t i = 0; i < items; ++i) {
        bool all = true, any_group = false;
        for (const auto& g : item_groups[i]) {
          bool any = false;
          for (const std::string& atom : g)
            any |= lowered.find(atom) != std::string::npos;
          all &= any;
          any_group |= any;
        }
        if (item_groups[i].empty() || all) expected.push_back(i);
        near_misses += !item_groups[i].empty() && any_group && !all;
      }
      INFO("list " << list << ", post " << post);
      REQUIRE(pf.Candidates(post) == expected);
      REQUIRE(restored.Candidates(post) == expected);
      found += expected.size();
    }
  }
  CHECK(found > 1000);
  CHECK(near_misses > 1000);  // items with some but not all groups present
}

TEST_CASE("prefilter: AsciiAlnumRunEnd ends a run where the first other byte is",
          "[prefilter]") {
  // Every byte value at every place of an 8-byte block and its edges, in runs of
  // letters and digits of every length up to 20, against IsAsciiAlnum byte by
  // byte; and the text's end inside and outside a block.
  auto expected = [](std::string_view text, size_t i) {
    while (i < text.size() && IsAsciiAlnum(static_cast<unsigned char>(text[i]))) ++i;
    return i;
  };
  const std::string run = "aZ09mQ7xKb3Tz8YwLc4N";
  size_t checked = 0;
  for (int b = 0; b < 256; ++b) {
    for (size_t before = 0; before <= run.size(); ++before) {
      std::string text = run.substr(0, before);
      text += static_cast<char>(b);
      text += "tail of the text, 8 bytes and more";
      for (size_t from : {size_t{0}, before / 2, before}) {
        CHECK(AsciiAlnumRunEnd(text, from) == expected(text, from));
        ++checked;
      }
      // The run up to the text's end, no other byte after it.
      const std::string whole = run.substr(0, before);
      CHECK(AsciiAlnumRunEnd(whole, 0) == whole.size());
    }
  }
  CHECK(AsciiAlnumRunEnd("abc", 3) == 3);
  CHECK(AsciiAlnumRunEnd("abc", 7) == 7);
  CHECK(checked == 256 * (run.size() + 1) * 3);
}

// Word-anchored atoms (a trie walked from each place a word can start) and the
// others (the automaton) in one list, even in one group: the candidates are
// exactly a naive search's, where an anchored atom counts only at the text's
// start or after a byte that is not an ASCII letter or digit. Posts plant atoms
// after spaces, letters, digits, '_', '-' and bytes outside ASCII.
TEST_CASE("prefilter: word-anchored atoms count only where a word can start",
          "[prefilter]") {
  std::mt19937 rng(59);
  auto alnum = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  // True if `atom` (lower case) occurs in `text` (lowered), at a word start if
  // `word`.
  auto occurs = [&](const std::string& text, const std::string& atom, bool word) {
    for (size_t at = text.find(atom); at != std::string::npos;
         at = text.find(atom, at + 1)) {
      if (!word || at == 0 || !alnum(text[at - 1])) return true;
    }
    return false;
  };
  const char* before[] = {" ", "", "x", "7", "_", "-", "\xD1\x81", "\n"};
  size_t found = 0, inside_words = 0, words_seen = 0;
  for (int list = 0; list < 30; ++list) {
    Prefilter pf;
    const uint32_t items = 20 + static_cast<uint32_t>(rng() % 200);
    struct Atom {
      std::string text;
      bool word;
    };
    std::vector<std::vector<std::vector<Atom>>> item_groups(items);
    std::vector<std::string> atoms;
    for (uint32_t i = 0; i < items; ++i) {
      std::vector<std::vector<std::string>> groups(1 + rng() % 3);
      std::vector<std::vector<bool>> word_start(groups.size());
      for (size_t g = 0; g < groups.size(); ++g) {
        for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k) {
          std::string atom = Word(rng);
          if (rng() % 3 == 0) atom = atom.substr(0, 1 + rng() % atom.size());
          if (rng() % 3 == 0) atom += " " + Word(rng);
          if (rng() % 9 == 0) atom = "\xD1\x81" + atom;
          const bool word = rng() % 3 != 0;
          groups[g].push_back(atom);
          word_start[g].push_back(word);
          atoms.push_back(atom);
        }
      }
      for (size_t g = 0; g < groups.size(); ++g) {
        item_groups[i].emplace_back();
        for (size_t k = 0; k < groups[g].size(); ++k)
          item_groups[i][g].push_back({groups[g][k], word_start[g][k]});
      }
      // The same atom may be anchored in one group and not in another.
      pf.AddItem(i, groups, word_start);
    }
    pf.Build(items);
    REQUIRE(pf.word_state_count() > 1);
    REQUIRE(pf.state_count() > 1);
    ByteWriter w;
    pf.Serialize(&w);
    Prefilter restored;
    ByteReader r(w.bytes());
    REQUIRE(restored.Deserialize(&r));

    for (int p = 0; p < 40; ++p) {
      std::string post = RandomPost(rng);
      for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k)
        post += before[rng() % 8] + atoms[rng() % atoms.size()];
      const std::string lowered = AsciiLowered(post);
      std::vector<uint32_t> expected;
      for (uint32_t i = 0; i < items; ++i) {
        bool all = true;
        for (const auto& g : item_groups[i]) {
          bool any = false;
          for (const Atom& a : g) {
            const bool here = occurs(lowered, a.text, a.word);
            any |= here;
            if (a.word) {
              words_seen += here;
              inside_words += !here && occurs(lowered, a.text, false);
            }
          }
          all &= any;
        }
        if (all) expected.push_back(i);
      }
      INFO("list " << list << ", post " << post);
      REQUIRE(pf.Candidates(post) == expected);
      REQUIRE(restored.Candidates(post) == expected);
      found += expected.size();
    }
  }
  CHECK(found > 1000);
  CHECK(words_seen > 1000);
  CHECK(inside_words > 100);  // anchored atoms present only inside words
}

// The verdicts of patterns whose atoms may or may not be word-anchored, on posts
// whose words are glued by nothing, spaces, punctuation, '_', digits, newlines
// and bytes outside ASCII: the same with the prefilter as without it.
TEST_CASE("prefilter: word-anchored atoms lose no match, whatever joins the words",
          "[prefilter]") {
  std::mt19937 rng(60);
  // (@1, @2 and @3 stand for words.)
  const char* templates[] = {
      "@1\\W*@2",    "@1[-.]?@2",     "@1\\W+@2", "\\b@1",
      "@1\\b",       "\\b-?@1",       "^@1",      "(?m)^@1",
      "[-_]@1",      "\\d+@1",        "\\B@1",    "(?:@1|\\b@2)@3",
      "@1\\s*\\b@2", "\\b(?:@1|-@2)", "[^a-z]@1", "@1(?:\\W+\\w+){0,2}\\W+@2"};
  const char* glue[] = {"", " ", "-", "_", ".", "\n", "7", "\xD1\x81", "! ", "  "};
  int compared = 0, matched = 0;
  for (int trial = 0; trial < 30; ++trial) {
    json rules = json::array();
    for (int i = 0; i < 20; ++i) {
      std::string pattern = templates[rng() % (sizeof(templates) / sizeof(templates[0]))];
      for (const char* slot : {"@1", "@2", "@3"}) {
        const size_t at = pattern.find(slot);
        if (at != std::string::npos) pattern.replace(at, 2, Word(rng));
      }
      json rule = RandomRule(rng, i);
      rule["match"] = {{"patterns", {pattern}}};
      rules.push_back(rule);
    }
    WithAndWithout engines(testing::ListWithRules(rules.dump()));
    for (int p = 0; p < 80; ++p) {
      std::string post;
      for (int k = 1 + static_cast<int>(rng() % 8); k > 0; --k)
        post += glue[rng() % (sizeof(glue) / sizeof(glue[0]))] + Word(rng);
      const std::string a = engines.Verdict(post);
      ++compared;
      matched += a.find("\"ruleId\"") != std::string::npos;
    }
  }
  CHECK(matched > compared / 3);
}

// ExtractAtoms marks an atom word-anchored only where every match has no word
// byte before it: after \b and a word byte, ^, or a piece ending in \W, a space
// or punctuation.
TEST_CASE("prefilter: atoms after \\b, ^ or a non-word piece are word-anchored",
          "[prefilter]") {
  struct Case {
    const char* pattern;
    std::vector<std::string> atoms;  // of the strongest group
    std::vector<bool> word_start;
  };
  const Case cases[] = {
      {"\\bvaccine", {"vaccine"}, {true}},
      {"vaccine", {"vaccine"}, {false}},
      {"\\b-vaccine", {"-vaccine"}, {false}},  // \b before '-': a word byte before
      {"^vaccine", {"vaccine"}, {true}},
      {"(?m)^vaccine", {"vaccine"}, {true}},
      {"\\b(?:chip|-chip)", {"-chip", "chip"}, {false, true}},
      {"(?:\\bchip|chip)s", {"chips"}, {false}},  // one atom from both: not anchored
      {"[a-z]+\\W+gatesss", {"gatesss"}, {true}},
      {"[a-z]+ gatesss", {" gatesss"}, {false}},   // the space is in the atom
      {"\\d+[-_]+gatesss", {"gatesss"}, {false}},  // '_' is a word byte
      {"\\d+[-.]+gatesss", {"gatesss"}, {true}},
      {"\\w+(?:\\W+\\w+){0,2}\\W+towers", {"towers"}, {true}},
      {"x*\\W*towers", {"towers"}, {false}},  // \W* may be empty, after x
      {"\\btower\\b.{0,9}\\bcure", {"tower"}, {true}},
  };
  for (const Case& c : cases) {
    INFO(c.pattern);
    re2::RegexpStatus status;
    re2::Regexp* re = re2::Regexp::Parse(c.pattern, re2::Regexp::LikePerl, &status);
    REQUIRE(re != nullptr);
    const RegexpAtoms atoms = ExtractAtoms(re);
    re->Decref();
    REQUIRE(atoms.usable);
    CHECK(atoms.groups[0] == c.atoms);
    CHECK(atoms.word_start[0] == c.word_start);
  }
}

TEST_CASE("prefilter: a corrupted scan form is refused or scans in range",
          "[prefilter]") {
  // The compiled form's checksum catches accidents, not crafted bytes: every
  // index of the scan form is checked on import. Flip words of a real form; any
  // form accepted must still answer (and, under a sanitizer, stay in bounds).
  std::mt19937 rng(31);
  Prefilter pf;
  for (uint32_t i = 0; i < 60; ++i) {
    std::vector<std::vector<std::string>> groups(1 + rng() % 2);
    for (auto& g : groups) {
      for (int k = 0; k < 2; ++k)
        g.push_back(Word(rng) + (rng() % 2 ? " " + Word(rng) : ""));
    }
    pf.AddItem(i, groups);
  }
  pf.AddAlwaysItem(60);
  pf.Build(61);
  ByteWriter w;
  pf.Serialize(&w);
  const std::string form = w.bytes();
  std::vector<std::string> posts;
  for (int p = 0; p < 4; ++p) posts.push_back(RandomPost(rng));
  int accepted = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = form;
    for (int flips = 1 + rng() % 3; flips > 0; --flips) {
      const size_t at = (rng() % (bad.size() / 4)) * 4;
      const uint32_t v = rng() % 4 == 0 ? 0xFFFFFFFFu : rng() % 64;
      std::memcpy(&bad[at], &v, 4);
    }
    Prefilter restored;
    ByteReader r(bad);
    if (!restored.Deserialize(&r)) continue;
    ++accepted;
    for (const std::string& post : posts) {
      for (uint32_t item : restored.Candidates(post))
        REQUIRE(item < restored.item_count());
    }
  }
  Prefilter same;
  ByteReader r(form);
  REQUIRE(same.Deserialize(&r));
  for (const std::string& post : posts)
    CHECK(same.Candidates(post) == pf.Candidates(post));
  CHECK(accepted < 3000);
}

std::string BenchLikeList() {
  json rules = json::array();
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) rules.push_back(RandomRule(rng, i));
  rules.push_back(json::parse(
      testing::RuleJson("u", R"({"urls":["https://fake.example/a","bad.example"]})",
                        "altered", "critical", R"(,"regions":["DE"])")));
  return testing::ListWithRules(rules.dump(), 3);
}

// What the compiled-form tests start from: an engine with BenchLikeList() loaded
// (an unsigned draft) and the list's compiled form.
struct ExportedBenchLike {
  Engine engine;
  LoadOptions options;
  LoadedListInfo info;
  std::string blob;
  ExportedBenchLike() {
    options.allow_unsigned = true;
    REQUIRE(engine.LoadList(BenchLikeList(), options, &info).ok());
    REQUIRE(engine.ExportCompiled(info.info.id, &blob).ok());
  }
};

TEST_CASE_METHOD(ExportedBenchLike,
                 "engine: a restored compiled list gives identical verdicts",
                 "[prefilter]") {
  Engine restored;
  LoadedListInfo restored_info;
  Status s = restored.LoadCompiled(blob, options, &restored_info);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(restored_info.info.id == info.info.id);
  CHECK(restored_info.info.version == 3);
  CHECK(restored_info.rule_count == info.rule_count);
  std::mt19937 rng(99);
  for (int p = 0; p < 300; ++p) {
    std::string post = RandomPost(rng);
    if (p % 10 == 0)
      post += " https://news.bad.example/x https://fake.example/a?utm_source=1";
    CheckContext context{p % 2 ? "DE" : "", ""};
    REQUIRE(VerdictToJson(engine.Check(post, context), post) ==
            VerdictToJson(restored.Check(post, context), post));
    // The similarity index comes back from its own section, not rebuilt.
    auto ranked = [](const std::vector<SearchResult>& results) {
      std::string out;
      for (const SearchResult& r : results) {
        out += r.rule->id + "=" + std::to_string(r.score) + " ";
      }
      return out;
    };
    REQUIRE(ranked(engine.Search(post, 10)) == ranked(restored.Search(post, 10)));
  }
  // The same export from the restored list: the form is stable.
  std::string again;
  REQUIRE(restored.ExportCompiled(info.info.id, &again).ok());
  CHECK(again == blob);
}

// The wasm binding takes the compiled form part by part (wasm memory keeps its
// peak, so the form must never be whole in it): header, then each section's tag
// and length and its bytes, then the checksum, which together are the form.
TEST_CASE_METHOD(ExportedBenchLike,
                 "engine: the compiled form comes part by part, each section on its own",
                 "[prefilter]") {
  std::vector<std::string> parts;
  REQUIRE(engine
              .ExportCompiled(info.info.id,
                              [&](std::string_view part) { parts.emplace_back(part); })
              .ok());
  std::string joined;
  for (const std::string& part : parts) joined += part;
  CHECK(joined == blob);
  // 12 bytes of header, the 8-byte checksum, and 8 sections (LIST, LOAD, RULE with
  // its records given as they are, PATT, KEYW, URLS, PREF, SIMI) between them.
  REQUIRE(parts.size() >= 2 + 8 * 2);
  CHECK(parts.front().size() == 12);
  CHECK(parts.back().size() == 8);
  uint32_t count = 0;
  std::memcpy(&count, parts.front().data() + 8, 4);
  CHECK(count == 8);
  size_t largest = 0;
  for (const std::string& part : parts) largest = std::max(largest, part.size());
  CHECK(largest < blob.size() / 2);
  CHECK(engine.ExportCompiled("nope", [](std::string_view) { FAIL("no part"); }).kind() ==
        ErrorKind::kNotFound);
}

// What the wasm binding does: the form stays outside (a JavaScript Uint8Array) and
// each read copies a part into a fresh buffer. Here the previous part is
// overwritten, then freed, before the next is made, so a view kept past the next
// read shows (wrong bytes here, a use after free under ASan).
struct PartReader {
  const std::string& form;
  std::vector<std::pair<size_t, size_t>> reads;  // (offset, size)
  std::unique_ptr<char[]> part;
  size_t part_size = 0;
  std::string_view operator()(size_t offset, size_t size) {
    REQUIRE(offset <= form.size());
    REQUIRE(size <= form.size() - offset);
    if (part) std::memset(part.get(), 0xA5, part_size);
    part.reset();
    part.reset(new char[size > 0 ? size : 1]);
    part_size = size;
    std::memcpy(part.get(), form.data() + offset, size);
    reads.emplace_back(offset, size);
    return std::string_view(part.get(), size);
  }
};

// Returns `form` with its checksum made right again, so a change to its body gets
// past the checksum to the sections' own checks.
// Loads the list text `list` into *engine (unsigned allowed, as `options` is made)
// and returns its compiled form.
std::string CompiledForm(const std::string& list, Engine* engine, LoadOptions* options) {
  options->allow_unsigned = true;
  LoadedListInfo info;
  REQUIRE(engine->LoadList(list, *options, &info).ok());
  std::string blob;
  REQUIRE(engine->ExportCompiled(info.info.id, &blob).ok());
  return blob;
}

// Where section `tag` of a compiled form is, from its section table (after the
// 12-byte header, each section's tag, length and bytes): {begin, size}, or {0, 0}.
std::pair<size_t, size_t> FormSection(const std::string& form, const char (&tag)[5]) {
  uint32_t count = 0;
  std::memcpy(&count, form.data() + 8, 4);
  size_t at = 12;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t length = 0;
    std::memcpy(&length, form.data() + at + 4, 4);
    if (form.compare(at, 4, tag) == 0) return {at + 8, length};
    at += 8 + length;
  }
  return {0, 0};
}

std::string WithChecksum(std::string form) {
  const uint64_t sum = Checksum64(std::string_view(form).substr(0, form.size() - 8));
  std::memcpy(&form[form.size() - 8], &sum, 8);
  return form;
}

TEST_CASE_METHOD(ExportedBenchLike,
                 "engine: a compiled form read part by part restores the same list",
                 "[prefilter]") {
  Engine restored;
  LoadedListInfo restored_info;
  PartReader reader{blob};
  Status s = restored.LoadCompiled(
      blob.size(), [&](size_t offset, size_t size) { return reader(offset, size); },
      options, &restored_info);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(restored_info.rule_count == info.rule_count);
  std::mt19937 rng(31);
  for (int p = 0; p < 200; ++p) {
    std::string post = RandomPost(rng);
    if (p % 10 == 0) post += " https://fake.example/a";
    REQUIRE(VerdictToJson(engine.Check(post, {}), post) ==
            VerdictToJson(restored.Check(post, {}), post));
  }
  std::string again;
  REQUIRE(restored.ExportCompiled(info.info.id, &again).ok());
  CHECK(again == blob);
  // The reads: the header, the checksum's parts (in order, covering everything
  // before the checksum), the checksum, each section's tag and length, then each
  // of the 8 sections once (LOAD first), none of them twice. (The sections here
  // are smaller than an import's window, so each is one read: windows are
  // hash_test's.)
  size_t at = 0, i = 2;
  REQUIRE(reader.reads.size() > 2);
  for (; i < reader.reads.size() && at < blob.size() - 8; ++i) {
    CHECK(reader.reads[i].first == at);
    CHECK(reader.reads[i].second <= Engine::kReadPart);
    at += reader.reads[i].second;
  }
  CHECK(at == blob.size() - 8);
  REQUIRE(i < reader.reads.size());
  CHECK(reader.reads[i] == std::make_pair(blob.size() - 8, size_t{8}));
  std::vector<std::pair<size_t, size_t>> sections(reader.reads.begin() + i + 1 + 8,
                                                  reader.reads.end());
  CHECK(sections.size() == 8);
  for (const auto& r : sections) CHECK(r.second <= CompiledList::kImportWindow);
  std::sort(sections.begin(), sections.end());
  CHECK(std::adjacent_find(sections.begin(), sections.end()) == sections.end());
  size_t section_bytes = 0;
  for (const auto& r : sections) section_bytes += r.second;
  CHECK(section_bytes == blob.size() - 12 - 8 * 8 - 8);
}

// The wasm binding's restore with `transfer`: the form stays in a JavaScript buffer
// the engine keeps, and the list reads each rule's record from there on first need
// instead of copying the records into its own memory.
TEST_CASE_METHOD(ExportedBenchLike,
                 "engine: a list that keeps its reader reads its rule records through it",
                 "[prefilter]") {
  PartReader reader{blob};  // outlives `restored`, which keeps a reader calling it
  bool failing = false;
  Engine restored;
  LoadedListInfo restored_info;
  Status s = restored.LoadCompiled(
      blob.size(),
      [&](size_t offset, size_t size) {
        return failing ? std::string_view() : reader(offset, size);
      },
      options, &restored_info, /*keep_reader=*/true);
  INFO(s.message());
  REQUIRE(s.ok());
  const CompiledList* list = restored.Compiled(info.info.id);
  REQUIRE(list != nullptr);
  const auto [rule_begin, rule_size] = FormSection(blob, "RULE");
  const size_t rule_end = rule_begin + rule_size;
  REQUIRE(rule_end > rule_begin);
  // What the list still reads (the wasm wrapper keeps those bytes alone): the
  // records, the RULE section's end, where the export says they lie.
  const auto [kept_begin, kept_end] = list->kept_form_range();
  CHECK(kept_begin > rule_begin);
  CHECK(kept_end == rule_end);
  std::pair<uint64_t, uint64_t> exported_records;
  std::string streamed;
  REQUIRE(engine
              .ExportCompiled(
                  info.info.id, [&](std::string_view part) { streamed.append(part); },
                  &exported_records)
              .ok());
  CHECK(streamed == blob);
  CHECK(exported_records == std::pair<uint64_t, uint64_t>(kept_begin, kept_end));
  CHECK(engine.Compiled(info.info.id)->kept_form_range() ==
        std::pair<size_t, size_t>(0, 0));
  const size_t load_reads = reader.reads.size();
  std::mt19937 rng(31);
  int matched = 0;
  for (int p = 0; p < 200; ++p) {
    std::string post = RandomPost(rng);
    if (p % 10 == 0) post += " https://fake.example/a";
    const Verdict verdict = restored.Check(post, {});
    matched += !verdict.matches.empty();
    REQUIRE(VerdictToJson(engine.Check(post, {}), post) == VerdictToJson(verdict, post));
  }
  CHECK(matched > 20);
  // A record read after the load is one rule's, in the records' bytes, read once.
  REQUIRE(reader.reads.size() > load_reads);
  std::set<std::pair<size_t, size_t>> records;
  for (size_t i = load_reads; i < reader.reads.size(); ++i) {
    const auto& [offset, size] = reader.reads[i];
    CHECK(offset >= kept_begin);
    CHECK(offset + size <= kept_end);
    CHECK(records.insert(reader.reads[i]).second);
  }
  // Searches read the ids through it too (withheld), and every claim (the index of
  // all claims, built on the first search).
  auto ranked = [](const std::vector<SearchResult>& results) {
    std::string out;
    for (const SearchResult& r : results)
      out += r.rule->id + "=" + std::to_string(r.score) + " ";
    return out;
  };
  for (int p = 0; p < 20; ++p) {
    const std::string post = RandomPost(rng);
    const std::vector<SearchResult> top = engine.Search(post, 3);
    std::vector<std::string> withheld;
    for (const SearchResult& r : top) withheld.push_back(r.rule->id);
    REQUIRE(ranked(engine.Search(post, 10, withheld)) ==
            ranked(restored.Search(post, 10, withheld)));
  }
  std::string again;
  REQUIRE(restored.ExportCompiled(info.info.id, &again).ok());
  CHECK(again == blob);
  // A reader that fails (its buffer gone): rules not yet read come back empty,
  // nothing crashes, and the export says what is wrong instead of writing a
  // form without its records.
  failing = true;
  for (uint32_t r = 0; r < list->rule_count(); ++r) {
    CHECK(list->rule_id(r).empty());
  }
  s = restored.ExportCompiled(info.info.id, &again);
  CHECK(s.kind() == ErrorKind::kFormat);
  CHECK_THAT(s.message(), Catch::Matchers::Contains("rule records could not be read"));
  CHECK(again.empty());
  failing = false;
  CHECK(restored.ExportCompiled(info.info.id, &again).ok());
  CHECK(again == blob);
}

TEST_CASE_METHOD(ExportedBenchLike,
                 "engine: a damaged compiled form read part by part is refused as from "
                 "memory",
                 "[prefilter]") {
  // Damage the checksum lets through (it is made right again), so each reaches the
  // section table's or a section's own checks: the two ways of reading give the
  // same answer, and the part reader catches a view kept too long.
  std::mt19937 rng(17);
  auto same_answer = [&](const std::string& form) {
    Engine from_memory, from_parts;
    Status a = from_memory.LoadCompiled(form, options, nullptr);
    PartReader reader{form};
    Status b = from_parts.LoadCompiled(
        form.size(), [&](size_t offset, size_t size) { return reader(offset, size); },
        options, nullptr);
    INFO(a.message());
    CHECK(a.kind() == b.kind());
    CHECK(a.message() == b.message());
    return a.ok();
  };
  int refused = 0;
  for (int n = 0; n < 300; ++n) {
    std::string form = blob;
    if (n % 3 == 0) {  // cut short (the checksum then closes the shorter form)
      form = WithChecksum(form.substr(0, 20 + rng() % (form.size() - 20)) +
                          std::string(8, '\0'));
    } else {
      for (int k = 0; k < 1 + n % 4; ++k) {
        const size_t at = 12 + rng() % (form.size() - 20);
        form[at] = static_cast<char>(form[at] ^ (1 + rng() % 255));
      }
      form = WithChecksum(form);
    }
    refused += !same_answer(form);
  }
  // Most damage is caught (a flipped byte inside a rule's text can be valid).
  CHECK(refused > 150);
}

TEST_CASE_METHOD(ExportedBenchLike,
                 "engine: compiled bytes keep rollback and signature checks",
                 "[prefilter]") {
  Engine other;
  LoadOptions strict;
  CHECK(other.LoadCompiled(blob, strict, nullptr).kind() == ErrorKind::kSignature);
  options.last_version = 4;
  CHECK(other.LoadCompiled(blob, options, nullptr).kind() == ErrorKind::kRollback);
  CHECK(other.Lists().empty());
  CHECK(engine.ExportCompiled("nope", &blob).kind() == ErrorKind::kNotFound);
}

TEST_CASE_METHOD(ExportedBenchLike,
                 "engine: corrupted, truncated or foreign compiled bytes are refused",
                 "[prefilter]") {
  Engine other;
  auto refused = [&](const std::string& bytes, const std::string& why) {
    Status s = other.LoadCompiled(bytes, options, nullptr);
    INFO(s.message());
    CHECK(s.kind() == ErrorKind::kFormat);
    CHECK_THAT(s.message(), Catch::Contains(why));
  };
  refused("", "not a factlens compiled list");
  refused("{\"format\":\"factlens/1\"}", "not a factlens compiled list");
  refused(blob.substr(0, blob.size() / 2), "checksum");
  std::mt19937 rng(5);
  for (int i = 0; i < 200; ++i) {
    std::string bad = blob;
    size_t at = 12 + rng() % (bad.size() - 12);
    bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    refused(bad, "checksum");
  }
  std::string other_version = blob;
  other_version[4] = static_cast<char>(kCompiledFormVersion + 1);
  refused(other_version, "format version " + std::to_string(kCompiledFormVersion + 1));
  CHECK(other.Lists().empty());
}

// A keyword term's words are kept joined by spaces, so a word read back must hold
// none: one that did would come back as two words, not the term that was written.
TEST_CASE("engine: a compiled keyword word holding a space is refused", "[prefilter]") {
  const std::string list = testing::ListWithRules(
      "[" +
      testing::RuleJson("k",
                        R"({"keywords":[{"all":["zorbly quaxon"],"any":["flimp*"]}]})") +
      "]");
  Engine engine;
  LoadOptions options;
  const std::string blob = CompiledForm(list, &engine, &options);
  const auto [keyw, keyw_size] = FormSection(blob, "KEYW");
  REQUIRE(keyw_size > 0);
  const size_t word = blob.find("quaxon", keyw);
  REQUIRE(word < keyw + keyw_size);
  Engine restored;
  REQUIRE(restored.LoadCompiled(blob, options, nullptr).ok());
  CHECK_FALSE(restored.Check("a zorbly quaxon flimpy post", {}).matches.empty());
  std::string bad = blob;
  bad[word + 2] = ' ';  // "qu xon"
  Engine refusing;
  Status s = refusing.LoadCompiled(WithChecksum(bad), options, nullptr);
  CHECK(s.kind() == ErrorKind::kFormat);
  CHECK_THAT(s.message(), Catch::Contains("section KEYW: malformed"));
  // The section's totals of terms and of their text (after the set count), which
  // a restore reserves, must be the terms' own.
  for (size_t total : {keyw + 4, keyw + 8}) {
    for (int delta : {-1, 1}) {
      const std::string wrong = testing::WithU32Added(blob, total, delta);
      Status t = refusing.LoadCompiled(WithChecksum(wrong), options, nullptr);
      CHECK(t.kind() == ErrorKind::kFormat);
      CHECK_THAT(t.message(), Catch::Contains("section KEYW: malformed"));
    }
  }
}

// A record names the strings rules share (review publisher, date, URL origin) by
// index into a table the RULE section carries (match.cc): a restore gives each rule
// its own, and an index past the table is refused.
TEST_CASE(
    "engine: restored rules keep their review fields; a shared string index "
    "past the table is refused",
    "[prefilter]") {
  auto rule = [](const std::string& id, const std::string& url, const std::string& review,
                 const std::string& publisher, const std::string& date) {
    return R"({"id":")" + id +
           R"(","claim":"A claim.","rating":"false",)"
           R"("severity":"low","match":{"urls":[")" +
           url +
           R"("]},)"
           R"("review":{"url":")" +
           review + R"(","title":"T","publisher":")" + publisher + R"(","date":")" +
           date + R"("}})";
  };
  const std::string list = testing::ListWithRules(
      "[" +
      rule("a", "https://zq.example/one", "https://r.example/x/1", "P", "2025-01-01") +
      "," +
      rule("b", "https://zq.example/two", "https://r.example/y?q=2", "P", "2025-02-01") +
      "," +
      rule("c", "https://zq.example/three", "https://s.example", "Q", "2025-01-01") +
      "]");
  Engine engine;
  LoadOptions options;
  const std::string blob = CompiledForm(list, &engine, &options);
  Engine restored;
  REQUIRE(restored.LoadCompiled(blob, options, nullptr).ok());
  const std::string id = engine.Lists().at(0).info.id;
  const CompiledList* from_text = engine.Compiled(id);
  const CompiledList* from_blob = restored.Compiled(id);
  REQUIRE(from_blob != nullptr);
  REQUIRE(from_blob->rule_count() == 3);
  const char* reviews[] = {"https://r.example/x/1", "https://r.example/y?q=2",
                           "https://s.example"};
  for (uint32_t i = 0; i < 3; ++i) {
    const Review& a = from_text->rule(i).review;
    const Review& b = from_blob->rule(i).review;
    CHECK(b.url == reviews[i]);
    CHECK(a.url == b.url);
    CHECK(a.publisher == b.publisher);
    CHECK(a.date == b.date);
    CHECK(a.title == b.title);
  }
  CHECK(from_blob->rule(2).review.publisher == "Q");
  CHECK(from_blob->rule(1).review.date == "2025-02-01");
  // Rule c's record: its URL, then its review URL's origin by index (one byte).
  const std::string url = "https://zq.example/three";
  const size_t at = blob.find(url);
  REQUIRE(at != std::string::npos);
  std::string bad = blob;
  bad[at + url.size()] = 0x7F;  // past the table's few strings
  Engine refusing;
  Status s = refusing.LoadCompiled(WithChecksum(bad), options, nullptr);
  CHECK(s.kind() == ErrorKind::kFormat);
  CHECK_THAT(s.message(), Catch::Contains("section RULE: malformed"));
}

}  // namespace
}  // namespace factlens
