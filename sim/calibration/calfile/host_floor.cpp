// The floor between fitted rank counts, and the prior where none was fitted.
#include "calibration/calfile/host_floor.hpp"

#include <algorithm>

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

}  // namespace cs::cal
