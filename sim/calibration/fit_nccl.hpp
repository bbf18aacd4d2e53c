// Fits NCCL's cost model to forced-(algorithm, protocol) runs. The mechanism stays the one the
// simulator runs (collectives/tuner.hpp, communicator.hpp): a call takes
//   t = base + steps * hop + S * (busBw / algBw) * (graphChannels / usedChannels) / busBw
// (steps: 2(n-1) all-reduce, n-1 all-gather / reduce-scatter, n broadcast for Ring; 2(n-1) for a
// one-node Tree), so for each (algorithm, protocol) three constants, base, hop and busBw, are
// fitted jointly over every op and training rank count by relative least squares. They land in
// NcclParams: base and hop latency as they are, busBw as NCCL's per-NVLink figure (Ring Simple:
// busBw = nChannels x per-channel bw from the channel search) and the protocol efficiencies
// (Ring LL / LL128, Tree Simple / LL / LL128) relative to it. Host-paced points where the host's
// launch time hides the GPUs' (fit_host_floor.hpp) are left out: the constants are the GPUs'.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibration/fit_host_floor.hpp"
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
  std::string op;           // the collective fitted ("" = every op together)
  coll::NcclParams params;  // priors with the fitted figures in place
  std::vector<NcclConfigFit> configs;
  int channels_ring = 0;  // the calibrated ring graph: channels x per-channel GB/s
  double channel_GBps = 0;
  // Send/recv based ops (alltoall, sendrecv) bypass the tuner: NCCL's p2p path
  // (collectives/p2p_plan.hpp). Their fit sets the one-peer latency (Ring Simple base, hop 0),
  // the extra-peer latency, the p2p per-channel rate and the NVLink efficiency the op sees
  // (0: not fitted).
  double p2p_nvlink_efficiency = 0;
  // The host floor of nccl-tests' timing per rank count (fit_host_floor.hpp), fitted with one
  // collective; the fit above reads only the points it leaves GPU-bound. Empty for the every-op
  // fit and for gated data.
  HostFloors host_floors;
};

// Fits on the training points of `data` (forced runs, and default runs as the (algo, proto) NCCL
// logged) of collective `op` ("" = every op together); the graph supplies the links the channel
// search reads. Configurations without training points keep their priors.
NcclFit fit_nccl(const Measurements& data, const Split& split, const topo::ClusterGraph& graph,
                 const std::string& op = "");

// alltoall / sendrecv from their (default) runs (fit_nccl_p2p.cpp): with c the channels one
// peer's send gets (NCCL's split for the bytes per peer b: S / n alltoall, S sendrecv, capped at
// its share of the p2p channels) and k the sends sharing a GPU's NVLink port (n - 1 alltoall,
// 1 sendrecv),
//   t = latency + [peers > 1] * multi + b * max(1 / (c * perChannel), k / (NVLink x eff)),
// each point in the regime its current estimate puts it, refitted until no point changes regime,
// for each NVLink efficiency from 100 % down to 50 % of the line rate (and the topology's own);
// the one with the least mean |relative error| stands (p2p_nvlink_efficiency, set when some
// point is link-paced). Misaligned Simple all-to-all points are left out of that and, given 4 or
// more, fit the misaligned per-channel rate and GPU cap (p2p_plan.hpp) with those latencies.
// configs[0]: base_us = latency, hop_us = extra-peer latency, bus_GBps = per-channel rate.
NcclFit fit_nccl_p2p(const Measurements& data, const Split& split, const topo::ClusterGraph& graph,
                     const std::string& op);

// Whether NCCL runs `op` through point-to-point sends (no tuner).
bool is_p2p_op(const std::string& op);

// The tuner options a measured run was forced to (all enabled for "default"); nullopt for a
// forced name NCCL has but the tuner does not know.
std::optional<coll::TunerOptions> forced_options(const NcclPoint& point);

// The rank counts, sorted and unique, of the NCCL points.
std::vector<int> nccl_rank_counts(const Measurements& data);

// The ladder gap of the curve a point belongs to (same op, ranks, forced algo / proto).
int nccl_curve_gap(const Measurements& data, const NcclPoint& point);

}  // namespace cs::cal
