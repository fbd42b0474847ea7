// Hashing of text that comes from a page: the tables a check builds over a
// post's words (keyword positions, the similarity index's word cache).
//
// A page is hostile input. With a fixed hash function, a page can be written
// whose words all land in one stretch of such a table, turning every lookup into
// a walk over all of them (quadratic time in the post's length). TextHash is keyed
// by a seed drawn once per process from the system's random source, which a page
// cannot know, so it cannot aim its words. Nothing that is saved or compared across
// processes may use it: compiled forms and term dictionaries keep their own fixed
// hashes.
#ifndef FACTLENS_HASH_H_
#define FACTLENS_HASH_H_

#include <cstdint>
#include <cstring>
#include <string_view>

namespace factlens {

// Returns the process's seed for TextHash (random; a fixed value only if the
// system has no random source).
uint64_t TextHashSeed();

// Returns the first min(n, 8) bytes at `p` as a little-endian number, the bytes
// past them zero. `readable_end`, if not null, is the end of the buffer `p` lies
// in: where 8 bytes from `p` lie within it, one load and a mask stand for the
// loop over the bytes (a memcpy of variable size is a call in wasm, and a loop a
// branch per byte: the words a check hashes are mostly shorter than 8 bytes).
inline uint64_t LowBytes(const char* p, size_t n, const char* readable_end = nullptr) {
  if (n == 0) return 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (n >= 8 || (readable_end != nullptr && readable_end - p >= 8)) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return n >= 8 ? v : v & ((uint64_t{1} << (8 * n)) - 1);
  }
#endif
  uint64_t v = 0;
  for (size_t k = 0; k < n && k < 8; ++k)
    v |= uint64_t{static_cast<uint8_t>(p[k])} << (8 * k);
  return v;
}

// Returns a 64-bit hash of `bytes` keyed by `seed`: 8 bytes at a time, each block
// mixed into the state by a bijective finaliser, so whether two texts collide
// depends on the seed. `readable_end` as for LowBytes (the same hash either way).
inline uint64_t TextHash(std::string_view bytes, uint64_t seed,
                         const char* readable_end = nullptr) {
  auto mix = [](uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
  };
  uint64_t h = seed;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t block;
    std::memcpy(&block, bytes.data() + i, 8);
    h = mix(h ^ block);
  }
  const uint64_t last = LowBytes(bytes.data() + i, bytes.size() - i, readable_end);
  return mix(h ^ last ^ (uint64_t{bytes.size()} << 56));
}

// Returns whether `a` and `b` are the same bytes: the comparison a table keyed by
// TextHash makes on a hit. Inline, 8 bytes at a time (memcmp is a call in wasm, and
// the words compared are short).
inline bool SameText(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  size_t i = 0;
  for (; i + 8 <= a.size(); i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y) return false;
  }
  for (; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace factlens

#endif  // FACTLENS_HASH_H_
