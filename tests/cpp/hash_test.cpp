// Tests of the hash component: the keyed hash of page text; and the binary
// helpers of the compiled form (its checksum, its writer and reader).
#include "factlens/hash.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
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

TEST_CASE("hash: a readable end changes how bytes are read, never the hash", "[hash]") {
  // Every length and place in a buffer, near its end and far from it, with bytes
  // past the text that differ from run to run: the one-load path must mask them.
  const uint64_t seed = TextHashSeed();
  std::mt19937 random(7);
  for (int round = 0; round < 20; ++round) {
    std::string buffer(48, '\0');
    for (char& c : buffer) c = static_cast<char>(random());
    const char* end = buffer.data() + buffer.size();
    for (size_t begin = 0; begin <= buffer.size(); ++begin) {
      for (size_t n = 0; begin + n <= buffer.size(); ++n) {
        const std::string_view text(buffer.data() + begin, n);
        const std::string copy(text);  // alone in a buffer of its own size
        uint64_t low = 0;
        for (size_t k = 0; k < n && k < 8; ++k)
          low |= uint64_t{static_cast<uint8_t>(copy[k])} << (8 * k);
        REQUIRE(LowBytes(text.data(), n, end) == low);
        REQUIRE(LowBytes(copy.data(), n) == low);
        REQUIRE(TextHash(text, seed, end) == TextHash(copy, seed));
      }
    }
  }
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
  // It depends on every byte (of each of the four lanes' words, and of the tail),
  // on the length, and on the order of words, within a lane and across lanes.
  CHECK(Checksum64("abcdefghi") != Checksum64("abcdefghj"));
  CHECK(Checksum64(std::string(8, '\0')) != Checksum64(std::string(9, '\0')));
  std::string bytes(77, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  const uint64_t whole = Checksum64(bytes);
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
    CHECK(Checksum64(flipped) != whole);
  }
  auto swapped = [&](size_t a, size_t b) {  // the 8-byte words at a and b
    std::string s = bytes;
    for (size_t k = 0; k < 8; ++k) std::swap(s[a + k], s[b + k]);
    return Checksum64(s);
  };
  CHECK(swapped(0, 8) != whole);   // lanes 0 and 1 of a block
  CHECK(swapped(8, 40) != whole);  // lane 1 of two blocks
  CHECK(swapped(0, 56) != whole);  // lane 0 and lane 3 of the next block
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

// The reader an import uses: a section brought in a window at a time, each from a
// fresh buffer whose predecessor is overwritten first (as the wasm binding's are
// freed), so a read that kept using an old window would see the poison.
TEST_CASE("binary: a streaming ByteReader reads what a plain one reads, at any window",
          "[hash]") {
  std::mt19937 rng(41);
  ByteWriter w;
  std::vector<std::string> strings;
  for (int i = 0; i < 300; ++i) {
    w.U8(static_cast<uint8_t>(i));
    w.U32(static_cast<uint32_t>(rng()));
    w.Var32(static_cast<uint32_t>(rng() >> (rng() % 32)));
    std::string s(rng() % (i % 50 == 0 ? 700 : 20), '\0');
    for (char& c : s) c = static_cast<char>('a' + rng() % 26);
    strings.push_back(s);
    w.Str(s);
    w.Vec(std::vector<uint32_t>(rng() % 90, static_cast<uint32_t>(i)));
    w.F64(i / 7.0);
    w.Str(s);     // read back as a View
    w.Append(s);  // read back by AppendTo
  }
  const std::string bytes = w.bytes();
  // Reads everything back and returns it as text, with every check's answer.
  auto read_all = [&](ByteReader& r) {
    std::string out;
    for (int i = 0; i < 300; ++i) {
      // (One read a statement: the operands of + are evaluated in any order.)
      out += std::to_string(r.U8()) + ",";
      out += std::to_string(r.U32()) + ",";
      out += std::to_string(r.Var32()) + ",";
      std::string s;
      out += r.Str(&s) ? s : "!";
      std::vector<uint32_t> v;
      out += r.Vec(&v) ? std::to_string(v.size()) : "!";
      out += ",";
      out += std::to_string(r.F64()) + ",";
      std::string_view view;
      out += r.StrView(&view) ? std::string(view) : "!";
      std::string appended = "<";  // AppendTo keeps what was there
      out += r.AppendTo(&appended, strings[i].size()) ? appended : "!";
      out += ";";
    }
    return out + (r.ok() && r.at_end() ? "at the end" : "failed");
  };
  ByteReader plain(bytes);
  const std::string expected = read_all(plain);
  REQUIRE(expected.substr(expected.size() - 10) == "at the end");
  for (size_t window : {size_t{1}, size_t{3}, size_t{8}, size_t{13}, size_t{100},
                        size_t{4096}, bytes.size() * 2}) {
    INFO("window " << window);
    std::unique_ptr<char[]> part;
    size_t part_size = 0, calls = 0, at = 0, last = 0, misplaced = 0, oversized = 0;
    ByteReader r =
        ByteReader::Streaming(bytes.size(), window, [&](size_t offset, size_t n) {
          // Forward, with no gap (a view that does not fit is brought again from its
          // start, with the rest of the window it began in).
          misplaced += offset < last || offset > at || n > bytes.size() - offset;
          last = offset;
          oversized +=
              n > window && n > 4 + 700;  // a window, or one string larger than it
          if (part) std::memset(part.get(), 0xA5, part_size);
          part.reset(new char[n > 0 ? n : 1]);
          part_size = n;
          std::memcpy(part.get(), bytes.data() + offset, n);
          ++calls;
          at = std::max(at, offset + n);
          return std::string_view(part.get(), n);
        });
    const std::string got = read_all(r);
    CHECK(got == expected);
    CHECK(misplaced == 0);
    CHECK(oversized == 0);
    CHECK(calls >= bytes.size() / std::max(window, size_t{704}));
  }
}

TEST_CASE("binary: a streaming ByteReader fails on a short or missing window", "[hash]") {
  ByteWriter w;
  w.Str("a string of some length");
  w.U32(7);
  const std::string bytes = w.bytes();
  // A source that brings less than asked (a truncated store): the read fails, and
  // every later read fails with it.
  ByteReader r = ByteReader::Streaming(bytes.size(), 5, [&](size_t offset, size_t n) {
    return std::string_view(bytes).substr(offset, n - 1);
  });
  std::string s;
  CHECK_FALSE(r.Str(&s));
  CHECK_FALSE(r.ok());
  CHECK(r.U32() == 0);
  // A length past the end fails before anything is brought for it.
  ByteWriter long_string;
  long_string.U32(1000);
  long_string.Append("abc");
  const std::string lying = long_string.bytes();
  size_t brought = 0;
  ByteReader l = ByteReader::Streaming(lying.size(), 4, [&](size_t offset, size_t n) {
    brought += n;
    return std::string_view(lying).substr(offset, n);
  });
  std::string_view view;
  CHECK_FALSE(l.StrView(&view));
  CHECK(brought == 4);  // the length only
  CHECK(l.remaining() == 3);
}

}  // namespace
}  // namespace factlens
