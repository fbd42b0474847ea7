// Copyright factlens authors.
#include "factlens/normalize.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace factlens {
namespace {

// The original substring the normalised word number `w` came from.
std::string Source(std::string_view input, const NormalizedText& t, size_t w) {
  REQUIRE(w < t.words.size());
  ByteRange r = t.OriginalRange(t.words[w].begin, t.words[w].end);
  return std::string(input.substr(r.begin, r.end - r.begin));
}

std::vector<std::string> Words(const NormalizedText& t) {
  std::vector<std::string> out;
  for (const ByteRange& w : t.words)
    out.push_back(t.text.substr(w.begin, w.end - w.begin));
  return out;
}

// Checks the invariants every result has, and that NormalizeToString agrees.
NormalizedText Check(std::string_view input) {
  NormalizedText t = Normalize(input);
  REQUIRE(t.origin.size() == t.text.size());
  REQUIRE(NormalizeToString(input) == t.text);
  std::string joined;
  for (const std::string& w : Words(t)) joined += (joined.empty() ? "" : " ") + w;
  REQUIRE(joined == t.text);
  // Monotone: a non-empty range never begins or ends before the last non-empty
  // one (OriginalRange reads only the first and last of a span).
  ByteRange last{0, 0};
  for (const ByteRange& o : t.origin) {
    REQUIRE(o.begin <= o.end);
    REQUIRE(o.end <= input.size());
    if (o.begin == o.end) continue;
    REQUIRE(o.begin >= last.begin);
    REQUIRE(o.end >= last.end);
    last = o;
  }
  return t;
}

TEST_CASE("ASCII is lower-cased and each word maps back to its bytes", "[normalize]") {
  std::string in = "Vaccines CAUSE Autism";
  NormalizedText t = Check(in);
  CHECK(t.text == "vaccines cause autism");
  CHECK(Source(in, t, 0) == "Vaccines");
  CHECK(Source(in, t, 1) == "CAUSE");
  CHECK(Source(in, t, 2) == "Autism");
}

TEST_CASE("runs of spaces and punctuation become one space, none at the ends",
          "[normalize]") {
  std::string in = "  ...Hello,,,   World!!!\n\t(really?)  ";
  NormalizedText t = Check(in);
  CHECK(t.text == "hello world really");
  CHECK(Source(in, t, 1) == "World");
  CHECK(Source(in, t, 2) == "really");
  CHECK(Check("").text.empty());
  CHECK(Check(" !?, ").text.empty());
}

TEST_CASE("a separator space maps to the empty range at the end of the word before",
          "[normalize]") {
  std::string in = "ab,  cd";
  NormalizedText t = Check(in);
  REQUIRE(t.text == "ab cd");
  CHECK(t.origin[2].begin == 2);
  CHECK(t.origin[2].end == 2);
  ByteRange r = t.OriginalRange(0, 5);
  CHECK(r.begin == 0);
  CHECK(r.end == 7);
}

TEST_CASE("diacritics are dropped, precomposed or combining, and map back",
          "[normalize]") {
  std::string in = "Café cafe\u0301 naïve";
  NormalizedText t = Check(in);
  CHECK(t.text == "cafe cafe naive");
  CHECK(Source(in, t, 0) == "Café");
  CHECK(Source(in, t, 1) == "cafe\u0301");
  CHECK(Source(in, t, 2) == "naïve");
}

TEST_CASE("full case folding expands sharp s and capital I with dot", "[normalize]") {
  std::string in = "STRASSE Straße İstanbul";
  NormalizedText t = Check(in);
  CHECK(t.text == "strasse strasse istanbul");
  CHECK(Source(in, t, 1) == "Straße");
  // Both bytes of "ss" map to the two bytes of "ß".
  ByteRange r = t.OriginalRange(t.words[1].begin + 4, t.words[1].begin + 6);
  CHECK(in.substr(r.begin, r.end - r.begin) == "ß");
}

TEST_CASE("compatibility forms fold: ligatures, full-width, circled", "[normalize]") {
  std::string in = "ﬁnd ＶＡＣＣＩＮＥ ① ™";
  NormalizedText t = Check(in);
  CHECK(t.text == "find vaccine 1 tm");
  CHECK(Source(in, t, 0) == "ﬁnd");
  CHECK(Source(in, t, 1) == "ＶＡＣＣＩＮＥ");
}

TEST_CASE("astral mathematical letters fold to ASCII and map to 4-byte chars",
          "[normalize]") {
  std::string in = "the 𝐯𝐚𝐜𝐜𝐢𝐧𝐞 lie";
  NormalizedText t = Check(in);
  CHECK(t.text == "the vaccine lie");
  CHECK(Source(in, t, 1) == "𝐯𝐚𝐜𝐜𝐢𝐧𝐞");
  ByteRange v = t.OriginalRange(t.words[1].begin, t.words[1].begin + 1);
  CHECK(v.end - v.begin == 4);
  CHECK(in.substr(v.begin, 4) == "𝐯");
}

TEST_CASE("emoji and symbols are separators", "[normalize]") {
  std::string in = "😷vaccine💉kills 👍🏽";
  NormalizedText t = Check(in);
  CHECK(t.text == "vaccine kills");
  CHECK(Source(in, t, 0) == "vaccine");
  CHECK(Source(in, t, 1) == "kills");
}

TEST_CASE("multi-byte scripts survive: CJK, Hangul, Devanagari", "[normalize]") {
  std::string in = "ワクチン 疫苗,한국어 हिन्दी";
  NormalizedText t = Check(in);
  CHECK(t.text == "ワクチン 疫苗 한국어 हिन्दी");
  CHECK(Source(in, t, 1) == "疫苗");
  CHECK(Source(in, t, 2) == "한국어");
  CHECK(Source(in, t, 3) == "हिन्दी");
}

TEST_CASE("zero-width characters inside a word do not split it", "[normalize]") {
  std::string in = "vac\u200Bcine and va\u200Dcc\u2060ine\uFEFF soft\u00ADhyphen";
  NormalizedText t = Check(in);
  CHECK(t.text == "vaccine and vaccine softhyphen");
  CHECK(Source(in, t, 0) == "vac\u200Bcine");
  CHECK(Source(in, t, 2) == "va\u200Dcc\u2060ine");
}

TEST_CASE("bidi controls are dropped without splitting", "[normalize]") {
  std::string in = "\u202Evac\u202Ccine \u2066hoax\u2069 fa\u200Ek\u200Fe";
  NormalizedText t = Check(in);
  CHECK(t.text == "vaccine hoax fake");
  CHECK(Source(in, t, 0) == "vac\u202Ccine");
  CHECK(Source(in, t, 1) == "hoax");
}

TEST_CASE("invalid UTF-8 bytes are separators, one unit each", "[normalize]") {
  std::string in =
      "ab\xFF\xFE"
      "cd \xE2\x82 ef\xC0\xAF"
      "gh";
  NormalizedText t = Check(in);
  CHECK(t.text == "ab cd ef gh");
  CHECK(Source(in, t, 1) == "cd");
  CHECK(Source(in, t, 3) == "gh");
}

TEST_CASE("a Cyrillic lookalike inside a Latin word becomes ASCII", "[lookalike]") {
  std::string in = "the vacc\u0456ne (Cyrillic i) and \u0441\u043Evid and Ηello";
  NormalizedText t = Check(in);
  CHECK(t.text == "the vaccine cyrillic i and covid and hello");
  CHECK(Source(in, t, 1) == "vacc\u0456ne");
}

TEST_CASE("Greek lookalikes map too", "[lookalike]") {
  std::string in = "h\u03BFax \u0391ΝΤΙ";
  NormalizedText t = Check(in);
  CHECK(t.text == "hoax anti");
}

TEST_CASE("a word of only lookalike letters is mapped, as written", "[lookalike]") {
  std::string in = "НОАХ";  // All Cyrillic.
  NormalizedText t = Check(in);
  CHECK(t.text == "hoax");
  CHECK(Source(in, t, 0) == in);
  // Upper-case Cyrillic I looks like Latin I, which folds to i.
  CHECK(Check("VACC\u0406NE").text == "vaccine");
}

TEST_CASE("a word with other non-Latin letters stays as it is", "[lookalike]") {
  CHECK(Check("привет").text == "привет");
  CHECK(Check("Москва").text == "москва");
  CHECK(Check("Прививка опасна").text == "прививка опасна");
}

TEST_CASE("leetspeak words become letters", "[leet]") {
  std::string in = "v4cc1n3 h0ax $cam c0v1d b1ll g4t3s";
  NormalizedText t = Check(in);
  CHECK(t.text == "vaccine hoax scam covid bill gates");
  CHECK(Source(in, t, 0) == "v4cc1n3");
  CHECK(Source(in, t, 2) == "$cam");
}

TEST_CASE("leetspeak near-misses keep their digits", "[leet]") {
  CHECK(Check("5g 4chan 3d").text == "5g 4chan 3d");
  CHECK(Check("covid19 mp3").text == "covid19 mp3");
  CHECK(Check("h1n1").text == "h1n1");  // Letters do not outnumber leet chars.
  CHECK(Check("2021 1984").text == "2021 1984");
}

TEST_CASE("a leading @ is a mention mark, not an a", "[leet]") {
  std::string in = "@user says @h0ax";
  NormalizedText t = Check(in);
  CHECK(t.text == "user says hoax");
  CHECK(Source(in, t, 0) == "user");
}

TEST_CASE("$ and @ separate when the word is not leetspeak", "[leet]") {
  CHECK(Check("$5 $").text == "5");
  CHECK(Check("4$4").text == "4 4");
  CHECK(Check("h1n1$x").text == "h1n1 x");
}

TEST_CASE("lookalikes and leetspeak combine", "[leet]") {
  CHECK(Check("Н0АХ").text == "hoax");  // Cyrillic letters and a zero.
}

TEST_CASE("a URL becomes one canonical word mapping to the whole URL", "[url]") {
  std::string in = "See https://WWW.Example.com:443/a/?utm_source=x&id=3#top. Then";
  NormalizedText t = Check(in);
  CHECK(t.text == "see example.com/a?id=3 then");
  REQUIRE(t.urls.size() == 1);
  CHECK(t.urls[0] == "example.com/a?id=3");
  CHECK(Source(in, t, 1) == "https://WWW.Example.com:443/a/?utm_source=x&id=3#top");
  ByteRange b = t.OriginalRange(t.words[1].begin + 3, t.words[1].begin + 4);
  CHECK(Source(in, t, 1) == in.substr(b.begin, b.end - b.begin));
}

TEST_CASE("www. URLs and URLs in parentheses are found", "[url]") {
  std::string in = "(www.Foo.org/x?fbclid=1) and http://en.wikipedia.org/wiki/A_(b)).";
  NormalizedText t = Check(in);
  CHECK(t.text == "foo.org/x and en.wikipedia.org/wiki/A_(b)");
  REQUIRE(t.urls.size() == 2);
  CHECK(Source(in, t, 0) == "www.Foo.org/x?fbclid=1");
  CHECK(Source(in, t, 2) == "http://en.wikipedia.org/wiki/A_(b)");
}

TEST_CASE("a URL right after non-Latin text or before an emoji is found", "[url]") {
  std::string in = "見てhttps://x.co/abc🔥";
  NormalizedText t = Check(in);
  CHECK(t.text == "見て x.co/abc");
  CHECK(Source(in, t, 1) == "https://x.co/abc");
}

TEST_CASE("javascript: and other non-http text is read as words", "[url]") {
  NormalizedText t = Check("javascript:alert(1) ftp://files.example.com http://nohost");
  CHECK(t.text == "javascript alert 1 ftp files example com http nohost");
  CHECK(t.urls.empty());
}

TEST_CASE("CanonicalizeUrl drops scheme, www, default port, tracking, fragment",
          "[url]") {
  CHECK(CanonicalizeUrl("https://WWW.Example.com:443/a/?utm_source=x&id=3#top") ==
        "example.com/a?id=3");
  CHECK(CanonicalizeUrl("https://example.com/") == "example.com");
  CHECK(CanonicalizeUrl("http://example.com:80") == "example.com");
  CHECK(CanonicalizeUrl("http://user:pw@Example.COM:8080/Path/") ==
        "example.com:8080/Path");
  CHECK(CanonicalizeUrl("https://example.com/a?b=1&gclid=x&c=2&utm_medium=y&") ==
        "example.com/a?b=1&c=2");
  CHECK(CanonicalizeUrl("https://example.com/a?") == "example.com/a");
}

TEST_CASE("CanonicalizeUrl normalises percent escapes", "[url]") {
  CHECK(CanonicalizeUrl("https://example.com/%7euser/%2fa%3f?q=a%2db%2c") ==
        "example.com/~user/%2Fa%3F?q=a-b%2C");
}

TEST_CASE("CanonicalizeUrl drops host-specific tracking only on that host", "[url]") {
  CHECK(CanonicalizeUrl("https://twitter.com/u/status/1?s=20&t=abc") ==
        "twitter.com/u/status/1");
  CHECK(CanonicalizeUrl("https://example.com/search?s=20&t=abc") ==
        "example.com/search?s=20&t=abc");
  CHECK(CanonicalizeUrl("https://www.youtube.com/watch?v=ID&feature=share&si=x") ==
        "youtube.com/watch?v=ID");
  CHECK(CanonicalizeUrl("https://youtu.be/ID?si=x&t=30") == "youtu.be/ID?t=30");
}

TEST_CASE("CanonicalizeUrl accepts scheme-less hosts", "[url]") {
  CHECK(CanonicalizeUrl("www.Example.com/a") == "example.com/a");
  CHECK(CanonicalizeUrl("example.com/a/b") == "example.com/a/b");
  CHECK(CanonicalizeUrl("example.com") == "example.com");
}

TEST_CASE("CanonicalizeUrl rejects what is not an http(s) URL", "[url]") {
  CHECK(CanonicalizeUrl("javascript:alert(1)").empty());
  CHECK(CanonicalizeUrl("data:text/html,hi").empty());
  CHECK(CanonicalizeUrl("ftp://example.com/x").empty());
  CHECK(CanonicalizeUrl("mailto:a@example.com").empty());
  CHECK(CanonicalizeUrl("https://localhost/x").empty());
  CHECK(CanonicalizeUrl("https://exa mple.com").empty());
  CHECK(CanonicalizeUrl("3.14").empty());
  CHECK(CanonicalizeUrl("").empty());
}

TEST_CASE("CanonicalHost returns the host and its port", "[url]") {
  CHECK(CanonicalHost("example.com/a?x") == "example.com");
  CHECK(CanonicalHost("example.com:8080/a") == "example.com:8080");
  CHECK(CanonicalHost("example.com?x=1") == "example.com");
  CHECK(CanonicalHost("example.com") == "example.com");
}

TEST_CASE("NormalizePattern folds literal runs", "[pattern]") {
  CHECK(NormalizePattern("Vaccines? CAUSE autism") == "vaccines? cause autism");
  CHECK(NormalizePattern("Vacc\u0456ne|НОАХ|Café") == "vaccine|hoax|cafe");
  CHECK(NormalizePattern("v4cc1n3") == "vaccine");
}

TEST_CASE("NormalizePattern leaves escapes and flags untouched", "[pattern]") {
  CHECK(NormalizePattern("(?i)Bill\\s+\\pL\\p{Greek}\\PN\\x{41}\\x41\\QAB.C\\E\\W") ==
        "(?i)bill\\s+\\pL\\p{Greek}\\PN\\x{41}\\x41\\QAB.C\\E\\W");
  CHECK(NormalizePattern("(?P<Name>Foo)(?i:Bar)(?:Baz)") ==
        "(?P<Name>foo)(?i:bar)(?:baz)");
  CHECK(NormalizePattern("^A.b*C+D?$") == "^a.b*c+d?$");
}

TEST_CASE("NormalizePattern keeps quantifier braces", "[pattern]") {
  CHECK(NormalizePattern("Ab{2,3}c{4}") == "ab{2,3}c{4}");
}

TEST_CASE("NormalizePattern folds letters in classes, keeping class syntax",
          "[pattern]") {
  CHECK(NormalizePattern("[A-Z[:alpha:]É\\d]") == "[a-z[:alpha:]e\\d]");
  CHECK(NormalizePattern("[^]A]") == "[^]a]");
  // Ranges whose folded ends would be inverted or that end in an escape stay.
  CHECK(NormalizePattern("[Z-a]") == "[Z-a]");
  CHECK(NormalizePattern("[\\x{C0}-É]") == "[\\x{C0}-É]");
  CHECK(NormalizePattern("[Z-\\x{5B}]") == "[Z-\\x{5B}]");
}

TEST_CASE("NormalizePattern keeps a quantified atom an atom", "[pattern]") {
  CHECK(NormalizePattern("Straß?") == "stra(?:ss)?");
  CHECK(NormalizePattern("x\u200B*") == "x\u200B*");
}

TEST_CASE("NormalizePattern turns literal punctuation into spaces", "[pattern]") {
  CHECK(NormalizePattern("covid-19") == "covid 19");
  CHECK(NormalizePattern("don't  stop") == "don t stop");
  CHECK(NormalizePattern("a (b) c") == "a (b) c");
}

TEST_CASE("Utf16Index counts astral chars as two units, invalid bytes as one",
          "[utf16]") {
  std::string in =
      "a\u00E9\U0001D42F\xFF"
      "b";  // a é 𝐯 <invalid> b
  Utf16Index idx(in);
  CHECK(idx.ToUtf16(0) == 0);
  CHECK(idx.ToUtf16(1) == 1);  // é
  CHECK(idx.ToUtf16(3) == 2);  // 𝐯
  CHECK(idx.ToUtf16(7) == 4);  // invalid byte
  CHECK(idx.ToUtf16(8) == 5);  // b
  CHECK(idx.ToUtf16(9) == 6);  // end
}

TEST_CASE("a text that folds to ten times its bytes keeps every byte and its source",
          "[normalize]") {
  // U+FDFA (3 bytes) decomposes to four Arabic words (33 bytes): the output
  // outgrows the room made for the input many times over.
  const std::string one = "\uFDFA";
  const std::string folded = Check(one).text;
  REQUIRE(folded.size() > 10 * one.size());
  std::string in, expected;
  for (int i = 0; i < 3000; ++i) {
    in += (i % 2 ? "\uFDFA, " : "\uFDFA ");
    expected += (i ? " " : "") + folded;
  }
  NormalizedText t = Check(in);
  CHECK(t.text == expected);
  // Each byte comes from the U+FDFA it was folded from, or, for the space between
  // two, from the empty range at the end of the one before.
  for (size_t k = 0; k < t.text.size(); ++k) {
    const ByteRange o = t.origin[k];
    if (o.begin == o.end) continue;
    REQUIRE(o.end - o.begin == one.size());
    REQUIRE(in.compare(o.begin, one.size(), one) == 0);
  }
  CHECK(Source(in, t, t.words.size() - 1) == one);
}

TEST_CASE("200k combining marks produce nothing, in linear time", "[normalize]") {
  std::string in;
  for (int i = 0; i < 200000; ++i) in += "\u0301";
  NormalizedText t = Check(in);
  CHECK(t.text.empty());
  CHECK(t.words.empty());
  std::string after = "e" + in;
  CHECK(Check(after).text == "e");
}

// OriginalRange reads a span's first and last non-empty ranges: on random mixes of
// what the normaliser treats apart (case, digits and leetspeak, mentions, marks
// kept and dropped, ligatures, lookalikes, other scripts, invisible and invalid
// bytes, URLs), it gives what the smallest range holding every byte's does.
TEST_CASE("OriginalRange of any span is the hull of its bytes' ranges", "[normalize]") {
  std::vector<std::string> pieces = {"a",  "B", "z", "0", "7", "$", "@", " ",
                                     "  ", ".", "-", "/", "1", "3", "!", "'"};
  const char* outside_ascii[] = {
      "\xCC\x81",                  // combining acute (dropped)
      "\xC3\xA9",                  // e acute
      "\xEF\xAC\x81",              // fi ligature
      "\xE2\x84\xAA",              // KELVIN SIGN
      "\xD1\x81",                  // Cyrillic es
      "\xCE\xB1",                  // Greek alpha
      "\xE2\x80\x8B",              // zero-width space
      "\xF0\x9D\x90\x80",          // mathematical bold A
      "\xEF\xBC\xA1",              // full-width A
      "\xFF",                      // invalid
      "\xE0\xA4\x95\xE0\xA4\xBF",  // Devanagari ka with a vowel sign (kept)
      "\xC3\x9F",                  // sharp s
      "\xC4\xB0",                  // I with a dot above
      "\xE2\x91\xA0",              // circled 1
  };
  pieces.insert(pieces.end(), std::begin(outside_ascii), std::end(outside_ascii));
  for (const char* url : {"http://x.com/a?b=1 ", "www.ex.org ", "https://t.co/AbC) "})
    pieces.push_back(url);
  std::mt19937 rng(61);
  size_t spans = 0;
  for (int t = 0; t < 3000; ++t) {
    std::string in;
    for (int i = 1 + static_cast<int>(rng() % 20); i > 0; --i)
      in += pieces[rng() % pieces.size()];
    const NormalizedText n = Check(in);
    if (n.text.empty()) continue;
    for (int k = 0; k < 8; ++k) {
      const size_t begin = rng() % n.text.size();
      const size_t end = begin + 1 + rng() % (n.text.size() - begin);
      ByteRange hull = n.origin[begin];
      bool any = false;
      for (size_t i = begin; i < end; ++i) {
        const ByteRange& o = n.origin[i];
        if (o.begin == o.end) continue;
        hull =
            any ? ByteRange{std::min(hull.begin, o.begin), std::max(hull.end, o.end)} : o;
        any = true;
      }
      const ByteRange r = n.OriginalRange(begin, end);
      INFO(in << " [" << begin << ", " << end << ")");
      REQUIRE(r.begin == hull.begin);
      REQUIRE(r.end == hull.end);
      ++spans;
    }
  }
  CHECK(spans > 10000);
}

// Runs of ASCII letters (written 8 at a time while 8 input bytes are left) of every
// length from 1 to 20 at every offset, capitals mixed in, between separators: each
// letter lower-cased, from its own byte, each word where it stands.
TEST_CASE("runs of ASCII letters of any length map back letter by letter",
          "[normalize]") {
  std::mt19937 rng(62);
  const char* separators[] = {" ", ",", ". ", "\n", "-", " (", "\" "};
  for (int t = 0; t < 20000; ++t) {
    std::string in, expected;
    std::vector<size_t> letter_at;  // input offset of each byte of `expected`
    std::vector<std::pair<size_t, size_t>> words;
    if (rng() % 2) in += separators[rng() % 7];
    for (int w = 1 + static_cast<int>(rng() % 5); w > 0; --w) {
      if (!expected.empty()) {
        expected += ' ';
        letter_at.push_back(SIZE_MAX);
      }
      const size_t begin = expected.size();
      for (int k = 1 + static_cast<int>(rng() % 20); k > 0; --k) {
        const char c = static_cast<char>('a' + rng() % 26);
        letter_at.push_back(in.size());
        in += rng() % 4 == 0 ? static_cast<char>(c - 32) : c;
        expected += c;
      }
      words.emplace_back(begin, expected.size());
      in += separators[rng() % 7];
    }
    if (rng() % 2) in.pop_back();  // (a word at the very end)
    INFO(in);
    const NormalizedText n = Check(in);
    REQUIRE(n.text == expected);
    REQUIRE(n.words.size() == words.size());
    for (size_t w = 0; w < words.size(); ++w) {
      CHECK(n.words[w].begin == words[w].first);
      CHECK(n.words[w].end == words[w].second);
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      if (letter_at[i] == SIZE_MAX) continue;
      CHECK(n.origin[i].begin == letter_at[i]);
      CHECK(n.origin[i].end == letter_at[i] + 1);
    }
  }
}

}  // namespace
}  // namespace factlens
