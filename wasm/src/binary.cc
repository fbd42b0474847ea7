// Copyright factlens authors.
#include "factlens/binary.h"

namespace factlens {

uint64_t Checksum64(std::string_view bytes) {
  // FNV-1a, one 8-byte word per step (then the tail byte by byte): a corrupted
  // byte changes the word it lands in and so the result, at a fraction of the
  // cost of a byte-wise loop over a blob of tens of megabytes.
  constexpr uint64_t kPrime = 0x100000001b3ULL;
  uint64_t h = 0xcbf29ce484222325ULL ^ bytes.size();
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    h = (h ^ word) * kPrime;
    h ^= h >> 29;
  }
  for (; i < bytes.size(); ++i) {
    h = (h ^ static_cast<unsigned char>(bytes[i])) * kPrime;
  }
  return h ^ (h >> 32);
}

}  // namespace factlens
