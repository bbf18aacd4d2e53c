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
  // A transfer past the end of simulated time means a zero or absurd rate upstream.
  CS_ASSERT(rate_Bps > 0 && seconds < kEndOfTimeSeconds,
            std::to_string(bytes) + " bytes at " + std::to_string(rate_Bps) + " B/s never finish");
  return ps_from_seconds(seconds);
}

}  // namespace cs::net
