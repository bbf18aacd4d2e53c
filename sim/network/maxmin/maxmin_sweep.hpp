// The sweep's shared rules (maxmin_sweep.cpp): what its queued levels stand for, when a flow's new
// rate counts as its old one, when an unchanged flow counts as frozen below a level, and a flow's
// load on a channel.
#pragma once

#include <cmath>
#include <cstdint>

namespace cs::net::sweep {

// What a queued level stands for, in the high half of its key: at one level, shares pop before
// caps, and those before old levels, so that a channel that saturates where it did before freezes
// its flows unchanged instead of raising them first.
inline constexpr std::int64_t kShare = 0;
inline constexpr std::int64_t kCap = 1;
inline constexpr std::int64_t kOldLevel = 2;
inline std::int64_t event_key(std::int64_t kind, std::int64_t id) {
  return (kind << 32) | id;
}

// A flow whose new rate is within this fraction of its old one keeps the old one bit for bit: the
// two differ only by the rounding of sums taken in another order, and a change would spread to
// every channel it crosses.
inline constexpr double kSameWithin = 1e-11;

// Whether an unchanged flow at `old_Bps` froze before the sweep reached `level_Bps`. Flows frozen
// at one channel may differ by twice kSameWithin (each kept its rate within it), so a flow counts
// as frozen only clearly below the level: one within the band is still open there, and the
// channel that froze it last time, saturating or not at about its rate, decides what it does.
inline bool froze_below(double old_Bps, double level_Bps) {
  return old_Bps < level_Bps * (1 - 4 * kSameWithin);
}

// multiplicity x rate, or 0 where that is not finite (a flow at infinity adds to no finite sum).
inline double finite_load(std::int32_t multiplicity, double rate_Bps) {
  const double load = multiplicity * rate_Bps;
  return std::isfinite(load) ? load : 0.0;
}

}  // namespace cs::net::sweep
