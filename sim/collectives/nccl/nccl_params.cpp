// NCCL's priors. Unless a line says otherwise, each figure is NCCL's own, from its source
// (github.com/NVIDIA/nccl 2.28 / 2.30: src/graph/tuning.cc, topo.h, topo.cc, search.cc); "the
// reference" below is their table in sim/collectives/README.md, "NCCL's figures".
#include "collectives/nccl/nccl_params.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace cs::coll {
namespace {

constexpr int T = index_of(Algo::tree);
constexpr int R = index_of(Algo::ring);
constexpr int V = index_of(Algo::nvls);
constexpr int P = index_of(Algo::pat);
constexpr int NT = index_of(Algo::nvls_tree);

void set3(double (&row)[kProtoCount], double ll, double ll128, double simple) {
  row[0] = ll;
  row[1] = ll128;
  row[2] = simple;
}

}  // namespace

void set_collnet_latencies(NcclParams& p) {
  // NCCL 2.28 tuning.cc: no base latency; hwLatencies CollNetDirect / CollNetChain (Simple only)
  // NVLink 3.7 / 2.8, PCIe 3.7 / 2.8, network 31 / 30 us.
  constexpr int D = index_of(Algo::collnet_direct);
  constexpr int C = index_of(Algo::collnet_chain);
  set3(p.base_latency_us[D], 0, 0, 0);
  set3(p.base_latency_us[C], 0, 0, 0);
  constexpr double kHop[kLinkClassCount][2] = {{3.7, 2.8}, {3.7, 2.8}, {31, 30}};
  for (int c = 0; c < kLinkClassCount; ++c) {
    set3(p.hop_latency_us[c][D], 0, 0, kHop[c][0]);
    set3(p.hop_latency_us[c][C], 0, 0, kHop[c][1]);
  }
}

NcclParams nccl_priors(GpuArch arch) {
  NcclParams p;
  p.source = std::string("nccl-2.28 priors (") + to_string(arch) + ")";

  // Base latency (us), reference table "base latency"; NVLS has none.
  set3(p.base_latency_us[T], 6.8, 14.0, 8.4);
  set3(p.base_latency_us[R], 6.6, 14.0, 8.4);
  set3(p.base_latency_us[V], 0, 0, 0);
  set3(p.base_latency_us[P], 8.0, 8.0, 8.0);
  set3(p.base_latency_us[NT], 0, 0, 0);  // NCCL 2.28 tuning.cc: NVLS Tree has none either

  // Per-hop latency (us), reference table "per-hop latency". NVLS runs Simple only; its PCIe row
  // is absent in NCCL (no NVLS without NVSwitch). PAT has no hop entries: its formula uses Tree's
  // network figure.
  auto& nvl = p.hop_latency_us[index_of(LinkClass::nvlink)];
  auto& pci = p.hop_latency_us[index_of(LinkClass::pcie)];
  auto& net = p.hop_latency_us[index_of(LinkClass::network)];
  set3(nvl[T], 0.6, 1.25, 4.0);
  set3(nvl[R], 0.6, 1.9, 3.4);
  set3(nvl[V], 0, 0, 25);
  set3(pci[T], 1.0, 1.9, 4.0);
  set3(pci[R], 1.0, 2.5, 5.7);
  set3(net[T], 5.0, 8.5, 14);
  set3(net[R], 2.7, 4.0, 14.0);
  set3(net[V], 0, 0, 18);
  // NVLSTree (Simple only), NCCL 2.28 tuning.cc hwLatencies: NVLink 25, network 20.9 us.
  set3(nvl[NT], 0, 0, 25);
  set3(net[NT], 0, 0, 20.9);
  set_collnet_latencies(p);

  p.ring_simple_multinode_latency_factor =
      arch == GpuArch::volta ? 1.9 : 1.4;  // tuning.cc: 1.9 before sm80
  p.ring_simple_plateau_bytes = 64;
  // PAT latency: NCCL 2.30 tuning.cc "8 + log2i(nNodes) * (interLat/3.5) + nRanks * 2.8".
  p.pat_log_latency_divisor = 3.5;
  p.pat_per_rank_latency_us = 2.8;

  p.ring_ll_efficiency = 0.5;                    // reference: Ring LL busBw * 0.5
  p.ll128_efficiency = 0.92;                     // reference: Ring LL128 busBw * 0.92
  p.tree_efficiency = 0.92;                      // reference: Tree Simple all-reduce busBw * 0.92
  p.tree_ll_efficiency = 1.0 / 3.8;              // reference: Tree LL busBw / 3.8
  p.tree_ll128_efficiency_one_node = 7.0 / 9.0;  // NCCL tuning.cc (Tree LL128, nNodes == 1)
  p.tree_ll128_efficiency_multi_node = 120.0 / 128.0;  // NCCL tuning.cc (Tree LL128, nNodes > 1)
  p.pat_efficiency = 0.75;                             // NCCL tuning.cc: busBw *= .75 for PAT
  p.nvls_efficiency = 0.85;                            // reference: NVLS efficiency on Hopper
  // A published measurement (NCCL's maintainer, NVIDIA/nccl-tests issue 212, 2024): NVLS
  // all-reduce on 8 H100 peaks at busbw ~480 GB/s (algbw ~275), where NCCL's estimate says 591.
  // Each GPU's NVLink moves S (1 + 1/8) each way: 275 x 9/8 / 370.8 (18 x 20.6) = 0.83. One
  // figure, Hopper only; NVLS could not be measured here (the lent machines forbid multicast).
  p.nvls_multimem_efficiency = arch == GpuArch::hopper ? 0.83 : 0.0;

  // llMaxBw: reference gives the single-node figure by arch; across servers NCCL 2.28 tuning.cc
  // indexes llMaxBws by CPU vendor instead (row 0 for Intel and Arm: 39.0 / 20.4 on 2 / more
  // servers; row 1 for AMD: 22.5 / 19.0), set after the switch.
  // Per-channel caps: reference gives Ring LL128 36.7 on Hopper; the others are tuning.cc
  // perChMaxRingLL128Bws / perChMaxTreeBws / perChMaxTreeLL128Bws / perChMaxNVLSTreeBws (2.28's
  // table: Blackwell's N4 figure is 43.8 there, 80.0 in 2.30).
  auto set_nodes = [](double(&row)[kNodeClassCount], double n1, double n2, double n4) {
    row[0] = n1;
    row[1] = n2;
    row[2] = n4;
  };
  switch (arch) {
    case GpuArch::volta:
      set_nodes(p.ll_max_bw_GBps, 39.0, 39.0, 20.4);
      p.ring_ll128_max_per_channel_GBps = 20.0;
      set_nodes(p.tree_max_per_channel_GBps, 26.5, 18.5, 10.0);
      set_nodes(p.tree_ll128_max_per_channel_GBps, 20.0, 20.0, 20.0);
      set_nodes(p.nvls_tree_max_per_channel_GBps, 26.5, 18.5, 10.0);
      p.nvlink_per_link_GBps = 20.0;  // NCCL topo.h SM70 NVLink figure (reference lists A100's 20)
      break;
    case GpuArch::ampere:
      set_nodes(p.ll_max_bw_GBps, 87.7, 22.5, 19.0);
      p.ring_ll128_max_per_channel_GBps = 20.0;
      set_nodes(p.tree_max_per_channel_GBps, 24.0, 23.6, 17.8);
      set_nodes(p.tree_ll128_max_per_channel_GBps, 20.0, 20.0, 20.0);
      set_nodes(p.nvls_tree_max_per_channel_GBps, 24.0, 23.6, 17.8);
      p.nvlink_per_link_GBps = 20.0;  // reference: A100
      break;
    case GpuArch::hopper:
      set_nodes(p.ll_max_bw_GBps, 141.0, 45.0, 35.0);
      p.ring_ll128_max_per_channel_GBps = 36.7;
      set_nodes(p.tree_max_per_channel_GBps, 38.7, 41.4, 36.0);
      set_nodes(p.tree_ll128_max_per_channel_GBps, 36.7, 36.7, 29.0);
      set_nodes(p.nvls_tree_max_per_channel_GBps, 0.0, 57.7, 45.5);
      p.nvlink_per_link_GBps = 20.6;  // reference: H100/H200
      break;
    case GpuArch::blackwell:
      set_nodes(p.ll_max_bw_GBps, 282.0, 90.0, 70.0);
      p.ring_ll128_max_per_channel_GBps = 2 * 36.7;
      set_nodes(p.tree_max_per_channel_GBps, 2 * 38.7, 2 * 41.4, 2 * 36.0);
      set_nodes(p.tree_ll128_max_per_channel_GBps, 2 * 36.7, 2 * 36.7, 2 * 29.0);
      set_nodes(p.nvls_tree_max_per_channel_GBps, 0.0, 96.0, 43.8);
      p.nvlink_per_link_GBps = 40.1;  // reference: Blackwell
      break;
  }

  p.ll_max_bw_GBps[1] = 39.0;
  p.ll_max_bw_GBps[2] = 20.4;
  set_nodes(p.ll_max_bw_amd_GBps, p.ll_max_bw_GBps[0], 22.5, 19.0);
  p.net_overhead_us = 1.0;      // NCCL 2.28 tuning.cc getNetOverhead: x86 Intel (and others) 1 us
  p.net_overhead_amd_us = 2.0;  // ... x86 AMD 2 us

  p.pcie_gen3_GBps = 12;  // reference: PCIe Gen3 x16
  p.pcie_gen4_GBps = 24;  // reference: Gen4
  p.pcie_gen5_GBps = 48;  // reference: Gen5
  // Reference: speeds tried on Hopper; the tail below 12 / 24 is NCCL search.cc sm90SpeedArray*.
  p.intra_speeds_GBps = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3, 2.4, 1.2, 0.24, 0.12};
  p.inter_speeds_GBps = {48, 45, 42, 40, 30, 24, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
  p.search_max_channels = 32;  // NCCL: graph->maxChannels = MAXCHANNELS / 2 with MAXCHANNELS 64
  p.duplicate_channels_min_GBps = 25;  // NCCL search.cc: "if (graph->bwIntra >= 25.0)" duplicate
  p.search_speed_ratio_floor = 0.49;   // NCCL search.cc: next speed / best speed > .49
  p.nvls_channels = 16;                // NCCL NCCL_NVLS_NCHANNELS default on Hopper
  // NCCL ncclTopoPostset duplicates the channels (MAXCHANNELS 64); seen on the H200 x4 node
  // (calibrate/data/h200x4, NCCL 2.28): a graph of 12 channels runs all-reduce on 24.
  p.runtime_channel_multiplier = 2;
  p.max_channels = 64;

  // Point-to-point: NCCL's environment defaults (param.h / init.cc, recalled, not read from the
  // 2.28 source): NCCL_MAX_P2P_NCHANNELS = MAXCHANNELS (64), NCCL_NCHANNELS_PER_NET_PEER 2,
  // NCCL_P2P_NVL_CHUNKSIZE 512 KiB, NCCL_P2P_NET_CHUNKSIZE 128 KiB, NCCL_P2P_LL_THRESHOLD 16 KiB.
  // The split that uses them (p2p_plan.cpp) is enqueue.cc's addP2pToPlan; with these values it
  // puts the 4 x H200 sendrecv bandwidth jump (3-4 ranks: 128 -> 256 MiB, 2 ranks: 256 -> 512
  // MiB; calibrate/data/h200x4) where it is measured. NCCL's tuner has no p2p model: the
  // per-channel rate falls back to the channel search's speed and the extra-peer latency to 0
  // until calibrated (fit_nccl_p2p.cpp), except where measured below.
  p.p2p_max_channels = 64;
  p.p2p_net_channels_per_peer = 2;
  p.p2p_nvl_chunk_bytes = 512 * 1024;
  p.p2p_net_chunk_bytes = 128 * 1024;
  p.p2p_ll_threshold_bytes = 16384;
  p.p2p_per_channel_GBps = 0;
  p.p2p_extra_peer_latency_us = 0;
  p.p2p_nvlink_latency_us = 0;
  // Hopper over NVLink: our own calibration, `clustersim fit calibrate/data/h200x4-run3 --timing
  // gated -t topologies/h200-4gpu.yaml` and the same for run4 (GPU-side times, 4 x H200, NCCL
  // 2.28), mean of send/recv and all-to-all over the two runs: the one-peer latency (6.58-6.81
  // us, where NCCL's rule gives 8.4 + 3.4 = 11.8 us); the latency per further peer (0.25-0.42
  // us); a Simple send's per-channel copy rate (18.3-19.8 GB/s, where the graph's 30 GB/s per
  // channel would stand in; the copy is a channel's thread block, so the rate serves sends over
  // the network too, where the NICs are the slower part); an LL send's (5.0-5.4 GB/s, where half
  // the Simple rate would give 9-10); the GPU-wide rate of the last chunks' second copy
  // (p2p_fill_us: 395-514 GB/s, about the H200's 450 GB/s of NVLink each way).
  // tests/calibration/test_ring_priors.cpp refits them.
  if (arch == GpuArch::hopper) {
    p.p2p_nvlink_latency_us = 6.74;
    p.p2p_extra_peer_latency_us = 0.37;
    p.p2p_ll_per_channel_GBps = 5.18;
    p.p2p_fill_GBps = 457;
    p.p2p_per_channel_GBps = 19.04;
  }
  // Misaligned all-to-all chunks (p2p_plan.hpp): our own calibration, `clustersim fit
  // calibrate/data/h200x4-a2a-offsets/off1 -t topologies/h200-4gpu.yaml --holdout-sizes none`
  // (2 and 4 x H200, chunks of 4 mod 16 bytes, every size; 3 ranks held out). The folder with
  // chunks of 8 mod 16 (off2) fits 7.4 and 165. Hopper only; other generations keep the
  // pack-width rule and no cap.
  if (arch == GpuArch::hopper) {
    p.p2p_unaligned_per_channel_GBps = 7.8;
    p.p2p_unaligned_gpu_GBps = 159;
  }
  // Misaligned ring all-gather / reduce-scatter chunks (ring_alignment.hpp): our own calibration,
  // calibrate/data/h200x2-align and -align-run2 (2 x H200, NCCL 2.28, GPU-side times, forced Ring
  // LL / LL128 / Simple): the ratio of the per-byte times that `fit_alpha_beta` (the fitter's
  // robust relative least squares) finds over 32 MiB - 1 GiB with chunks of 4 mod 16 bytes (off1)
  // and aligned (off0), the mean of the two runs (tests/calibration/test_ring_priors.cpp). Chunks
  // of 8 mod 16 (off2, run 2) slow down as much; the aligned controls (off4, all-reduce,
  // broadcast) stay within 2-7 %. Two ranks have one misaligned chunk and one ring step, so these
  // are the factors of a ring whose every chunk copy is misaligned. Hopper only; other
  // generations keep 1.
  if (arch == GpuArch::hopper) {
    const int ll = index_of(Proto::ll), ll128 = index_of(Proto::ll128);
    const int simple = index_of(Proto::simple);
    p.ring_misaligned_slowdown[0][ll] = 1.05;  // all-gather
    p.ring_misaligned_slowdown[0][ll128] = 1.46;
    p.ring_misaligned_slowdown[0][simple] = 1.0;  // adds time instead (below)
    p.ring_misaligned_slowdown[1][ll] = 1.02;     // reduce-scatter
    p.ring_misaligned_slowdown[1][ll128] = 1.22;
    p.ring_misaligned_slowdown[1][simple] = 1.14;
  }
  // A Simple ring all-gather's misaligned chunks add time (ring_alignment.hpp
  // ring_misaligned_us): our own calibration, the same offset runs and calibrate/data/h200x4-align
  // (2 and 4 ranks, chunks of 4 and 8 mod 16 bytes, Simple as NCCL chooses and forced, gated).
  // The extra time over the aligned run at the same ladder step, per misaligned chunk and per
  // byte of a channel's share b, is ~85 ps/B up to b ~ 80 KB and falls to 47 ps/B by b ~ 1 MB,
  // at every rank count and m; fitted as head and tail costs by least squares over b >= 16 KB,
  // 83 points, rms 7.5 ps/B (tests/calibration/test_ring_priors.cpp). 1.54x on the bandwidth
  // time (the 2-rank slope ratio this replaces) left 3- and 4-rank ones 12-18 % fast at 4-32 MiB.
  if (arch == GpuArch::hopper) {
    p.ring_misaligned_head_bytes = 79e3;
    p.ring_misaligned_head_ps_per_byte = 85.5;
    p.ring_misaligned_tail_ps_per_byte = 47.4;
  }

  // The receive-only pass of ring loops (ring_passes.hpp), in link steps: our own calibration,
  // calibrate/data/h200x4-run3 to -run5 (4 x H200, NCCL 2.28, gated), forced Ring LL / LL128 /
  // Simple on 2 and 4 ranks, 64 KiB - 1 GiB: all-gather, reduce-scatter and all-reduce each
  // fitted as t = base + hop x steps + (S + a) x B / r (B a channel's bytes per step, S the link
  // steps per loop), the mean of a over the runs and ops (tests/calibration/test_ring_priors.cpp).
  // Simple 0.41-0.53, LL128 0.41-0.50, LL 0.57-0.67. The same pass read off the 1 GiB busbw alone
  // (against a broadcast chain's) gave Simple 0.24 and LL128 0.21, which left 2-rank rings 10-15 %
  // fast and 4-rank ones 10-16 % slow at 32 MiB - 1 GiB. Hopper only; other generations keep 0.
  // The fill of a Simple ring's or chain's last slices (ring_passes.hpp ring_fill_us) has no
  // prior: a calibration fits it beside the ring's bandwidth, per collective (the gated fits of
  // runs 3-5: all-gather 500-624, all-reduce 617-706, reduce-scatter 571-612, broadcast 795-866
  // GB/s), and added to NCCL's own bandwidth figures, which the uncalibrated model runs at, it
  // made the uncalibrated broadcast 8 % slow where it had been within 2-7 %.
  if (arch == GpuArch::hopper) {
    p.ring_recv_pass_steps[index_of(Proto::ll)] = 0.62;
    p.ring_recv_pass_steps[index_of(Proto::ll128)] = 0.46;
    p.ring_recv_pass_steps[index_of(Proto::simple)] = 0.47;
  }

  // LL128 across servers, the fixed cost of a chunk on a network connection
  // (collectives/tuner/transport.hpp): read off the published pairs of
  // calibrate/published/multinode.yaml, role fit, as the value with the least median error over
  // each pair's Tree LL128 points, charged per chunk after the first and per connection of the
  // busiest GPU (256 KiB - 16 MiB on the AWS p5 pair, H100: 4.5 us, median 7 %; 256 KiB - 256 MiB
  // on the p4de pair, A100: 7.0 us, median 7 %; without it the pairs ran 14-45 % fast there). The
  // same figure as a ring's step floor, never fitted to a ring, puts the p5 pair's Ring LL128
  // points at 0 and +5 % (-15 and -6 % without). Other generations have no measurement and keep 0.
  if (arch == GpuArch::hopper) p.ll128_net_chunk_us = 4.5;
  if (arch == GpuArch::ampere) p.ll128_net_chunk_us = 7.0;

  // NCCL device.h: NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS 640,
  // NCCL_SIMPLE_MAX_NTHREADS 512; thresholds from the reference (LL 8, LL128 8, Simple 64).
  p.max_threads[index_of(Proto::ll)] = 512;
  p.max_threads[index_of(Proto::ll128)] = 640;
  p.max_threads[index_of(Proto::simple)] = 512;
  p.thread_threshold[index_of(Proto::ll)] = 8;
  p.thread_threshold[index_of(Proto::ll128)] = 8;
  p.thread_threshold[index_of(Proto::simple)] = 64;
  return p;
}

GpuArch arch_from_gpu_name(std::string_view gpu_name) {
  std::string name;
  for (char c : gpu_name)
    name.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (has("V100")) return GpuArch::volta;
  if (has("A100") || has("A800") || has("A10") || has("A40") || has("L40") || has("L4"))
    return GpuArch::ampere;  // sm80-sm89 share NCCL's Ampere row
  if (has("B200") || has("B100") || has("GB200") || has("B300")) return GpuArch::blackwell;
  return GpuArch::hopper;
}

const char* to_string(GpuArch arch) {
  switch (arch) {
    case GpuArch::volta:
      return "volta";
    case GpuArch::ampere:
      return "ampere";
    case GpuArch::hopper:
      return "hopper";
    case GpuArch::blackwell:
      return "blackwell";
  }
  return "?";
}

double nccl_pcie_GBps(const NcclParams& params, int generation) {
  switch (generation) {
    case 3:
      return params.pcie_gen3_GBps;
    case 4:
      return params.pcie_gen4_GBps;
    case 5:
      return params.pcie_gen5_GBps;
    default:
      return 0;
  }
}

bool same_search_figures(const NcclParams& a, const NcclParams& b) {
  return a.nvlink_per_link_GBps == b.nvlink_per_link_GBps && a.pcie_gen3_GBps == b.pcie_gen3_GBps &&
         a.pcie_gen4_GBps == b.pcie_gen4_GBps && a.pcie_gen5_GBps == b.pcie_gen5_GBps &&
         a.intra_speeds_GBps == b.intra_speeds_GBps && a.inter_speeds_GBps == b.inter_speeds_GBps &&
         a.search_max_channels == b.search_max_channels &&
         a.duplicate_channels_min_GBps == b.duplicate_channels_min_GBps &&
         a.search_speed_ratio_floor == b.search_speed_ratio_floor &&
         a.nvls_channels == b.nvls_channels;
}

double nccl_tree_correction(Proto p, double bytes) {
  static constexpr double kFactor[kProtoCount][23] = {
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
       .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
       .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
  const auto units = static_cast<unsigned long long>(bytes) >> 6;
  if (units == 0) return 1.0;
  int log = 0;
  for (auto u = units; u > 1; u >>= 1) ++log;
  return log < 23 ? kFactor[index_of(p)][log] : 1.0;
}

}  // namespace cs::coll
