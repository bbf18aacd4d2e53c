// The host floors: the flat part of each host-paced curve, its median per collective and rank
// count, and the floor between fitted rank counts.
#include "calibration/fit_host_floor.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "calibration/fit_nccl.hpp"
#include "calibration/validate.hpp"

namespace cs::cal {

std::optional<double> HostFloors::fitted(const std::string& config, int n_ranks) const {
  // One rank launches NCCL's copy, not a collective: its floor and the rank-count line of the
  // others never stand in for each other.
  std::vector<const HostFloor*> own;
  for (const HostFloor& f : curves) {
    if (f.config == config && (f.n_ranks == 1) == (n_ranks == 1)) own.push_back(&f);
  }
  if (own.empty()) {
    if (config != "default") return fitted("default", n_ranks);
    return std::nullopt;
  }
  if (own.size() == 1) return own.front()->floor_us;
  // The two fitted counts nearest n: the pair around it, or the last two on its side.
  std::size_t hi = 1;
  while (hi + 1 < own.size() && own[hi]->n_ranks < n_ranks) ++hi;
  const HostFloor& a = *own[hi - 1];
  const HostFloor& b = *own[hi];
  const double slope = (b.floor_us - a.floor_us) / (b.n_ranks - a.n_ranks);
  return std::max(0.0, a.floor_us + slope * (n_ranks - a.n_ranks));
}

double HostFloors::at(const std::string& config, int n_ranks) const {
  return fitted(config, n_ranks).value_or(0.0);
}

double prior_host_floor_us(int n_ranks) {
  return n_ranks == 1 ? kPriorHostFloorOneRankUs : kPriorHostFloorPerRankUs * n_ranks;
}

double HostFloors::host_paced_us(const std::string& config, int n_ranks, double device_us) const {
  return std::max(fitted(config, n_ranks).value_or(prior_host_floor_us(n_ranks)), device_us);
}

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
