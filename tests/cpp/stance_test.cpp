// Tests of the stance component on hand-written posts, English and German.
#include "factlens/stance.h"

#include <catch2/catch.hpp>
#include <string>

namespace factlens {
namespace {

Rule ClaimRule(const std::string& claim,
               const std::string& review_url = "https://checker.example/a") {
  Rule r;
  r.id = "r";
  r.claim = claim;
  r.review.url = review_url;
  return r;
}

// The stance with the match spanning `matched` (must occur in `text`).
Stance StanceOf(const std::string& text, const std::string& matched, const Rule& rule) {
  size_t at = text.find(matched);
  REQUIRE(at != std::string::npos);
  std::vector<ByteRange> spans = {
      {static_cast<uint32_t>(at), static_cast<uint32_t>(at + matched.size())}};
  return DetectStance(text, Normalize(text), spans, rule);
}

const Rule k5g = ClaimRule("5G spreads the coronavirus.");

TEST_CASE("stance: a plain repetition repeats", "[stance]") {
  CHECK(StanceOf("5G spreads the coronavirus, share before they delete this",
                 "5G spreads the coronavirus", k5g) == Stance::kRepeats);
}

TEST_CASE("stance: refutation cues near the claim debunk", "[stance]") {
  CHECK(StanceOf("FALSE: 5G spreads the coronavirus", "5G spreads the coronavirus",
                 k5g) == Stance::kDebunks);
  CHECK(StanceOf("this hoax again... 5G spreads the coronavirus",
                 "5G spreads the coronavirus", k5g) == Stance::kDebunks);
  CHECK(StanceOf("Fact check: 5G spreads the coronavirus? It doesn't.",
                 "5G spreads the coronavirus", k5g) == Stance::kDebunks);
}

TEST_CASE("stance: negation the claim lacks debunks", "[stance]") {
  CHECK(StanceOf("No, 5G does not spread the coronavirus",
                 "5G does not spread the coronavirus", k5g) == Stance::kDebunks);
  CHECK(StanceOf("5G doesn't spread the coronavirus", "5G doesn't spread the coronavirus",
                 k5g) == Stance::kDebunks);
}

TEST_CASE("stance: the claim's own negation and cue words are not refutation",
          "[stance]") {
  Rule holocaust = ClaimRule("The Holocaust never happened, it is a hoax.");
  CHECK(StanceOf("the holocaust never happened", "the holocaust never happened",
                 holocaust) == Stance::kRepeats);
  CHECK(StanceOf("the holocaust is a hoax", "the holocaust is a hoax", holocaust) ==
        Stance::kRepeats);
}

// One reader serves every rule a post matched (Engine::Check): what it keeps is
// the post's, and each rule's own words, negations and fact-check are its own.
TEST_CASE("stance: one reader answers each matched rule by its own words", "[stance]") {
  const std::string text =
      "Hoax: the holocaust never happened. I read many long books about history at "
      "the old library in town. 5G spreads the coronavirus, see https://desk.example/5g";
  const NormalizedText post = Normalize(text);
  auto spans_of = [&](const std::string& matched) {
    const size_t at = text.find(matched);
    REQUIRE(at != std::string::npos);
    return std::vector<ByteRange>{
        {static_cast<uint32_t>(at), static_cast<uint32_t>(at + matched.size())}};
  };
  const Rule holocaust = ClaimRule("The Holocaust never happened, it is a hoax.");
  const Rule other_desk = ClaimRule("The Holocaust never happened.");
  const Rule linked = ClaimRule("5G spreads the coronavirus.", "https://desk.example/5g");
  const StanceReader reader(text, post);
  for (int pass = 0; pass < 2; ++pass) {  // (in either order, asked twice)
    // "hoax" is the first rule's own word, a cue against the second, whose claim
    // holds "never" but not "hoax".
    CHECK(reader.Of(spans_of("the holocaust never happened"), holocaust) ==
          Stance::kRepeats);
    CHECK(reader.Of(spans_of("the holocaust never happened"), other_desk) ==
          Stance::kDebunks);
    // The post links this rule's own fact-check; not k5g's.
    CHECK(reader.Of(spans_of("5G spreads the coronavirus"), linked) == Stance::kDebunks);
    CHECK(reader.Of(spans_of("5G spreads the coronavirus"), k5g) == Stance::kRepeats);
    CHECK(DetectStance(text, post, spans_of("5G spreads the coronavirus"), linked) ==
          Stance::kDebunks);
  }
}

TEST_CASE("stance: a negated cue affirms the claim", "[stance]") {
  CHECK(StanceOf("This is not fake: 5G spreads the coronavirus",
                 "5G spreads the coronavirus", k5g) == Stance::kRepeats);
  CHECK(StanceOf("Das ist kein Fake: 5G spreads the coronavirus",
                 "5G spreads the coronavirus", k5g) == Stance::kRepeats);
}

TEST_CASE("stance: negation far from the claim does not count", "[stance]") {
  CHECK(StanceOf("5G spreads the coronavirus. My neighbour told me this at the bakery "
                 "and I could not stop thinking about it",
                 "5G spreads the coronavirus", k5g) == Stance::kRepeats);
  CHECK(StanceOf("Birds aren't real and 5G spreads the coronavirus",
                 "5G spreads the coronavirus", k5g) == Stance::kRepeats);
}

TEST_CASE("stance: sarcasm, questions and bare quotes are unclear", "[stance]") {
  CHECK(StanceOf("Oh sure, 5G spreads the coronavirus. Yeah right",
                 "5G spreads the coronavirus", k5g) == Stance::kUnclear);
  CHECK(StanceOf("5G spreads the coronavirus /s", "5G spreads the coronavirus", k5g) ==
        Stance::kUnclear);
  CHECK(StanceOf("5G spreads the coronavirus \xF0\x9F\x99\x84",
                 "5G spreads the coronavirus", k5g) == Stance::kUnclear);
  // Sarcasm overrides a cue: "sure, it's fake 🙄" may mean the opposite.
  CHECK(StanceOf("Sure, 5G spreads the coronavirus is fake news, lol",
                 "5G spreads the coronavirus", k5g) == Stance::kUnclear);
  CHECK(StanceOf("Does 5G spread the coronavirus? Asking for a friend",
                 "5G spread the coronavirus", k5g) == Stance::kUnclear);
  CHECK(StanceOf("My uncle: \"5G spreads the coronavirus\"", "5G spreads the coronavirus",
                 k5g) == Stance::kUnclear);
}

TEST_CASE("stance: quoting a claim to refute it debunks", "[stance]") {
  CHECK(StanceOf("\xE2\x80\x9C"
                 "5G spreads the coronavirus"
                 "\xE2\x80\x9D is a myth",
                 "5G spreads the coronavirus", k5g) == Stance::kDebunks);
}

TEST_CASE("stance: links to fact-check sites debunk", "[stance]") {
  CHECK(StanceOf("5G spreads the coronavirus https://www.snopes.com/fact-check/5g-covid/",
                 "5G spreads the coronavirus", k5g) == Stance::kDebunks);
  CHECK(StanceOf("5G spreads the coronavirus, see https://checker.example/a",
                 "5G spreads the coronavirus", k5g) == Stance::kDebunks);
  // Other links are not evidence either way.
  CHECK(StanceOf("5G spreads the coronavirus https://example.com/news",
                 "5G spreads the coronavirus", k5g) == Stance::kRepeats);
}

TEST_CASE("stance: German posts, both directions", "[stance]") {
  Rule impf = ClaimRule("Die Corona-Impfung macht unfruchtbar.");
  CHECK(StanceOf("Die Corona-Impfung macht unfruchtbar! Teilt das!",
                 "Die Corona-Impfung macht unfruchtbar", impf) == Stance::kRepeats);
  CHECK(StanceOf("Faktencheck: Die Corona-Impfung macht unfruchtbar? Falsch.",
                 "Die Corona-Impfung macht unfruchtbar", impf) == Stance::kDebunks);
  CHECK(StanceOf("Die Corona-Impfung macht nicht unfruchtbar",
                 "Die Corona-Impfung macht nicht unfruchtbar", impf) == Stance::kDebunks);
  CHECK(StanceOf("Die Corona-Impfung macht unfruchtbar, ja klar",
                 "Die Corona-Impfung macht unfruchtbar", impf) == Stance::kUnclear);
}

TEST_CASE("stance: names parse back", "[stance]") {
  for (Stance s : {Stance::kRepeats, Stance::kDebunks, Stance::kUnclear}) {
    Stance back;
    REQUIRE(ParseStance(StanceName(s), &back));
    CHECK(back == s);
  }
  Stance out;
  CHECK_FALSE(ParseStance("agrees", &out));
}

}  // namespace
}  // namespace factlens
