// Copyright factlens authors.
#include "factlens/binary.h"

#include <algorithm>

namespace factlens {

// FNV-1a, one 8-byte word per step (then the tail byte by byte): a corrupted byte
// changes the word it lands in and so the result, at a fraction of the cost of a
// byte-wise loop over a blob of tens of megabytes.
constexpr uint64_t kPrime = 0x100000001b3ULL;

Checksum64Stream::Checksum64Stream(uint64_t total_size)
    : h_(0xcbf29ce484222325ULL ^ total_size) {}

void Checksum64Stream::Add(std::string_view bytes) {
  auto step = [this](const char* p) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    h_ = (h_ ^ word) * kPrime;
    h_ ^= h_ >> 29;
  };
  size_t i = 0;
  if (pending_size_ > 0) {
    const size_t take = std::min(bytes.size(), 8 - pending_size_);
    std::memcpy(pending_ + pending_size_, bytes.data(), take);
    pending_size_ += take;
    i = take;
    if (pending_size_ < 8) return;
    step(pending_);
    pending_size_ = 0;
  }
  for (; i + 8 <= bytes.size(); i += 8) step(bytes.data() + i);
  pending_size_ = bytes.size() - i;
  std::memcpy(pending_, bytes.data() + i, pending_size_);
}

uint64_t Checksum64Stream::Finish() const {
  uint64_t h = h_;
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
