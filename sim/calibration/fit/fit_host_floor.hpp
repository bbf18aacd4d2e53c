// Fits the host floor of nccl-tests' timing per collective and rank count, from the flat part of
// each host-paced curve; what the floor is and how a prediction uses it: calfile/host_floor.hpp.
#pragma once

#include <string>
#include <vector>

#include "calibration/calfile/host_floor.hpp"
#include "calibration/measurements/measurements.hpp"
#include "calibration/measurements/split.hpp"

namespace cs::cal {

// The points of a curve whose time is within this factor of its fastest point are its flat part.
// The floor is one launch sequence's time, and a sequence varies by a few percent from call to
// call (the launch microbenchmark's medians vary by ~10 % between the h200x4 runs); a point
// 10 % above the fastest is already paying for GPU work.
inline constexpr double kFlatWithin = 1.10;
// A point is GPU-bound, and fits the simulator's model of the GPUs' time, when it takes at least
// this multiple of its floor: below that, the floor hides some of the GPUs' time, or the two
// overlap unevenly (a knee, which no latency-plus-bandwidth line follows).
inline constexpr double kDeviceBoundFactor = 1.5;

// The floors of collective `op` over its host-paced training points (every forced configuration:
// the host's work does not depend on the algorithm). Empty when the data holds a gated record of
// `op`: the small sizes are then timed without the host (timing_select.hpp).
HostFloors fit_host_floors(const Measurements& data, const Split& split, const std::string& op);

// Whether a training point is GPU-bound under `floors` (always, where there are none).
bool device_bound(const NcclPoint& point, const HostFloors& floors);

}  // namespace cs::cal
