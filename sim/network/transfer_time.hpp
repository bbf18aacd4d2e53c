// How long B bytes take at a rate, as a whole number of picoseconds: the one rounding rule that
// both network fidelities share, so they agree to the picosecond where they must.
#pragma once

#include "core/units.hpp"

namespace cs::net {

// bytes / rate rounded to the nearest picosecond (as ps_from_seconds does). One picosecond
// resolves a byte at 1 TB/s, so the rounding is below anything a link can express, and exact
// hand-derived times (1 GB at 100 GB/s = 10 ms) come out exact. 0 for no bytes or an infinite
// rate. A rate of zero is a bug; a time past the end of simulated time is an InputError (the
// input holds an absurdly slow link or rate).
TimePs transfer_time_ps(double bytes, double rate_Bps);

}  // namespace cs::net
