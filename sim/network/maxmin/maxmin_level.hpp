// The max-min solver's candidate water levels (a channel's fair share or a flow's cap) and the
// order they pop in, which every solve follows bit for bit.
#pragma once

#include <bit>
#include <cstdint>

namespace cs::net {

struct MaxMinLevel {
  double rate_Bps;
  std::int64_t key;  // channel id in the heap, flow index among the caps
};

// Pop order (rate, key): ties break on the key, so every solve is deterministic. Rates are never
// negative or NaN, and the bits of a non-negative double order as the double does, so the pair
// compares as one 128-bit integer, without the branches of two comparisons (the solver's hottest
// code). The sign bit is cleared so that -0.0 ties with 0.0, as it does for `<`.
struct MaxMinLevelBefore {
  __extension__ using Order = unsigned __int128;  // a GCC/Clang extension, on purpose
  static Order order(const MaxMinLevel& x) {
    const auto bits = std::bit_cast<std::uint64_t>(x.rate_Bps) & ~(std::uint64_t{1} << 63);
    return (static_cast<Order>(bits) << 64) | static_cast<std::uint64_t>(x.key);
  }
  bool operator()(const MaxMinLevel& x, const MaxMinLevel& y) const { return order(x) < order(y); }
};

}  // namespace cs::net
