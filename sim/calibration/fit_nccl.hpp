// Fits NCCL's cost model to forced-(algorithm, protocol) runs. The mechanism stays the one the
// simulator runs (collectives/tuner.hpp, communicator.hpp): a call takes
//   t = base + steps * hop + S * (busBw / algBw) * (graphChannels / usedChannels) / busBw
// (steps: 2(n-1) all-reduce, n-1 all-gather / reduce-scatter, n broadcast for Ring; 2(n-1) for a
// one-node Tree), so for each (algorithm, protocol) three constants, base, hop and busBw, are
// fitted jointly over every op and training rank count by relative least squares. They land in
// NcclParams: base and hop latency as they are, busBw as NCCL's per-NVLink figure (Ring Simple:
// busBw = nChannels x per-channel bw from the channel search) and the protocol efficiencies
// (Ring LL / LL128, Tree Simple / LL / LL128) relative to it.
#pragma once

#include <string>
#include <vector>

#include <optional>
#include "calibration/fit_split.hpp"
#include "calibration/measurements.hpp"

#include "collectives/tuner.hpp"
#include "topology/graph.hpp"

namespace cs::cal {

// One (algorithm, protocol) of the joint fit.
struct NcclConfigFit {
  coll::Algo algo = coll::Algo::ring;
  coll::Proto proto = coll::Proto::simple;
  double base_us = 0;
  double hop_us = 0;
  double bus_GBps = 0;
  int points = 0;  // training points
  double rms_rel_error = 0;
  double max_rel_error = 0;
};

struct NcclFit {
  coll::NcclParams params;  // priors with the fitted figures in place
  std::vector<NcclConfigFit> configs;
  int channels_ring = 0;  // the calibrated ring graph: channels x per-channel GB/s
  double channel_GBps = 0;
};

// Fits on the training points of `data` (forced runs only); the graph supplies the links the
// channel search reads. Configurations without training points keep their priors.
NcclFit fit_nccl(const Measurements& data, const Split& split, const topo::ClusterGraph& graph);

// The tuner options a measured run was forced to (all enabled for "default"); nullopt for a
// forced name NCCL has but the tuner does not know.
std::optional<coll::TunerOptions> forced_options(const NcclPoint& point);

// The rank counts, sorted and unique, of the NCCL points.
std::vector<int> nccl_rank_counts(const Measurements& data);

// The ladder gap of the curve a point belongs to (same op, ranks, forced algo / proto).
int nccl_curve_gap(const Measurements& data, const NcclPoint& point);

}  // namespace cs::cal
