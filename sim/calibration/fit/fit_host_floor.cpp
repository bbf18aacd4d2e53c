// The host floors: the flat part of each host-paced curve and its median per collective and rank
// count.
#include "calibration/fit/fit_host_floor.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "calibration/fit/fit_least_squares.hpp"
#include "calibration/fit/fit_nccl.hpp"

namespace cs::cal {

HostFloors fit_host_floors(const Measurements& data, const Split& split, const std::string& op) {
  HostFloors out;
  // Per curve (configuration, rank count): its training times.
  std::map<std::pair<std::string, int>, std::vector<double>> curves;
  for (const NcclPoint& p : data.nccl) {
    if (p.op != op) continue;
    if (p.timing == NcclTiming::gated) return out;
    if (split.held_out(p.n_ranks, p.bytes, nccl_curve_gap(data, p))) continue;
    curves[{p.config(), p.n_ranks}].push_back(p.time_us);
  }
  for (const auto& [key, times] : curves) {
    const double fastest = *std::min_element(times.begin(), times.end());
    std::vector<double> flat;
    for (double t : times) {
      if (t <= kFlatWithin * fastest) flat.push_back(t);
    }
    out.curves.push_back({key.first, key.second, median_abs(flat), static_cast<int>(flat.size())});
  }
  return out;
}

bool device_bound(const NcclPoint& point, const HostFloors& floors) {
  return point.timing == NcclTiming::gated ||
         point.time_us >= kDeviceBoundFactor * floors.at(point.config(), point.n_ranks);
}

}  // namespace cs::cal
