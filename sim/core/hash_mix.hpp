// SplitMix64's finalizer: a cheap, well-mixed 64-bit hash, identical on every platform. Routes use
// it to spread equal-cost choices (which spine, which core) by the (source, destination) pair.
#pragma once

#include <cstdint>

namespace cs {

inline std::uint64_t hash_mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace cs
