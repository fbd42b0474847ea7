// Tests of the similar component: each ranking feature on hand-written claims.
#include "factlens/similar.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"

namespace factlens {
namespace {

SimilarDoc Doc(uint32_t rule, std::vector<std::string> phrasings, std::string title = "",
               std::vector<std::string> languages = {}) {
  SimilarDoc d;
  d.rule_index = rule;
  d.phrasings = std::move(phrasings);
  d.title = std::move(title);
  d.languages = std::move(languages);
  return d;
}

// A list where each claim competes with near neighbours sharing some words.
std::vector<SimilarDoc> Claims() {
  return {
      Doc(0, {"Vaccines cause autism in children."}),
      Doc(1, {"Children should get vaccines before school."}),
      Doc(2, {"5G towers spread the coronavirus."}, "Do 5G networks spread COVID-19?"),
      Doc(3, {"The coronavirus was made in a laboratory."}),
      Doc(4, {"Drinking bleach cures the coronavirus."}),
      Doc(5, {"Die Corona-Impfung macht unfruchtbar."}, "", {"de"}),
  };
}

uint32_t Top(const SimilarIndex& index, const std::string& post) {
  auto hits = index.Search(Normalize(post), 3);
  REQUIRE_FALSE(hits.empty());
  return hits[0].rule_index;
}

double ScoreOf(const SimilarIndex& index, const std::string& post, uint32_t rule) {
  for (const SimilarHit& h : index.Search(Normalize(post), 10)) {
    if (h.rule_index == rule) return h.score;
  }
  return 0;
}

// Returns `index` serialised and read back (a list of `rule_count` rules).
std::unique_ptr<SimilarIndex> SerializedAndRestored(const SimilarIndex& index,
                                                    size_t rule_count) {
  ByteWriter w;
  index.Serialize(&w);
  ByteReader r(w.bytes());
  std::unique_ptr<SimilarIndex> restored;
  REQUIRE(SimilarIndex::Deserialize(&r, {}, rule_count, &restored));
  REQUIRE(restored != nullptr);
  REQUIRE(r.at_end());
  return restored;
}

TEST_CASE("similar: Snowball stems English and German words", "[similar]") {
  CHECK(StemWord("spreading", "en") == "spread");
  CHECK(StemWord("vaccines", "en") == StemWord("vaccine", "en"));
  CHECK(StemWord("impfungen", "de") == StemWord("impfung", "de"));
  CHECK(StemWord("unknownlang", "xx") == "unknownlang");
}

TEST_CASE("similar: stemming finds a claim in other word forms", "[similar]") {
  SimilarOptions with, without;
  without.stemming = false;
  auto stemmed = SimilarIndex::Build(Claims(), with);
  auto plain = SimilarIndex::Build(Claims(), without);
  const std::string post = "vaccine causing autism??";
  CHECK(Top(*stemmed, post) == 0);
  CHECK(ScoreOf(*stemmed, post, 0) > ScoreOf(*plain, post, 0));
}

TEST_CASE("similar: stop words are per language and do not count", "[similar]") {
  CHECK(IsStopWord("the", "en"));
  CHECK(IsStopWord("die", "de"));
  CHECK_FALSE(IsStopWord("die", "en"));  // "people will die" is content in English
  CHECK_FALSE(IsStopWord("war", "en"));
  auto index = SimilarIndex::Build(Claims());
  // Only function words in common with claim 0: no hit at all.
  CHECK(index->Search(Normalize("in the before should"), 5).empty());
}

TEST_CASE("similar: word bigrams prefer the claim whose word order the post keeps",
          "[similar]") {
  std::vector<SimilarDoc> docs = {Doc(0, {"dogs bite children"}),
                                  Doc(1, {"children bite dogs"})};
  SimilarOptions options;
  options.rerank = false;  // look at the first stage, where bigrams are a field
  auto index = SimilarIndex::Build(docs, options);
  auto hits = index->Search(Normalize("my dogs bite children sometimes"), 2);
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].rule_index == 0);
  CHECK(hits[0].score > hits[1].score);
  CHECK(hits[0].features[5] == Approx(1.0));  // every bigram of claim 0 is there
  CHECK(hits[1].features[5] == Approx(0.0));
}

TEST_CASE("similar: character grams find misspellings and compounds", "[similar]") {
  SimilarOptions with, without;
  without.char_ngrams = false;
  auto grams = SimilarIndex::Build(Claims(), with);
  auto words = SimilarIndex::Build(Claims(), without);
  // "coronavirusss" and "#5Gtowers" share no whole word with claim 2.
  const std::string post = "#5Gtowers spreadin the coronavirusss";
  auto hits = grams->Search(Normalize(post), 3);
  REQUIRE_FALSE(hits.empty());
  CHECK(hits[0].rule_index == 2);
  CHECK(hits[0].features[6] > 0.3);
  CHECK(ScoreOf(*grams, post, 2) > ScoreOf(*words, post, 2));
}

TEST_CASE("similar: the title is a field of its own", "[similar]") {
  SimilarOptions with, without;
  without.title_field = false;
  auto titled = SimilarIndex::Build(Claims(), with);
  auto untitled = SimilarIndex::Build(Claims(), without);
  // "networks" and "covid" are only in claim 2's title.
  const std::string post = "networks spreading covid 19";
  CHECK(Top(*titled, post) == 2);
  CHECK(ScoreOf(*titled, post, 2) > ScoreOf(*untitled, post, 2));
}

TEST_CASE("similar: phrasings are matched each on its own", "[similar]") {
  std::vector<SimilarDoc> docs = Claims();
  docs[4].phrasings.push_back("Gargling with disinfectant kills COVID");
  auto index = SimilarIndex::Build(docs);
  auto hits = index->Search(Normalize("gargling with disinfectant kills covid"), 1);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].rule_index == 4);
  CHECK(hits[0].features[1] == Approx(1.0));  // one phrasing fully covered
}

TEST_CASE("similar: German claims are stemmed in German", "[similar]") {
  auto index = SimilarIndex::Build(Claims());
  CHECK(Top(*index, "Corona Impfungen machen Frauen unfruchtbar") == 5);
}

TEST_CASE("similar: the score is a probability that ranks the right claim first",
          "[similar]") {
  auto index = SimilarIndex::Build(Claims());
  double right = ScoreOf(*index, "BREAKING: vaccines cause autism in children!!", 0);
  double wrong = ScoreOf(*index, "BREAKING: vaccines cause autism in children!!", 1);
  CHECK(right > 0);
  CHECK(right < 1);
  CHECK(right > wrong);
  // A repetition of the claim scores above the default threshold; a post on
  // another subject that shares one word does not reach it.
  CHECK(right >= SimilarIndex::kDefaultThreshold);
  CHECK(ScoreOf(*index, "my children love school", 1) < SimilarIndex::kDefaultThreshold);
}

TEST_CASE("similar: withheld rules are left out and k bounds the hits", "[similar]") {
  auto index = SimilarIndex::Build(Claims());
  NormalizedText post = Normalize("the coronavirus spread by 5G towers, made in a lab");
  auto all = index->Search(post, 10);
  REQUIRE(all.size() >= 2);
  auto without = index->Search(post, 10, {all[0].rule_index});
  for (const SimilarHit& h : without) CHECK(h.rule_index != all[0].rule_index);
  CHECK(index->Search(post, 1).size() == 1);
  CHECK(index->Search(post, 0).empty());
  CHECK(SimilarIndex::Build({})->Search(post, 5).empty());
}

TEST_CASE("similar: claims that tie rank by rule index, however many tie", "[similar]") {
  // 300 claims say the same (and score the same against any post), among others;
  // they are indexed in an order unlike their rule indices. Far more tie than the
  // search keeps for exact scoring, so the hits show that the kept ones are the
  // lowest rules, not the first found.
  const std::string claim = "the moon landing was filmed in a studio in nevada";
  std::vector<SimilarDoc> docs;
  std::vector<uint32_t> same;
  for (uint32_t i = 0; i < 400; ++i) {
    const uint32_t rule = (i * 7919) % 400;  // a permutation of 0..399
    if (i % 4 != 0) {
      docs.push_back(Doc(rule, {claim}));
      same.push_back(rule);
    } else {
      docs.push_back(
          Doc(rule, {"claim number " + std::to_string(i) + " about studio lights"}));
    }
  }
  std::sort(same.begin(), same.end());
  auto index = SimilarIndex::Build(docs);
  const NormalizedText post =
      Normalize("They say the moon landing was filmed in a studio in Nevada");
  for (double min_score : {0.0, 0.6, SimilarIndex::kDefaultThreshold}) {
    const auto hits = index->Search(post, 5, {}, min_score);
    REQUIRE(hits.size() == 5);
    for (size_t i = 0; i < hits.size(); ++i) {
      CHECK(hits[i].rule_index == same[i]);
      CHECK(hits[i].score == hits[0].score);
    }
  }
}

TEST_CASE("similar: a minimum score returns exactly the full search's hits above it",
          "[similar]") {
  // Randomised claims (some titled, some with a second phrasing) and posts that
  // repeat a phrasing amid filler of any length, or are filler only: Search with
  // min_score skips the claims it bounds below the score, so it must return exactly
  // the full search's hits at or above it, for every post and score.
  std::mt19937 random(20251130);
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 400; ++i) vocabulary.push_back("w" + std::to_string(i) + "x");
  // Common words are drawn more often, as in text.
  auto word = [&]() {
    const size_t rank = std::min<size_t>(
        vocabulary.size() - 1,
        static_cast<size_t>(std::exp(std::uniform_real_distribution<double>(
            0, std::log(vocabulary.size()))(random))));
    return vocabulary[rank];
  };
  auto words = [&](size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out += (i ? " " : "") + word();
    return out;
  };
  std::vector<SimilarDoc> docs;
  std::vector<std::string> phrasings;
  for (uint32_t r = 0; r < 300; ++r) {
    std::vector<std::string> texts = {words(4 + random() % 10)};
    if (random() % 3 == 0) texts.push_back(words(3 + random() % 5));
    phrasings.insert(phrasings.end(), texts.begin(), texts.end());
    docs.push_back(Doc(r, texts, random() % 2 ? words(2 + random() % 6) : ""));
  }
  auto index = SimilarIndex::Build(docs);
  size_t above[4] = {0, 0, 0, 0};
  const double scores[4] = {0.6, 0.8, 0.9, SimilarIndex::kDefaultThreshold};
  for (int n = 0; n < 400; ++n) {
    std::string post = words(random() % 80);
    if (n % 2 == 0)
      post += " " + phrasings[random() % phrasings.size()] + " " + words(random() % 40);
    const NormalizedText normalized = Normalize(post);
    const auto all = index->Search(normalized, 5);
    for (int m = 0; m < 4; ++m) {
      const auto some = index->Search(normalized, 5, {}, scores[m]);
      std::vector<SimilarHit> expected;
      for (const SimilarHit& h : all) {
        if (h.score >= scores[m]) expected.push_back(h);
      }
      above[m] += expected.size();
      REQUIRE(some.size() == expected.size());
      for (size_t i = 0; i < some.size(); ++i) {
        CHECK(some[i].rule_index == expected[i].rule_index);
        CHECK(some[i].score == expected[i].score);
        CHECK(some[i].features == expected[i].features);
      }
    }
  }
  // The property is not vacuous: posts reach each score, the check's included.
  for (size_t count : above) CHECK(count >= 20);
}

TEST_CASE("similar: the gate of a check ends posts early and loses no hit", "[similar]") {
  // A list shaped like the bench's (claims of common words around rarer topic
  // words, some with a second phrasing or a title) and posts of 40 to 300 words,
  // some holding a claim whole, some the claim with little else. The gate must end
  // most long posts before the postings walk, and every search with a min_score
  // must return exactly the full search's hits at or above it.
  std::mt19937 random(20261201);
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 30000; ++i) vocabulary.push_back("v" + std::to_string(i) + "q");
  // Word ranks with Zipf's law (s = 1 for text, s = 0.5 over the rarer words for
  // topics, as the bench draws them: scripts/bench/generate.mjs).
  auto sampler = [&](size_t from, double exponent) {
    std::vector<double> cdf;
    double sum = 0;
    for (size_t i = from; i < vocabulary.size(); ++i) {
      sum += 1 / std::pow(static_cast<double>(i - from + 1), exponent);
      cdf.push_back(sum);
    }
    return [&random, &vocabulary, from, cdf, sum]() {
      const double x = std::uniform_real_distribution<double>(0, sum)(random);
      const size_t at =
          static_cast<size_t>(std::lower_bound(cdf.begin(), cdf.end(), x) - cdf.begin());
      return vocabulary[std::min(vocabulary.size() - 1, from + at)];
    };
  };
  auto common = sampler(0, 1.0);
  auto rare = sampler(1000, 0.5);
  auto zipf = [&](size_t from) { return from == 0 ? common() : rare(); };
  auto filler = [&](size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out += (i ? " " : "") + zipf(0);
    return out;
  };
  std::vector<SimilarDoc> docs;
  std::vector<std::string> claims;
  for (uint32_t r = 0; r < 1500; ++r) {
    std::string topic[4] = {zipf(1000), zipf(1000), zipf(1000), zipf(1000)};
    std::string claim;
    const size_t length = 8 + random() % 7;
    for (size_t k = 0; k < length; ++k)
      claim += (k ? " " : "") + (k % 3 == 0 ? topic[k % 4] : zipf(0));
    std::vector<std::string> texts = {claim};
    if (random() % 2)
      texts.push_back(topic[1] + " " + zipf(0) + " " + topic[0] + " " + topic[3]);
    claims.push_back(claim);
    docs.push_back(
        Doc(r, texts, random() % 2 ? "No, " + topic[0] + " is not " + topic[2] : ""));
  }
  auto index = SimilarIndex::Build(docs);
  size_t hits_found = 0, bounded = 0, ended_past_word_test = 0;
  for (int n = 0; n < 600; ++n) {
    std::string post;
    switch (n % 4) {
      case 0:  // a claim whole, nearly alone: often a hit
        post = claims[random() % claims.size()] + " " + filler(random() % 4);
        break;
      case 1:  // a claim amid filler
        post = filler(20 + random() % 100) + " " + claims[random() % claims.size()] +
               " " + filler(20 + random() % 100);
        break;
      default:
        post = filler(50 + random() % 350);
    }
    const NormalizedText normalized = Normalize(post);
    const auto all = index->Search(normalized, 5);
    // The gate's bound on z holds for every claim a wide search scores exactly.
    const SimilarWeights& weights = ShippedSimilarWeights();
    std::vector<double> bound_of(docs.size(), 0);
    const auto bounds = index->GateBounds(normalized, SimilarIndex::kDefaultThreshold);
    for (const auto& [rule, bound] : bounds) bound_of[rule] = bound;
    // A claim over the gate's own bound (its word test passed) that falls short of
    // its tight bound (its cosine and BM25 shares exact) does not open the gate.
    const double z_needed = std::log(SimilarIndex::kDefaultThreshold /
                                     (1 - SimilarIndex::kDefaultThreshold)) -
                            1e-6;
    const bool word_test_passed =
        std::any_of(bounds.begin(), bounds.end(),
                    [&](const auto& b) { return b.second >= z_needed; });
    const uint64_t ended_before = index->gate_stats().ended;
    const bool no_hit =
        index->Search(normalized, 5, {}, SimilarIndex::kDefaultThreshold).empty();
    if (word_test_passed && no_hit && index->gate_stats().ended > ended_before)
      ++ended_past_word_test;
    if (!bounds.empty()) {
      for (const SimilarHit& h : index->Search(normalized, 1000)) {
        double z = 0;
        for (int j = 0; j < kSimilarFeatureCount; ++j) z += weights[j] * h.features[j];
        INFO(post << "\nclaim " << h.rule_index);
        REQUIRE(z <= bound_of[h.rule_index] + 1e-9);
        ++bounded;
      }
    }
    for (double score : {0.55, 0.7, 0.9, SimilarIndex::kDefaultThreshold}) {
      const auto some = index->Search(normalized, 5, {}, score);
      std::vector<SimilarHit> expected;
      for (const SimilarHit& h : all) {
        if (h.score >= score) expected.push_back(h);
      }
      hits_found += expected.size();
      INFO(post);
      REQUIRE(some.size() == expected.size());
      for (size_t i = 0; i < some.size(); ++i) {
        CHECK(some[i].rule_index == expected[i].rule_index);
        CHECK(some[i].score == expected[i].score);
      }
    }
  }
  const SimilarIndex::GateStats stats = index->gate_stats();
  UNSCOPED_INFO("gate ended " << stats.ended << ", passed " << stats.passed << ", hits "
                              << hits_found << ", ended past the word test "
                              << ended_past_word_test);
  // Its promise, claim by claim (the searches above rarely come near it: the posts
  // it ends are far from any hit).
  CHECK(index->VerifyGate());
  // Not vacuous: hits were there to lose, and the gate both ended and passed posts.
  CHECK(hits_found >= 50);
  CHECK(bounded >= 10000);
  CHECK(stats.ended >= 150);
  CHECK(stats.passed >= 50);
  CHECK(ended_past_word_test >= 10);

  // The serialised index carries its gate, and the restored one lays it out from
  // there on its first check: the same promise, and post by post the same hits
  // and the same posts ended as an index built afresh.
  const auto restored = SerializedAndRestored(*index, docs.size());
  const auto fresh = SimilarIndex::Build(docs);
  for (int n = 0; n < 300; ++n) {
    const std::string post =
        n % 2 ? filler(50 + random() % 200)
              : filler(random() % 20) + " " + claims[random() % claims.size()];
    const NormalizedText normalized = Normalize(post);
    const auto a = fresh->Search(normalized, 5, {}, SimilarIndex::kDefaultThreshold);
    const auto b = restored->Search(normalized, 5, {}, SimilarIndex::kDefaultThreshold);
    INFO(post);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].rule_index == b[i].rule_index);
  }
  CHECK(restored->gate_stats().ended == fresh->gate_stats().ended);
  CHECK(restored->gate_stats().passed == fresh->gate_stats().passed);
  CHECK(restored->gate_stats().ended >= 50);
  CHECK(restored->VerifyGate());
}

TEST_CASE("similar: a post of more gate postings than the gate reads loses no hit",
          "[similar]") {
  // 3,000 claims of a rare topic word (each in 4 or 5 claims) and 8 of 16 shared
  // words (each in half of them): a post of a few shared words, or a claim, amid
  // a hundred topic words or more has more gate postings at its level than the
  // gate counts (kGatePostingBudget, 4,096), and goes to the walk with no claim
  // tested. A search with a min_score must still return exactly the full search's
  // hits at or above it.
  std::mt19937 random(20261207);
  std::vector<std::string> shared;
  for (int i = 0; i < 16; ++i) shared.push_back("s" + std::to_string(i) + "w");
  std::vector<SimilarDoc> docs;
  for (uint32_t r = 0; r < 3000; ++r) {
    std::vector<std::string> words = shared;
    std::shuffle(words.begin(), words.end(), random);
    std::string claim = "t" + std::to_string(r % 700) + "x";
    for (int k = 0; k < 8; ++k) claim += " " + words[k];
    docs.push_back(Doc(r, {claim}));
  }
  auto index = SimilarIndex::Build(docs);
  size_t hits_found = 0, hits_over_budget = 0;
  for (int n = 0; n < 80; ++n) {
    std::string post;
    if (n % 4 == 0) {  // a claim, nearly alone: a hit
      post = docs[random() % docs.size()].phrasings[0];
    } else {  // a few shared words (or a claim) amid topic words
      if (n % 4 == 1) {
        post = docs[random() % docs.size()].phrasings[0] + " ";
      } else {
        std::vector<std::string> words = shared;
        std::shuffle(words.begin(), words.end(), random);
        const size_t held = 3 + random() % 6;
        for (size_t k = 0; k < held; ++k) post += words[k] + " ";
      }
      const size_t topics = n % 4 == 3 ? 40 + random() % 60 : 150 + random() % 150;
      for (size_t k = 0; k < topics; ++k)
        post += "t" + std::to_string(random() % 700) + "x ";
    }
    const NormalizedText normalized = Normalize(post);
    const auto all = index->Search(normalized, 5);
    for (double score : {0.55, 0.7, SimilarIndex::kDefaultThreshold}) {
      const uint64_t over_before = index->gate_stats().over_budget;
      const auto some = index->Search(normalized, 5, {}, score);
      std::vector<SimilarHit> expected;
      for (const SimilarHit& h : all) {
        if (h.score >= score) expected.push_back(h);
      }
      hits_found += expected.size();
      if (index->gate_stats().over_budget > over_before)
        hits_over_budget += expected.size();
      INFO(post << " at " << score);
      REQUIRE(some.size() == expected.size());
      for (size_t i = 0; i < some.size(); ++i) {
        CHECK(some[i].rule_index == expected[i].rule_index);
        CHECK(some[i].score == expected[i].score);
      }
    }
  }
  const SimilarIndex::GateStats stats = index->gate_stats();
  UNSCOPED_INFO("gate ended " << stats.ended << ", passed " << stats.passed
                              << ", over budget " << stats.over_budget << ", hits "
                              << hits_found << ", of them over budget "
                              << hits_over_budget);
  CHECK(index->VerifyGate());
  // Not vacuous: most posts went over the budget, and some of those had hits to
  // lose (a claim amid the topic words).
  CHECK(stats.over_budget >= 100);
  CHECK(hits_over_budget >= 5);
  CHECK(hits_found >= 100);
}

TEST_CASE("similar: a claim of more words than the gate tries loses no hit",
          "[similar]") {
  // BuildGate tries a claim's rarest words as its cut up to kGateMostWords (256);
  // past that a level takes all the claim's words. The big claim's rare phrasings
  // give it 300 rare words, and its last phrasing is of words every small claim
  // has: without its 256 rarest words that phrasing is still whole, so no cut is
  // found in time, and a post of that phrasing alone must still reach it.
  std::string common_words;
  for (int i = 0; i < 12; ++i)
    common_words += (i ? " " : "") + ("c" + std::to_string(i) + "w");
  std::vector<SimilarDoc> docs;
  for (uint32_t r = 0; r < 40; ++r) {
    docs.push_back(Doc(r, {"t" + std::to_string(r) + "a t" + std::to_string(r) + "b " +
                           common_words.substr(0, 3 + 4 * (r % 10))}));
  }
  std::vector<std::string> big;
  for (int p = 0; p < 10; ++p) {
    std::string phrasing;
    for (int i = 0; i < 30; ++i)
      phrasing += (i ? " " : "") + ("r" + std::to_string(p * 30 + i) + "x");
    big.push_back(phrasing);
  }
  big.push_back(common_words);
  docs.push_back(Doc(40, big));
  auto index = SimilarIndex::Build(docs);
  CHECK(index->VerifyGate());
  size_t big_found = 0;
  for (const std::string& post :
       {common_words, big[0], big[3] + " " + common_words,
        std::string("t7a t7b c0w c1w c2w"), common_words + " t3a"}) {
    const NormalizedText normalized = Normalize(post);
    const auto all = index->Search(normalized, 5);
    for (double score : {0.3, 0.55, 0.7, SimilarIndex::kDefaultThreshold}) {
      const auto some = index->Search(normalized, 5, {}, score);
      std::vector<SimilarHit> expected;
      for (const SimilarHit& h : all) {
        if (h.score >= score) expected.push_back(h);
      }
      INFO(post << " at " << score);
      REQUIRE(some.size() == expected.size());
      for (size_t i = 0; i < some.size(); ++i) {
        CHECK(some[i].rule_index == expected[i].rule_index);
        big_found += some[i].rule_index == 40;
      }
    }
  }
  CHECK(big_found >= 4);
}

TEST_CASE("similar: the word cache serves posts of any number of distinct words",
          "[similar]") {
  // Search remembers a word's terms between posts, in a table of a fixed number
  // of words; a post of more distinct words than it holds grows it to its own
  // size (70k words: more than the table first has slots), and the searches
  // before and after it rank as a fresh index does.
  auto index = SimilarIndex::Build(Claims(), SimilarOptions());
  const std::string claim = "5G towers spread the coronavirus";
  const auto fresh = index->Search(Normalize(claim), 3);
  REQUIRE_FALSE(fresh.empty());
  std::string huge;
  for (int i = 0; i < 70000; ++i) huge += "w" + std::to_string(i) + "x ";
  huge += claim;
  const auto hits = index->Search(Normalize(huge), 3);
  REQUIRE_FALSE(hits.empty());
  CHECK(hits[0].rule_index == 2);
  const auto again = index->Search(Normalize(claim), 3);
  REQUIRE(again.size() == fresh.size());
  for (size_t i = 0; i < again.size(); ++i) {
    CHECK(again[i].rule_index == fresh[i].rule_index);
    CHECK(again[i].score == fresh[i].score);
  }
}

TEST_CASE("similar: every bigram of every claim is found in a large list", "[similar]") {
  // Search asks a Bloom filter before the bigram dictionary; the filter grows with
  // the list and is derived again when an index is read back. No claim's bigram
  // may be lost to it: a post that is a claim has that claim's whole bigram
  // coverage, in the built index and in the restored one.
  std::vector<SimilarDoc> docs;
  auto word = [](int i) {
    std::string w;
    for (int n = i + 1; n > 0; n /= 20) w += static_cast<char>('a' + n % 20);
    return w + "q";
  };
  for (uint32_t d = 0; d < 3000; ++d) {
    docs.push_back(Doc(d, {word(d) + " " + word(d + 3001) + " " + word(d + 6002) + " " +
                           word(d + 9003)}));
  }
  auto index = SimilarIndex::Build(docs);
  const auto restored = SerializedAndRestored(*index, docs.size());
  for (uint32_t d = 0; d < docs.size(); d += 7) {
    for (const SimilarIndex* searched : {index.get(), restored.get()}) {
      const auto hits = searched->Search(Normalize(docs[d].phrasings[0]), 1);
      REQUIRE(hits.size() == 1);
      CHECK(hits[0].rule_index == d);
      CHECK(hits[0].features[5] == Approx(1.0));
    }
  }
}

TEST_CASE("similar: spans cover the post's words that the claim has", "[similar]") {
  auto index = SimilarIndex::Build(Claims());
  std::string text = "OMG: 5G towers really spread the coronavirus, share!";
  auto spans = index->Spans(Normalize(text), 2);
  // "really" is not the claim's: it splits the runs; "the" (a stop word) does not.
  REQUIRE(spans.size() == 2);
  CHECK(text.substr(spans[0].begin, spans[0].end - spans[0].begin) == "5G towers");
  CHECK(text.substr(spans[1].begin, spans[1].end - spans[1].begin) ==
        "spread the coronavirus");
}

TEST_CASE(
    "similar: a term counts at most 255 times in a claim; a restore checks counts "
    "and totals",
    "[similar]") {
  // A term's frequency takes 8 bits (similar.cc, IdCount): a claim saying a word
  // 300 times scores as one saying it 255 times, in the built index and the
  // restored one; at 254 times it is another claim.
  auto claim = [](int times) {
    std::string text;
    for (int i = 0; i < times; ++i) text += "zorbly ";
    return text + "quaxon flimp";
  };
  const NormalizedText post = Normalize("zorbly zorbly quaxon flimp");
  auto score = [&](const SimilarIndex& index) {
    const auto hits = index.Search(post, 1);
    REQUIRE(hits.size() == 1);
    return hits[0].score;
  };
  auto restore = [](const std::string& bytes, std::unique_ptr<SimilarIndex>* out) {
    ByteReader r(bytes);
    return SimilarIndex::Deserialize(&r, {}, 2, out) && *out != nullptr && r.at_end();
  };
  const std::vector<SimilarDoc> other = {Doc(1, {"a different claim entirely"})};
  auto index_of = [&](int times) {
    std::vector<SimilarDoc> docs = {Doc(0, {claim(times)})};
    docs.insert(docs.end(), other.begin(), other.end());
    return SimilarIndex::Build(docs);
  };
  auto at_300 = index_of(300), at_255 = index_of(255), at_254 = index_of(254);
  CHECK(score(*at_300) == score(*at_255));
  CHECK(score(*at_254) != score(*at_255));
  ByteWriter w;
  at_300->Serialize(&w);
  const std::string bytes = w.bytes();
  std::unique_ptr<SimilarIndex> restored;
  REQUIRE(restore(bytes, &restored));
  CHECK(score(*restored) == score(*at_300));

  // Where the claims' totals are: after the options, weights, languages, the
  // dictionaries (the words' keys, the bigrams' runs by first word and their pairs,
  // the grams' keys: arrays of 8, 4, 8 and 8 bytes), and the claim count.
  size_t at = 1 + 8 * kSimilarFeatureCount;
  uint32_t n = 0;
  std::memcpy(&n, bytes.data() + at, 4);
  at += 4 + n;
  size_t pairs = 0;   // where the bigrams' (second word, id) pairs are
  size_t begins = 0;  // and their runs' bounds, by first word
  const size_t widths[] = {8, 4, 8, 8};
  for (int array = 0; array < 4; ++array) {
    std::memcpy(&n, bytes.data() + at, 4);
    if (array == 1) begins = at + 4;
    if (array == 2) pairs = at + 4;
    at += 4 + widths[array] * n;
  }
  std::memcpy(&n, bytes.data() + at, 4);
  REQUIRE(n == 2);  // the claim count
  const size_t term_total = at + 4, word_total = at + 8;
  for (size_t field : {term_total, word_total}) {
    for (int delta : {-1, 1})
      CHECK_FALSE(restore(testing::WithU32Added(bytes, field, delta), &restored));
  }
  // The count 255 of "zorbly" in the claim field (a Var32: ff 01) made 256 (80 02).
  const size_t count = bytes.find("\xff\x01", word_total + 4);
  REQUIRE(count != std::string::npos);
  std::string bad = bytes;
  bad.replace(count, 2, "\x80\x02");
  CHECK_FALSE(restore(bad, &restored));
  bad.replace(count, 2, "\xfe\x01");  // 254: well formed
  CHECK(restore(bad, &restored));

  // The bigrams (zorbly zorbly, zorbly quaxon, quaxon flimp, different claim,
  // claim entirely): an id given twice, or a second word past the words, is
  // refused.
  uint32_t bigram_count = 0;
  std::memcpy(&bigram_count, bytes.data() + pairs - 4, 4);
  REQUIRE(bigram_count == 5);
  std::string twice = bytes;
  std::memcpy(&twice[pairs + 12], bytes.data() + pairs + 4,
              4);  // pair 1's id := pair 0's
  CHECK_FALSE(restore(twice, &restored));
  std::string past = bytes;
  const uint32_t far = 1000;
  std::memcpy(&past[pairs], &far, 4);  // pair 0's second word
  CHECK_FALSE(restore(past, &restored));
  // A run's bound past the pairs, before runs that end within them, is refused
  // before any run is read (the sanitizer build found this one read past them).
  std::string beyond = bytes;
  std::memcpy(&beyond[begins + 4], &far, 4);  // the first word's run ends at 1000
  CHECK_FALSE(restore(beyond, &restored));
}

TEST_CASE("similar: a serialised index searches alike; damaged bytes never crash",
          "[similar]") {
  auto index = SimilarIndex::Build(Claims());
  ByteWriter w;
  index->Serialize(&w);
  const std::string bytes = w.bytes();
  const std::vector<std::string> posts = {"vaccine causing autism??", "5G spreads covid",
                                          "Corona Impfung unfruchtbar", "bleach cure"};
  {
    ByteReader r(bytes);
    std::unique_ptr<SimilarIndex> restored;
    REQUIRE(SimilarIndex::Deserialize(&r, {}, Claims().size(), &restored));
    REQUIRE(restored != nullptr);
    CHECK(r.at_end());
    for (const std::string& post : posts) {
      auto a = index->Search(Normalize(post), 6),
           b = restored->Search(Normalize(post), 6);
      REQUIRE(a.size() == b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].rule_index == b[i].rule_index);
        CHECK(a[i].score == b[i].score);
      }
    }
  }
  {  // other options: well formed, but the caller must rebuild
    SimilarOptions other;
    other.char_ngrams = false;
    ByteReader r(bytes);
    std::unique_ptr<SimilarIndex> restored;
    CHECK(SimilarIndex::Deserialize(&r, other, Claims().size(), &restored));
    CHECK(restored == nullptr);
  }
  {  // rule indices must be below the list's rule count
    ByteReader r(bytes);
    std::unique_ptr<SimilarIndex> restored;
    CHECK_FALSE(SimilarIndex::Deserialize(&r, {}, 3, &restored));
  }
  // Truncated and flipped bytes: refused, or an index whose every id is in range
  // (the sanitizer build runs this too).
  std::mt19937 rng(7);
  size_t refused = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string bad = bytes;
    if (i % 4 == 0) {
      bad.resize(rng() % bad.size());
    } else {
      for (int k = 0; k < 1 + i % 3; ++k) bad[rng() % bad.size()] ^= 1 + rng() % 255;
    }
    ByteReader r(bad);
    std::unique_ptr<SimilarIndex> restored;
    if (!SimilarIndex::Deserialize(&r, {}, Claims().size(), &restored)) {
      ++refused;
      continue;
    }
    if (restored == nullptr) continue;
    for (const std::string& post : posts) {
      for (const SimilarHit& hit : restored->Search(Normalize(post), 6)) {
        CHECK(hit.rule_index < Claims().size());
        CHECK(hit.score >= 0);
        CHECK(hit.score <= 1);
        restored->Spans(Normalize(post), hit.rule_index);
      }
      // With a minimum score, through the gate laid out from the damaged bytes.
      for (const SimilarHit& hit :
           restored->Search(Normalize(post), 6, {}, SimilarIndex::kDefaultThreshold)) {
        CHECK(hit.rule_index < Claims().size());
      }
    }
  }
  CHECK(refused > 500);  // every truncation at least
}

TEST_CASE("similar: the bound on the sum of the largest values holds and is close",
          "[similar]") {
  // LargestSumBound against the plain answer: sorted, the first `most` added up.
  // Never below it; equal to it for up to 16, all, or values all alike; and above it
  // by no more than the `most` values could gain if each rose to the largest value
  // of its bucket. Values that share most of their bits (one binade; neighbours in
  // the last bits), ties at the boundary, zeros, negatives, and every `most` from
  // none to past the end.
  std::mt19937 rng(20261205);
  size_t bounds = 0, exact = 0;
  auto expected = [](std::vector<float> values, size_t most) {
    std::sort(values.begin(), values.end(), std::greater<float>());
    double sum = 0;
    for (size_t i = 0; i < std::min(most, values.size()); ++i) sum += values[i];
    return sum;
  };
  auto check = [&](const std::vector<float>& values) {
    const std::vector<float> before = values;
    for (size_t most = 0; most <= values.size() + 1; ++most) {
      INFO("values " << values.size() << ", most " << most);
      const double want = expected(values, most);
      const double bound = LargestSumBound(values, most);
      REQUIRE(bound >= want - 1e-9 * std::abs(want) - 1e-30);
      const bool alike = std::adjacent_find(values.begin(), values.end(),
                                            std::not_equal_to<float>()) == values.end();
      // (Up to 16 of them, the largest are kept in order: the sum is exact.)
      if (most <= 16 || most >= values.size() || alike)
        REQUIRE(bound == Approx(want).epsilon(1e-12).margin(1e-30));
      ++bounds;
      exact += bound <= want + 1e-9 * std::abs(want);
    }
    REQUIRE(values == before);  // read, never reordered
  };
  check({});
  check({3.5f});
  check({0.0f, 0.0f, 0.0f});
  check({2.0f, 2.0f, 2.0f, 1.0f, 2.0f});  // a tie across the boundary: all bits equal
  check({-1.0f, 4.0f, -0.5f, 0.0f, -8.0f, 1e-30f});
  for (int round = 0; round < 300; ++round) {
    const size_t n = std::uniform_int_distribution<size_t>(1, 300)(rng);
    std::vector<float> values(n);
    const int kind = round % 4;
    for (float& v : values) {
      if (kind == 0) {  // weights of terms: idfs times counts, squared or not
        v = std::uniform_real_distribution<float>(0.0f, 40.0f)(rng);
      } else if (kind == 1) {  // one binade: the same exponent bits
        v = std::uniform_real_distribution<float>(1.0f, 2.0f)(rng);
      } else if (kind == 2) {  // a few distinct values, many ties
        v = static_cast<float>(std::uniform_int_distribution<int>(0, 5)(rng)) * 0.75f;
      } else {  // neighbours in the last bits only
        uint32_t bits = 0x3fc00000u + std::uniform_int_distribution<uint32_t>(0, 40)(rng);
        std::memcpy(&v, &bits, sizeof v);
      }
    }
    check(values);
  }
  // Small sets: a bucket holds one value or equal ones most of the time.
  CHECK(exact > bounds / 2);
  // A post's weights (hundreds to a thousand and more, up to 40): within 3%.
  for (int round = 0; round < 200; ++round) {
    std::vector<float> weights(std::uniform_int_distribution<size_t>(50, 1500)(rng));
    for (float& v : weights) v = std::uniform_real_distribution<float>(0.0f, 40.0f)(rng);
    const size_t most = std::uniform_int_distribution<size_t>(1, weights.size() - 1)(rng);
    const double want = expected(weights, most);
    INFO("values " << weights.size() << ", most " << most);
    REQUIRE(LargestSumBound(weights, most) >= want * (1 - 1e-9));
    REQUIRE(LargestSumBound(weights, most) <= want * 1.03);
  }
}

}  // namespace
}  // namespace factlens
