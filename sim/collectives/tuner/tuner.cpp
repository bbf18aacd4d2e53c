// NCCL's tuner: the prediction table, the choice, the small-message channel shrink.
#include "collectives/tuner/tuner.hpp"

#include <algorithm>
#include <cmath>

#include "collectives/nccl/channel_parts.hpp"
#include "collectives/nccl/p2p_plan.hpp"
#include "collectives/nccl/ring_alignment.hpp"
#include "collectives/nccl/ring_passes.hpp"
#include "collectives/tuner/collnet.hpp"
#include "collectives/tuner/enablement.hpp"
#include "collectives/tuner/nccl_release.hpp"
#include "collectives/tuner/transport.hpp"
#include "core/error.hpp"

namespace cs::coll {
namespace {

int steps_of(Op op, int n) {
  switch (op) {
    case Op::all_reduce:
      return 2 * (n - 1);
    case Op::all_gather:
    case Op::reduce_scatter:
      return n - 1;
    default:
      return n;
  }
}

// `nccl_time`: NCCL's own estimate (ncclTopoGetAlgoTime, with its tree correction), which its
// choice uses, in release `version`'s formulas; else the model the call is timed with.
Estimate estimate_one(const CommShape& s, Op op, double bytes, Algo a, Proto p,
                      const NcclParams& prm, bool nccl_time, int version) {
  const int n = s.n_ranks;
  const int nodes = s.n_nodes;
  const int nc = node_class(nodes);
  const int nsteps = steps_of(op, n);
  const GraphInfo& g = graph_of(s, a);
  const double nch = g.n_channels;
  const int ia = index_of(a);
  const int ip = index_of(p);
  // An earlier release's formulas price NCCL's estimate only, never the call's time.
  const int release = nccl_time ? version : 0;
  const std::optional<double> legacy_bus = legacy_nvls_bus_GBps(a, release, g, nodes);

  const bool collnet = a == Algo::collnet_direct || a == Algo::collnet_chain;
  double bus = nch * (nodes <= 2 || collnet ? g.bw_intra_GBps : g.bw_inter_GBps);
  bus = collnet_bus_GBps(s, a, bus);
  const double ll_max =
      nodes > 1 && s.amd_cpu ? prm.ll_max_bw_amd_GBps[nc] : prm.ll_max_bw_GBps[nc];
  if (a == Algo::ring && p == Proto::ll) bus = std::min(ll_max, bus * prm.ring_ll_efficiency);
  if (a == Algo::ring && p == Proto::ll128)
    bus = std::min(bus * prm.ll128_efficiency, nch * prm.ring_ll128_max_per_channel_GBps);
  if (a == Algo::tree && op == Op::all_reduce)
    bus = std::min(bus * prm.tree_efficiency, nch * prm.tree_max_per_channel_GBps[nc]);
  if (a == Algo::tree && p == Proto::ll) bus = std::min(bus * prm.tree_ll_efficiency, ll_max);
  if (a == Algo::tree && p == Proto::ll128) {
    const double eff =
        nodes == 1 ? prm.tree_ll128_efficiency_one_node : prm.tree_ll128_efficiency_multi_node;
    bus = std::min(bus * eff, nch * prm.tree_ll128_max_per_channel_GBps[nc]);
  }
  if (a == Algo::pat) bus *= prm.pat_efficiency;
  if (legacy_bus) {
    bus = *legacy_bus;
  } else if (a == Algo::nvls && nodes > 1) {  // with CollNet: the switch, then the network
    bus = nch * std::min(2.0 * g.bw_intra_GBps * prm.nvls_efficiency * (nch - 1.0) / nch,
                         g.bw_inter_GBps);
  } else if (a == Algo::nvls) {
    bus = 2.0 * bus * prm.nvls_efficiency * (nch - 1.0) / nch;
  } else if (a == Algo::nvls_tree) {
    // Per channel: the switch's pipelined reduce and broadcast (2 x bwIntra x eff x (nCh-1)/nCh),
    // the network (bwInter; a 2-server tree moves half a ring's bytes: x 2) and NCCL's cap.
    const double intra = 2.0 * g.bw_intra_GBps * prm.nvls_efficiency * (nch - 1.0) / nch;
    const double inter = g.bw_inter_GBps * (nodes <= 2 ? 2.0 : 1.0);
    bus = nch * std::min({intra, inter, prm.nvls_tree_max_per_channel_GBps[nc]});
  }

  double algbw = bus;
  if (a == Algo::ring || a == Algo::nvls || a == Algo::nvls_tree)
    algbw = bus * n / std::max(nsteps, 1);
  if (legacy_bus) algbw = bus * kLegacyNvlsAlgbwRatio;
  if (a == Algo::tree || collnet) algbw = bus * 0.5;
  // NCCL's tree correction: its choice scales Tree all-reduce by it everywhere. The time does
  // across servers: Tree pipelines chunks up and down a tree over the network, and on the fit
  // sets (calibrate/published: the p5 and p4de pairs) it runs 18-49% slower than its bandwidth
  // at 1-32 MiB; on one server the forced-Tree H200 runs do not follow the table (LL gets worse
  // with it). NVLSTree's time charges its pipeline fill instead (transport.hpp).
  if (a == Algo::tree && op == Op::all_reduce && (nccl_time || nodes > 1))
    algbw *= nccl_tree_correction(p, bytes);
  if (!nccl_time && a == Algo::nvls && nodes == 1 && prm.nvls_multimem_efficiency > 0) {
    // The run: each GPU's NVLink carries S (1 + 1/n) each way at the multimem rate.
    const double gpu_nvlink = nch * g.bw_intra_GBps;
    algbw = std::min(algbw, gpu_nvlink * prm.nvls_multimem_efficiency * n / (n + 1.0));
  }

  const double ppn = static_cast<double>(n) / nodes;
  const double intra_lat = prm.hop_latency_us[index_of(s.intra)][ia][ip];
  const auto& net = prm.hop_latency_us[index_of(LinkClass::network)];
  const double plugin = s.net_plugin_latency_us * (p == Proto::simple ? 2.0 : 1.0);
  double inter_lat = (ppn == 1.0 ? net[index_of(Algo::tree)][ip] : net[ia][ip]) + plugin;
  const std::optional<double> release_hop = legacy_nvls_tree_net_hop_us(release);
  if (a == Algo::nvls_tree && release_hop && ppn > 1) inter_lat = *release_hop + plugin;
  double lat = prm.base_latency_us[ia][ip];
  switch (a) {
    case Algo::ring: {
      if (op == Op::broadcast || op == Op::reduce) {
        // NCCL charges a broadcast or reduce ring one hop of its hardware class when every
        // channel follows the same ring (graph sameChannels, which its search keeps on the
        // NVLink, NVSwitch and PCIe servers modelled here). The run pays the pipeline's hops
        // (transport.cpp, run_latency_us).
        lat += nodes == 1 ? intra_lat : net[ia][ip];
        break;
      }
      const int inter_steps = nodes == 1 ? 0 : op == Op::all_reduce ? 2 * (nodes - 1) : nodes - 1;
      // NCCL's estimate charges each step at least its network post overhead; the call's time
      // does not (transport.hpp, ring_step_floor).
      const double step = nccl_time ? ring_step_floor(s, p, prm, intra_lat) : intra_lat;
      lat += (nsteps - inter_steps) * step + inter_steps * inter_lat;
      break;
    }
    case Algo::tree:
      lat += 2.0 * ((ppn - 1.0) * intra_lat + log2_floor(nodes) * inter_lat);
      break;
    case Algo::nvls:
      lat = intra_lat + (nodes > 1 ? inter_lat : 0.0);
      break;
    case Algo::nvls_tree:
      lat += intra_lat + 2.0 * log2_floor(nodes) * inter_lat;
      break;
    case Algo::pat:
      lat += log2_floor(nodes) * inter_lat / prm.pat_log_latency_divisor +
             n * prm.pat_per_rank_latency_us;
      break;
    case Algo::collnet_direct:
    case Algo::collnet_chain:
      lat += collnet_latency_us(s, a, intra_lat, inter_lat);
      break;
  }
  double plateau = 1.0;
  if (a == Algo::ring && p == Proto::simple && nodes > 1 && op == Op::all_reduce &&
      bytes / (nch * n) >= prm.ring_simple_plateau_bytes)
    plateau = prm.ring_simple_multinode_latency_factor;
  lat *= plateau;

  Estimate e;
  e.algo = a;
  e.proto = p;
  e.latency_us = lat;
  e.plateau_factor = plateau;
  e.bus_bw_GBps = bus;
  e.algo_bw_GBps = algbw;
  e.time_us = algbw > 0 ? lat + bytes / (1e3 * algbw) : lat;  // GB/s = 1e3 bytes/us
  return e;
}

std::vector<Estimate> estimates(const CommShape& shape, Op op, double bytes,
                                const NcclParams& params, const TunerOptions& options,
                                bool nccl_time) {
  std::vector<Estimate> out;
  if (shape.n_ranks <= 1) return out;
  for (Algo a : kAllAlgos) {
    for (Proto p : kAllProtos) {
      if (!applicable(shape, op, a, p, options)) continue;
      if (graph_of(shape, a).n_channels <= 0) continue;
      const Estimate e =
          estimate_one(shape, op, bytes, a, p, params, nccl_time, options.nccl_version);
      if (e.algo_bw_GBps > 0) out.push_back(e);
    }
  }
  return out;
}

// The chosen configuration timed with `params` on `shape` (no tuner correction).
void retime(TunerChoice& c, const CommShape& shape, Op op, double bytes, const NcclParams& params,
            const TunerOptions& options) {
  TunerOptions only = options;
  only.algo_mask = 1u << index_of(c.estimate.algo);
  only.proto_mask = 1u << index_of(c.estimate.proto);
  const std::vector<Estimate> timed = estimates(shape, op, bytes, params, only, false);
  if (!timed.empty()) c.estimate = timed.front();
  c.run_latency_us = run_latency_us(shape, op, c, params) +
                     ring_fill_us(op, c.estimate.algo, c.estimate.proto, bytes, shape.n_ranks,
                                  c.n_channels, shape.n_nodes, params.ring_fill_GBps) +
                     tree_pipeline_us(shape, op, c, bytes, params) +
                     ring_misaligned_us(op, c.estimate.algo, c.estimate.proto, bytes, shape.n_ranks,
                                        c.n_channels, shape.n_nodes, params);
}

}  // namespace

std::vector<Estimate> estimate_all(const CommShape& shape, Op op, double bytes,
                                   const NcclParams& params, const TunerOptions& options) {
  return estimates(shape, op, bytes, params, options, true);
}

namespace {

// NCCL's point-to-point decision for all-to-all and send/recv (no tuner): the channels one peer's
// send is striped over and its protocol, from NCCL's channel split and thresholds.
TunerChoice p2p_decision(const CommShape& shape, Op op, double bytes, const NcclParams& params) {
  TunerChoice c;
  c.p2p = true;
  c.graph_channels = std::max(shape.ring.n_channels, 1);
  c.comm_channels =
      std::min(c.graph_channels * params.runtime_channel_multiplier, params.max_channels);
  const P2pChannels p2p = p2p_channels(c.comm_channels, shape.n_ranks, shape.n_nodes, params);
  const double peer_bytes = op == Op::all_to_all ? bytes / shape.n_ranks : bytes;
  c.estimate.algo = Algo::ring;
  c.estimate.proto = p2p_uses_ll(peer_bytes, p2p.per_peer_max, params) ? Proto::ll : Proto::simple;
  c.n_channels = p2p_part_channels(peer_bytes, p2p, shape.n_nodes, c.estimate.proto, params);
  c.n_threads = params.max_threads[index_of(Proto::simple)];
  return c;
}

// The time of a point-to-point decision: one peer's send rate and latency.
void time_p2p(TunerChoice& c, const CommShape& shape, Op op, double bytes,
              const NcclParams& params) {
  const LinkClass hop = shape.n_nodes > 1 ? LinkClass::network : shape.intra;
  const int r = index_of(Algo::ring);
  const int s = index_of(Proto::simple);
  const P2pChannels p2p = p2p_channels(c.comm_channels, shape.n_ranks, shape.n_nodes, params);
  const double per_channel =
      params.p2p_per_channel_GBps > 0
          ? params.p2p_per_channel_GBps
          : (shape.n_nodes > 1 ? shape.ring.bw_inter_GBps : shape.ring.bw_intra_GBps);
  // Simple copies with reduceCopy, whose packs shrink when they are misaligned (LL moves 8-byte
  // lines whatever the alignment). One peer's send.
  const int sends = p2p_sends(op, shape.n_ranks);
  c.estimate.bus_bw_GBps =
      p2p_send_GBps(p2p_rate_channels(c.n_channels, sends, p2p.comm_channels), c.estimate.proto,
                    per_channel, p2p_aligned(op, bytes, shape.n_ranks), sends, params);
  c.estimate.algo_bw_GBps = c.estimate.bus_bw_GBps;
  c.estimate.latency_us = 0;
  if (shape.n_ranks > 1) {
    const double one_peer_us =
        hop == LinkClass::nvlink && params.p2p_nvlink_latency_us > 0
            ? params.p2p_nvlink_latency_us
            : params.base_latency_us[r][s] + params.hop_latency_us[index_of(hop)][r][s];
    c.estimate.latency_us = one_peer_us + std::max(p2p_peers(op, shape.n_ranks) - 1, 0) *
                                              params.p2p_extra_peer_latency_us;
    // Across servers the proxy serves each remote peer in turn (collectives/nccl/p2p_plan.hpp).
    const int remote = p2p_remote_peers(op, shape.n_ranks, shape.n_nodes);
    c.estimate.latency_us += std::max(remote - 1, 0) * p2p_net_peer_latency_us;
    // Over NVLink the last chunks of Simple sends cross NCCL's buffer alone
    // (collectives/nccl/p2p_plan.hpp).
    if (p2p_fills(shape.n_nodes, shape.intra, c.estimate.proto)) {
      const double peer_bytes = op == Op::all_to_all ? bytes / shape.n_ranks : bytes;
      c.estimate.latency_us += p2p_fill_us(peer_bytes, c.n_channels, sends,
                                           params.p2p_nvl_chunk_bytes, params.p2p_fill_GBps);
    }
  }
  c.run_latency_us = run_latency_us(shape, op, c, params);
}

// All-to-all, send/recv and any call on one rank take NCCL's point-to-point path, not the tuner.
bool p2p_call(const CommShape& shape, Op op) {
  return op == Op::all_to_all || op == Op::send_recv || shape.n_ranks <= 1;
}

}  // namespace

TunerChoice choose(const CommShape& shape, Op op, double bytes, const NcclParams& params,
                   const TunerOptions& options) {
  if (p2p_call(shape, op)) {
    TunerChoice c = p2p_decision(shape, op, bytes, params);
    time_p2p(c, shape, op, bytes, params);
    return c;
  }
  const std::vector<Estimate> table = estimate_all(shape, op, bytes, params, options);
  if (table.empty()) {
    throw InputError(std::string("no algorithm/protocol available for ") + to_string(op) + " on " +
                     std::to_string(shape.n_ranks) +
                     " ranks with the forced "
                     "NCCL_ALGO/NCCL_PROTO (or --algo/--proto) choice");
  }
  const Estimate* best = &table.front();
  for (const Estimate& e : table) {
    if (e.time_us < best->time_us) best = &e;
  }
  // aws-ofi-nccl's tuner sets its region's entry of NCCL's cost table to 0 where NCCL could run
  // it (ofi_tuner.hpp), which NCCL then picks.
  auto find = [&](Algo a, Proto p) -> const Estimate* {
    for (const Estimate& e : table)
      if (e.algo == a && e.proto == p) return &e;
    return nullptr;
  };
  const auto plugin = ofi_tuner_choice(shape.ofi_tuner, op, bytes, shape.n_ranks, shape.n_nodes,
                                       [&](Algo a, Proto p) { return find(a, p) != nullptr; });
  if (plugin) best = find(plugin->algo, plugin->proto);
  TunerChoice c;
  c.estimate = *best;
  c.graph_channels = graph_of(shape, best->algo).n_channels;
  c.comm_channels =
      best->algo == Algo::nvls || best->algo == Algo::nvls_tree
          ? c.graph_channels
          : std::min(c.graph_channels * params.runtime_channel_multiplier, params.max_channels);
  const ChannelShrink shrunk =
      nccl_channel_shrink(best->algo, best->proto, bytes, shape.n_ranks, c.comm_channels, params);
  c.n_channels = shrunk.channels;
  c.n_threads = shrunk.threads;
  if (best->algo != Algo::nvls && best->algo != Algo::nvls_tree) {
    // NCCL divides the data in cells over the channels, which may leave some idle.
    c.n_channels = nccl_channel_count(op, best->proto, bytes, shape.n_ranks, c.n_channels,
                                      c.comm_channels, kCallElementBytes);
  }
  retime(c, shape, op, bytes, params, options);
  return c;
}

TunerChoice choose_timed(const CommShape& nccl_shape, const NcclParams& nccl,
                         const CommShape& shape, const NcclParams& params, Op op, double bytes,
                         const TunerOptions& options) {
  if (p2p_call(nccl_shape, op)) {
    TunerChoice c = p2p_decision(nccl_shape, op, bytes, nccl);
    time_p2p(c, shape, op, bytes, params);
    return c;
  }
  TunerChoice c = choose(nccl_shape, op, bytes, nccl, options);
  retime(c, shape, op, bytes, params, options);
  return c;
}

}  // namespace cs::coll
