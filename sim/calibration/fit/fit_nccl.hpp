// Fits NCCL's cost model to forced-(algorithm, protocol) runs. The mechanism stays the one the
// simulator runs (collectives/tuner/tuner.hpp, communicator.hpp): a call takes
//   t = base + steps * hop + S * (busBw / algBw) * (graphChannels / usedChannels) / busBw
// (steps: 2(n-1) all-reduce, n-1 all-gather / reduce-scatter, n broadcast for Ring; 2(n-1) for a
// one-node Tree), so for each (algorithm, protocol) three constants, base, hop and busBw, are
// fitted jointly over every op and training rank count by relative least squares. They land in
// NcclParams: base and hop latency as they are, busBw as NCCL's per-NVLink figure (Ring Simple:
// busBw = nChannels x per-channel bw from the channel search) and the protocol efficiencies
// (Ring LL / LL128, Tree Simple / LL / LL128) relative to it. Ring Simple adds a fourth, the
// fill of the last slices (collectives/nccl/ring_passes.hpp ring_fill_us: channels x last slice /
// rate), fitted where four or more points carry it (NcclParams::ring_fill_GBps). Host-paced
// points where the host's launch time hides the GPUs' (fit_host_floor.hpp) are left out: the
// constants are the GPUs'.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibration/calfile/nccl_fit.hpp"
#include "calibration/measurements/measurements.hpp"
#include "calibration/measurements/split.hpp"
#include "collectives/tuner/tuner.hpp"
#include "topology/graph.hpp"

namespace cs::cal {

// Fits on the training points of `data` (forced runs, and default runs as the (algo, proto) NCCL
// logged) of collective `op` ("" = every op together); the graph supplies the links the channel
// search reads. Configurations without training points keep their priors.
NcclFit fit_nccl(const Measurements& data, const Split& split, const topo::ClusterGraph& graph,
                 const std::string& op = "");

// alltoall / sendrecv from their (default) runs (fit_nccl_p2p.cpp): with c the channels one
// peer's send gets (NCCL's split for the bytes per peer b: S / n alltoall, S sendrecv, capped at
// its share of the p2p channels) and k the sends sharing a GPU's NVLink port (n - 1 alltoall,
// 1 sendrecv),
//   t = latency + [peers > 1] * multi + fill + b * max(1 / (c * perChannel), k / (NVLink x eff)),
// perChannel LL's own rate for LL sends, fill = the GPU's last Simple chunks over the fill rate
// (collectives/nccl/p2p_plan.hpp p2p_fill_us; each of the two from four points or more, else the
// prior's), each point in the regime its current estimate puts it, refitted until no point
// changes regime (first without the fill, then with it),
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
