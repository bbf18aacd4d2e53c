// Every constant of NCCL's cost model in one plain struct, so that the calibration fitter can fill
// the same struct from measurements. The defaults are NCCL's own priors (see nccl_params.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collectives/nccl/nccl_types.hpp"

namespace cs::coll {

// NCCL indexes a few tables by GPU generation (compute capability 7.x / 8.x / 9.x / 10.x).
enum class GpuArch { volta, ampere, hopper, blackwell };

// Node-count column of NCCL's tables: N1 = one node, N2 = two nodes, N4 = three or more.
inline constexpr int kNodeClassCount = 3;
inline int node_class(int n_nodes) {
  return n_nodes <= 1 ? 0 : n_nodes == 2 ? 1 : 2;
}

struct NcclParams {
  std::string
      source;  // where the figures came from: "nccl-2.28 priors (hopper)", a calibration file

  // Latency, microseconds: time = base + per-hop terms (see collectives/tuner/tuner.hpp for the
  // formulas).
  double base_latency_us[kAlgoCount][kProtoCount] = {};
  double hop_latency_us[kLinkClassCount][kAlgoCount][kProtoCount] = {};
  // Multi-node ring Simple all-reduce latency multiplier once bytes / (nChannels * nRanks) reaches
  // the threshold (the "plateau effect of ring").
  double ring_simple_multinode_latency_factor = 1.0;
  double ring_simple_plateau_bytes = 64;
  // PAT latency = base + log2(nNodes) * interLat / divisor + nRanks * per_rank.
  double pat_log_latency_divisor = 1.0;
  double pat_per_rank_latency_us = 0.0;

  // Bandwidth refinements applied to busBw = nChannels * perChannelBw, GB/s.
  double ring_ll_efficiency = 0.5;
  double ll128_efficiency = 0.92;
  double tree_efficiency = 0.92;
  double tree_ll_efficiency = 1.0;
  double tree_ll128_efficiency_one_node = 1.0;
  double tree_ll128_efficiency_multi_node = 1.0;
  double pat_efficiency = 1.0;
  double nvls_efficiency = 1.0;
  // The time side of NVLS on one server (never NCCL's choice): each GPU's NVLink carries the
  // buffer and its 1/n shard each way (the switch reads every shard, multicasts every result),
  // at this fraction of NCCL's per-GPU NVLink figure; 0: no such bound.
  double nvls_multimem_efficiency = 0;
  // LL's cap: one server by GPU generation, several by CPU vendor (NCCL llMaxBws: Intel and Arm
  // the first row, AMD the second).
  double ll_max_bw_GBps[kNodeClassCount] = {};
  double ll_max_bw_amd_GBps[kNodeClassCount] = {};
  // A multi-server ring's per-step network post overhead (NCCL getNetOverhead: Intel and Arm 1,
  // AMD 2 us; x 3 for Simple): each of its steps costs at least this.
  double net_overhead_us = 1.0;
  double net_overhead_amd_us = 2.0;
  double ring_ll128_max_per_channel_GBps = 0;
  double tree_max_per_channel_GBps[kNodeClassCount] = {};
  double tree_ll128_max_per_channel_GBps[kNodeClassCount] = {};
  // NVLSTree's per-channel cap by node class (NCCL perChMaxNVLSTreeBws), GB/s.
  double nvls_tree_max_per_channel_GBps[kNodeClassCount] = {};

  // What NCCL's topology search assumes per link, GB/s.
  double nvlink_per_link_GBps = 0;
  double pcie_gen3_GBps = 0, pcie_gen4_GBps = 0, pcie_gen5_GBps = 0;
  // Per-channel speeds the graph search tries, highest first, GB/s.
  std::vector<double> intra_speeds_GBps;
  std::vector<double> inter_speeds_GBps;
  int search_max_channels = 32;             // the search looks for at most this many rings/trees
  double duplicate_channels_min_GBps = 25;  // at or above this per-channel speed, channels double
  double search_speed_ratio_floor =
      0.49;  // stop lowering the speed below this fraction of the best
  int nvls_channels = 16;
  // At init NCCL runs every ring / tree channel of the graph twice (the tuner still reads the
  // graph's figures); at most max_channels in all.
  int runtime_channel_multiplier = 2;
  int max_channels = 64;

  // Point-to-point (send/recv, all-to-all; collectives/nccl/p2p_plan.hpp): NCCL's channel split and
  // the per-channel copy rate. Latency: Ring Simple base + one hop of the path's class, plus
  // p2p_extra_peer_latency_us for each peer a rank's sends and receives reach beyond the first.
  int p2p_max_channels = 64;
  int p2p_net_channels_per_peer = 2;
  double p2p_nvl_chunk_bytes = 512 * 1024;
  double p2p_net_chunk_bytes = 128 * 1024;
  double p2p_ll_threshold_bytes = 16384;
  // One send's latency over NVLink, us (0: NCCL's Ring Simple base + one hop of the path's class,
  // the rule for every other path).
  double p2p_nvlink_latency_us = 0;
  // One channel's p2p copy rate, GB/s; 0: the ring graph's per-channel speed (the prior).
  double p2p_per_channel_GBps = 0;
  // One channel's rate for an LL send's data, GB/s; 0: p2p_ll_data_fraction of the Simple rate
  // (LL's 8 data bytes per 16-byte line).
  double p2p_ll_per_channel_GBps = 0;
  double p2p_extra_peer_latency_us = 0;
  // The GPU-wide rate at which the busy channels make the second copy of their Simple sends' last
  // chunks over NVLink, GB/s (p2p_plan.hpp p2p_fill_us); 0: no fill charged.
  double p2p_fill_GBps = 0;
  // Simple sends whose buffers are not 16-byte aligned (collectives/nccl/p2p_plan.hpp): one
  // channel's rate, GB/s (0: the aligned rate x p2p_pack_width_ratio), and what one GPU's
  // misaligned sends reach together, GB/s (0: no such cap).
  double p2p_unaligned_per_channel_GBps = 0;
  double p2p_unaligned_gpu_GBps = 0;

  // Ring all-gather (row 0) and reduce-scatter (row 1) with per-rank chunks that are not 16-byte
  // aligned, per protocol: the factor on the bandwidth time when every ring step copies between
  // buffers of different alignment (collectives/nccl/ring_alignment.hpp); 1 = no penalty (Hopper's
  // Simple all-gather: its misaligned copies add time instead, below).
  double ring_misaligned_slowdown[2][kProtoCount] = {{1.0, 1.0, 1.0}, {1.0, 1.0, 1.0}};
  // A Simple ring all-gather's misaligned chunks instead add time (ring_alignment.hpp
  // ring_misaligned_us): per misaligned chunk, a channel's first `head_bytes` of it cost
  // `head_ps_per_byte` and the rest `tail_ps_per_byte` (ps per byte; 0: nothing added).
  double ring_misaligned_head_bytes = 0;
  double ring_misaligned_head_ps_per_byte = 0;
  double ring_misaligned_tail_ps_per_byte = 0;

  // Ring all-gather, reduce-scatter and all-reduce: each loop of a channel ends with a pass that
  // only receives (collectives/nccl/ring_passes.hpp). Its cost in link steps, per protocol; 0 =
  // free.
  double ring_recv_pass_steps[kProtoCount] = {0.0, 0.0, 0.0};
  // The GPU-wide rate of the final copy of a Simple ring's or chain's last slices on one server,
  // GB/s (collectives/nccl/ring_passes.hpp ring_fill_us); 0: no fill charged.
  double ring_fill_GBps = 0;
  // LL128 across servers: the fixed time one chunk on a network connection costs the GPU that
  // serves it, us (collectives/tuner/transport.hpp: Tree's chunks after the first, per connection
  // of the busiest GPU of a server, tree_net_chunk_us; a ring's step floor, ll128_net_step_floor);
  // 0: none.
  double ll128_net_chunk_us = 0;

  // Channels shrink while bytes < nChannels * nThreads * threshold (threshold x nRanks for ring
  // LL).
  int max_threads[kProtoCount] = {};
  int thread_threshold[kProtoCount] = {};
};

// NCCL's priors for a GPU generation: NCCL's own constants (github.com/NVIDIA/nccl 2.30
// src/graph/tuning.cc, topo.h, search.cc; the node runs 2.28), tabulated in
// sim/collectives/README.md, "NCCL's figures", and elsewhere NCCL's source (said per field).
NcclParams nccl_priors(GpuArch arch);

// CollNet's rows of the latency tables, NCCL 2.28's figures (the same for every generation):
// what nccl_priors sets, and what a calibration file written before CollNet was modelled takes.
void set_collnet_latencies(NcclParams& p);

// The generation of a GPU model name ("H100 SXM" -> hopper); hopper when the name is unknown.
GpuArch arch_from_gpu_name(std::string_view gpu_name);
const char* to_string(GpuArch arch);

// Whether two sets of constants give NCCL's graph search the same figures (per-link speeds, the
// speeds it tries, its channel limits), so that both see the same channels.
bool same_search_figures(const NcclParams& a, const NcclParams& b);

// NCCL's bandwidth figure for one PCIe link of a generation, GB/s (0 for an unknown generation).
double nccl_pcie_GBps(const NcclParams& params, int generation);

// NCCL 2.28 tuning.cc treeCorrectionFactor: Tree all-reduce reaches less than its model's
// bandwidth at medium sizes; NCCL scales it by this factor, indexed by floor(log2(bytes / 64))
// (64 B .. 256 MiB; 1 outside).
double nccl_tree_correction(Proto p, double bytes);

}  // namespace cs::coll
