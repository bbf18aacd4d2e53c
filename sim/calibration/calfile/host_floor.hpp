// The host floor of nccl-tests' timing. One host thread launches every rank's kernels for each of
// a run of back-to-back calls, and a GPU starts a call as soon as it is launched and the call
// before it is done. So a call costs max(the host's time to launch it on all n ranks, the GPUs'
// time for it): small calls all take the host's time, whatever their size (the flat part of every
// host-paced curve: 13-20 us on 2 H200s against 6-8 us when the same calls are gated,
// calibrate/data/h200x4-run3 and -run4), and large ones the GPUs'. The GPUs' side is what the
// simulator models; the floor is fitted per collective and rank count from the flat part
// (calibration/fit/fit_host_floor.hpp), kept in the calibration file, and added back here when a
// prediction is compared with a host-paced measurement.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cs::cal {

struct HostFloor {
  std::string config;  // NcclPoint::config(): each forced configuration ran in its own process
  int n_ranks = 0;
  double floor_us = 0;  // median of the curve's points in its flat part
  int points = 0;       // training points in the flat part
};

// One collective's floors per configuration and trained rank count, in (config, ranks) order.
struct HostFloors {
  std::vector<HostFloor> curves;

  bool empty() const { return curves.empty(); }
  // The floor of `config` (or of the default runs, when `config` has none) at `n_ranks`: the
  // fitted one, else linear in the rank count between (or beyond) the two nearest fitted counts,
  // never below 0 (one thread launches each rank in turn, so the host's time grows with the
  // ranks); the one fitted count's floor when there is one. One rank (NCCL's copy) and two or
  // more are apart: neither side's floors set the other's. nullopt where that side has none.
  std::optional<double> fitted(const std::string& config, int n_ranks) const;
  // fitted(), or 0 where none was: what the fitter tests its points against (device_bound() in
  // fit/fit_host_floor.hpp).
  double at(const std::string& config, int n_ranks) const;
  // What a host-paced record of a call measures when the GPUs take `device_us`: the longer of
  // that and the floor: fitted(), else the prior floor (prior_host_floor_us()).
  double host_paced_us(const std::string& config, int n_ranks, double device_us) const;
};

// The host floor without a calibration: one host thread's time to launch a call on every rank,
// n_ranks x 6.9 us from two ranks on. 6.9 us is the median floor per rank of the default runs
// fitted on our own host-paced data (h200x2, h200x2-run2, h200x4 and h200x4-run2..5: six
// collectives at 2-4 ranks, 102 floors, quartiles 6.4 and 8.9 us per rank, extremes 5.8 and 12.5;
// the medians per rank count, 14.7, 20.2 and 27.9 us at 2, 3 and 4 ranks, are within 7 % of 2, 3
// and 4 x 6.9; a later 2 x H200 machine, h200x2-run3, measured 13.6-18.9 us, median 14.4). One rank
// launches NCCL's copy instead: 4.8 us, the median of the four collectives' floors on four hosts,
// which fall in two groups: the H200 hosts (h200x1-onerank, h200x1-run2) 3.6-4.2 us, the H100
// hosts (h100x1-onerank, h100x1-run3) 5.5-6.4 us. Hosts differ: a faster launcher has a lower
// floor, which only a calibration of that host knows.
inline constexpr double kPriorHostFloorPerRankUs = 6.9;
inline constexpr double kPriorHostFloorOneRankUs = 4.8;
double prior_host_floor_us(int n_ranks);

}  // namespace cs::cal
