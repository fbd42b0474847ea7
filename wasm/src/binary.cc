// Copyright factlens authors.
#include "factlens/binary.h"

#include <algorithm>
#include <cstring>

namespace factlens {

// FNV-1a-like, over 8-byte words in four lanes (a 32-byte block is a word for
// each): a corrupted byte changes the word it lands in and so its lane and the
// result. One lane was a chain of dependent multiplies, 8 bytes each; four
// independent chains go about twice as fast in wasm, and a restore reads every
// byte of a form of tens of megabytes through this (100k rules: 20 -> 11 ms).
constexpr uint64_t kPrime = 0x100000001b3ULL;

namespace {

inline uint64_t Step(uint64_t h, const char* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  h = (h ^ word) * kPrime;
  return h ^ (h >> 29);
}

}  // namespace

Checksum64Stream::Checksum64Stream(uint64_t total_size) {
  for (int l = 0; l < kLanes; ++l)
    h_[l] = (0xcbf29ce484222325ULL + static_cast<uint64_t>(l) * kPrime) ^ total_size;
}

void Checksum64Stream::Blocks(const char* p, size_t blocks) {
  uint64_t a = h_[0], b = h_[1], c = h_[2], d = h_[3];
  for (size_t i = 0; i < blocks; ++i, p += kBlock) {
    a = Step(a, p);
    b = Step(b, p + 8);
    c = Step(c, p + 16);
    d = Step(d, p + 24);
  }
  h_[0] = a, h_[1] = b, h_[2] = c, h_[3] = d;
}

void Checksum64Stream::Add(std::string_view bytes) {
  size_t i = 0;
  if (pending_size_ > 0) {
    const size_t take = std::min(bytes.size(), kBlock - pending_size_);
    std::memcpy(pending_ + pending_size_, bytes.data(), take);
    pending_size_ += take;
    i = take;
    if (pending_size_ < kBlock) return;
    Blocks(pending_, 1);
    pending_size_ = 0;
  }
  const size_t blocks = (bytes.size() - i) / kBlock;
  Blocks(bytes.data() + i, blocks);
  i += blocks * kBlock;
  pending_size_ = bytes.size() - i;
  std::memcpy(pending_, bytes.data() + i, pending_size_);
}

uint64_t Checksum64Stream::Finish() const {
  // The lanes folded in order (so words swapped between lanes change it), then the
  // last block's bytes.
  uint64_t h = h_[0];
  for (int l = 1; l < kLanes; ++l) h = (h ^ (h_[l] ^ (h_[l] >> 31))) * kPrime;
  for (size_t i = 0; i < pending_size_; ++i)
    h = (h ^ static_cast<unsigned char>(pending_[i])) * kPrime;
  return h ^ (h >> 32);
}

uint64_t Checksum64(std::string_view bytes) {
  Checksum64Stream sum(bytes.size());
  sum.Add(bytes);
  return sum.Finish();
}

}  // namespace factlens
