// Hashing of page text: the process's seed. See factlens/hash.h.
#include "factlens/hash.h"

#include <unistd.h>  // getentropy: glibc, and Emscripten's crypto.getRandomValues

namespace factlens {

uint64_t TextHashSeed() {
  static const uint64_t seed = [] {
    uint64_t s = 0;
    // Without a random source (never on the supported platforms) the hash still
    // works, unkeyed: tables stay correct, only aimable.
    if (getentropy(&s, sizeof s) != 0) s = 0x9e3779b97f4a7c15ull;
    return s;
  }();
  return seed;
}

}  // namespace factlens
