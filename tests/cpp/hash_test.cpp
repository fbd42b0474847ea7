// Tests of the hash component: the keyed hash of page text; and the binary
// helpers of the compiled form (its checksum, its writer).
#include "factlens/hash.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "factlens/binary.h"

namespace factlens {
namespace {

TEST_CASE("hash: the seed is drawn once and the hash depends on every byte", "[hash]") {
  CHECK(TextHashSeed() == TextHashSeed());
  const uint64_t seed = TextHashSeed();
  CHECK(TextHash("vaccine", seed) == TextHash(std::string("vaccine"), seed));
  CHECK(TextHash("vaccine", seed) != TextHash("vaccinf", seed));
  CHECK(TextHash("", seed) != TextHash(std::string(1, '\0'), seed));  // length counts
  CHECK(TextHash("abcdefgh", seed) != TextHash("abcdefghi", seed));   // block edge
  CHECK(TextHash("vaccine", 1) != TextHash("vaccine", 2));
}

TEST_CASE("hash: SameText compares every byte, at every length", "[hash]") {
  for (size_t n = 0; n <= 20; ++n) {
    const std::string a(n, 'x');
    CHECK(SameText(a, std::string(n, 'x')));
    CHECK_FALSE(SameText(a, std::string(n + 1, 'x')));
    for (size_t i = 0; i < n; ++i) {
      std::string b = a;
      b[i] = 'y';
      CHECK_FALSE(SameText(a, b));
    }
  }
}

TEST_CASE("hash: words aimed at one table slot under one seed spread under another",
          "[hash]") {
  // What a page could do with a fixed hash: find words that all fall in one slot
  // of a 1024-slot table. Under another seed (the page cannot know the process's)
  // those words spread like any others.
  constexpr uint64_t kMask = 1023;
  const uint64_t known = 0x1234567, other = 0x89abcdef;
  std::vector<std::string> aimed;
  for (int i = 0; aimed.size() < 64; ++i) {
    std::string word = "w" + std::to_string(i);
    if ((TextHash(word, known) & kMask) == 0) aimed.push_back(word);
  }
  std::vector<int> per_slot(kMask + 1, 0);
  for (const std::string& w : aimed) ++per_slot[TextHash(w, other) & kMask];
  // 64 words in 1024 slots: 3 in one slot has odds of about 1 in 25; 6 would be
  // far beyond chance.
  CHECK(*std::max_element(per_slot.begin(), per_slot.end()) < 6);
}

// The compiled form's checksum, taken over its parts as they are written (never
// one buffer): any split of the bytes gives Checksum64 of the whole, tails and
// words that straddle two parts included.
TEST_CASE("binary: Checksum64Stream over any split equals Checksum64", "[hash]") {
  std::mt19937 rng(20261201);
  for (int round = 0; round < 300; ++round) {
    std::string bytes(rng() % 200, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    Checksum64Stream sum(bytes.size());
    for (size_t at = 0; at < bytes.size();) {
      const size_t piece = std::min<size_t>(bytes.size() - at, rng() % 20);
      sum.Add(std::string_view(bytes).substr(at, piece));
      at += piece;
    }
    CHECK(sum.Finish() == Checksum64(bytes));
  }
  // It depends on every byte and on the length.
  CHECK(Checksum64("abcdefghi") != Checksum64("abcdefghj"));
  CHECK(Checksum64(std::string(8, '\0')) != Checksum64(std::string(9, '\0')));
}

// The compiled form's export writes each section through a streaming writer: the
// parts it hands out join to what a plain writer writes, each buffered part is
// handed out once it reaches the part size (so none grows past two parts), a run
// of at least a part goes out as it is, and size() counts every byte.
TEST_CASE("binary: a streaming ByteWriter hands out what a plain one writes", "[hash]") {
  std::mt19937 rng(20261202);
  for (int round = 0; round < 200; ++round) {
    const size_t part = 1 + rng() % 40;
    std::vector<std::string> parts;
    ByteWriter plain;
    ByteWriter stream = ByteWriter::Streaming(
        part, [&](std::string_view bytes) { parts.emplace_back(bytes); });
    stream.Reserve(1000);
    for (int op = 0; op < 60; ++op) {
      const uint32_t value = static_cast<uint32_t>(rng());
      std::vector<uint16_t> values(rng() % 30);
      for (uint16_t& v : values) v = static_cast<uint16_t>(rng());
      for (ByteWriter* w : {&plain, &stream}) {
        switch (value % 5) {
          case 0:
            w->U8(static_cast<uint8_t>(value));
            break;
          case 1:
            w->U32(value);
            break;
          case 2:
            w->Var32(value >> (value % 32));
            break;
          case 3:
            w->Str(std::string(value % 50, 'x'));
            break;
          default:
            w->Vec(values);
            break;
        }
      }
      CHECK(stream.size() == plain.size());
      CHECK(stream.bytes().size() < part);  // what is held back is less than a part
    }
    stream.Flush();
    CHECK(stream.size() == plain.size());
    CHECK(stream.bytes().empty());
    std::string joined;
    for (const std::string& p : parts) {
      CHECK(!p.empty());
      joined += p;
    }
    CHECK(joined == plain.bytes());
  }
}

}  // namespace
}  // namespace factlens
