// The shared rounding rule of transfer times.
#include "network/transfer_time.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace cs::net {

TimePs transfer_time_ps(double bytes, double rate_Bps) {
  CS_ASSERT(bytes >= 0, "negative byte count " + std::to_string(bytes));
  if (bytes == 0 || std::isinf(rate_Bps)) return 0;
  const double seconds = bytes / rate_Bps;
  CS_ASSERT(rate_Bps > 0, std::to_string(bytes) + " bytes at a rate of 0 never finish");
  // A rate that positive but that slow comes from the input (a link of a few bytes per second,
  // a size past any memory), not from the model: say so instead of failing as a bug.
  if (!(seconds < kEndOfTimeSeconds)) {
    throw InputError("key 'bandwidth': " + units::format_size(bytes) + " at " +
                     units::format_bandwidth(rate_Bps) + " would take " +
                     units::format_time(seconds) + ", past the end of simulated time (" +
                     units::format_time(kEndOfTimeSeconds) +
                     "); a link bandwidth, copy rate or size in the input is far off");
  }
  return ps_from_seconds(seconds);
}

}  // namespace cs::net
