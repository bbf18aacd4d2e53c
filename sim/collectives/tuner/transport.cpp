// Critical-path latency across servers: see transport.hpp.
#include "collectives/tuner/transport.hpp"

#include <algorithm>
#include <cmath>

#include "collectives/tuner/collnet.hpp"

namespace cs::coll {

int log2_floor(int n) {
  int l = 0;
  while (n > 1) {
    n >>= 1;
    ++l;
  }
  return l;
}

int ring_network_steps(int steps, int n_ranks, int nodes) {
  if (nodes <= 1 || n_ranks <= 1 || steps <= 0) return 0;
  const int ppn = std::max(n_ranks / nodes, 1);
  const int laps = steps / n_ranks;
  const int rest = steps % n_ranks;
  return laps * nodes + std::min(nodes, (rest + ppn - 1) / ppn);
}

double ring_step_floor(const CommShape& s, Proto p, const NcclParams& prm, double intra_lat) {
  if (s.n_nodes <= 1) return intra_lat;
  const double overhead = (s.amd_cpu ? prm.net_overhead_amd_us : prm.net_overhead_us) *
                          (p == Proto::simple ? 3.0 : 1.0);
  return std::max(intra_lat, overhead);
}

double run_latency_us(const CommShape& shape, Op op, const TunerChoice& choice,
                      const NcclParams& params) {
  const Estimate& e = choice.estimate;
  const int n = shape.n_ranks;
  const int nodes = shape.n_nodes;
  const int ia = index_of(choice.p2p ? Algo::ring : e.algo);
  const int ip = index_of(e.proto);
  const auto& net = params.hop_latency_us[index_of(LinkClass::network)];
  const bool chain =
      !choice.p2p && e.algo == Algo::ring && (op == Op::broadcast || op == Op::reduce);
  if (chain && !(nodes > 1 && shape.net_step_latency_us > 0)) {
    // NCCL's estimate charges a broadcast / reduce ring one hop (tuner.cpp); the pipeline runs
    // through all n of them, N - 1 across the network at NCCL's network hop (+ the plugin's).
    const double intra = params.hop_latency_us[index_of(shape.intra)][ia][ip];
    const double ppn = static_cast<double>(n) / nodes;
    const double plugin = shape.net_plugin_latency_us * (e.proto == Proto::simple ? 2.0 : 1.0);
    const double inter = (ppn == 1.0 ? net[index_of(Algo::tree)][ip] : net[ia][ip]) + plugin;
    return params.base_latency_us[ia][ip] + (n - (nodes - 1)) * intra + (nodes - 1) * inter;
  }
  if (nodes <= 1 || !(shape.net_step_latency_us > 0)) return e.latency_us;
  // With one rank per server NCCL prices the network with Tree's figures; so does this.
  const int net_algo = n == nodes ? index_of(Algo::tree) : ia;
  const double step =
      shape.net_step_latency_us + net[net_algo][ip] - net[net_algo][index_of(Proto::ll)];
  const double intra = params.hop_latency_us[index_of(shape.intra)][ia][ip];
  const double base = params.base_latency_us[ia][ip];
  if (choice.p2p) {
    // One peer's send (tuner.cpp), its hop across the network; extra peers as the tuner adds them.
    const double extra = e.latency_us - base - net[ia][index_of(Proto::simple)];
    return base + step + std::max(extra, 0.0);
  }
  switch (e.algo) {
    case Algo::ring: {
      const int steps = op == Op::all_reduce ? 2 * (n - 1) : chain ? n : n - 1;
      const int across = chain ? nodes - 1 : ring_network_steps(steps, n, nodes);
      // NCCL's multi-node plateau factor (tuner.hpp) stays: it stands for the ring's real cost.
      // NCCL's network post overhead (ring_step_floor) is its choice's, not this time: the Azure
      // 2 x 8 all-gather at 1 KiB (calibrate/published) runs its 14 intra-server LL steps at
      // NVLink's 0.6 us, not AMD's 2 us floor.
      // Every step of an LL128 ring across servers costs at least a chunk on a network
      // connection (ll128_net_step_floor).
      const double floor = ll128_net_step_floor(shape, e.proto, params);
      return (base + (steps - across) * std::max(intra, floor) + across * std::max(step, floor)) *
             e.plateau_factor;
    }
    case Algo::tree: {
      const double ppn = static_cast<double>(n) / nodes;
      return base + 2.0 * ((ppn - 1.0) * intra + log2_floor(nodes) * step);
    }
    case Algo::pat:
      return e.latency_us -
             log2_floor(nodes) * net[index_of(Algo::tree)][ip] / params.pat_log_latency_divisor +
             log2_floor(nodes) * step;
    case Algo::nvls:  // across servers with CollNet: the in-switch part, then the network's
      return intra + shape.net_step_latency_us + net[ia][ip] - net[index_of(Algo::tree)][0];
    case Algo::collnet_direct:
    case Algo::collnet_chain:
      return base + collnet_latency_us(
                        shape, e.algo, intra,
                        shape.net_step_latency_us + net[ia][ip] - net[index_of(Algo::tree)][0]);
    case Algo::nvls_tree: {
      // The in-switch part at NCCL's figure, then 2 log2(N) network steps; NCCL has no LL row for
      // NVLSTree, so its Simple figure's excess over Tree LL's is what the protocol adds.
      const double nt_step = shape.net_step_latency_us + net[ia][ip] - net[index_of(Algo::tree)][0];
      return base + intra + 2.0 * log2_floor(nodes) * nt_step;
    }
  }
  return e.latency_us;
}

double nvls_tree_chunk_bytes(double bytes, int nodes, int concurrent_ops, OfiPlatform platform) {
  constexpr double kKiB = 1024;
  // NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE (from 4 servers): NCCL's defaults, or the
  // 512 KiB that aws-ofi-nccl sets for both on p5 / p5e (platform-aws.cpp, since v1.10).
  const bool ofi_p5 = platform == OfiPlatform::p5;
  const double nvls_chunk = ofi_p5 ? 512 * kKiB : 128 * kKiB;
  const double wide_tree_max = ofi_p5 ? 512 * kKiB : 64 * kKiB;
  const double ops = std::max(concurrent_ops, 1);
  double chunk = nodes >= 4 ? std::min(nvls_chunk, wide_tree_max) : nvls_chunk;
  if (bytes < 32 * ops * chunk && chunk > 256 * kKiB) chunk = 256 * kKiB;
  if (bytes < 16 * ops * chunk && chunk > 128 * kKiB) chunk = 128 * kKiB;
  if (bytes < 4 * ops * chunk && chunk > 64 * kKiB) chunk = 64 * kKiB;
  if (bytes < 1 * ops * chunk && chunk > 32 * kKiB) chunk = 32 * kKiB;
  return chunk;
}

double nvls_tree_fill_us(const CommShape& shape, Op op, Algo algo, double bytes, double algbw_GBps,
                         const NcclParams& params) {
  if (algo != Algo::nvls_tree || op != Op::all_reduce || shape.n_nodes <= 1) return 0;
  if (!(algbw_GBps > 0) || !(bytes > 0)) return 0;
  const int ops = params.nvls_channels * std::max(shape.nvls.n_channels, 1);
  // A call smaller than one loop moves its whole size in its only loop.
  const double loop_bytes =
      std::min(bytes, ops * nvls_tree_chunk_bytes(bytes, shape.n_nodes, ops, shape.ofi_tuner));
  constexpr double kStagesBeyondRate = 2.0;  // three kernel stages in turn, the rate counts one
  return kStagesBeyondRate * (loop_bytes / (algbw_GBps * 1e3) + shape.net_step_latency_us);
}

double tree_ll128_chunk_bytes(double bytes, int ranks, int nodes, int channels) {
  constexpr double kStepData = 4915200.0 / 8 / 16 * 15;  // one LL128 step's data bytes
  constexpr double kGrain = 1920;                        // ncclProtoGrainSize(LL128)
  const double ppn = static_cast<double>(ranks) / std::max(nodes, 1);
  const double steps = 1 + log2_floor(nodes) + 0.1 * ppn;
  const double ch = std::max(channels, 1);
  // NCCL divides integers: bytes / (channels x chunk) rounds down before the comparison.
  auto loops = [&](double chunk) { return std::floor(bytes / (ch * chunk)); };
  double chunk = kStepData;
  while (loops(chunk) < steps * 64 / ppn && chunk > 131072) chunk = std::floor(chunk / 2);
  while (loops(chunk) < steps * 16 / ppn && chunk > 32768) chunk = std::floor(chunk / 2);
  return std::floor(chunk / kGrain) * kGrain;
}

double ll128_net_step_floor(const CommShape& shape, Proto proto, const NcclParams& params) {
  if (shape.n_nodes <= 1 || proto != Proto::ll128) return 0;
  return params.ll128_net_chunk_us;
}

int tree_head_net_connections(int nodes) {
  return nodes <= 1 ? 0 : 2;
}

double tree_net_chunk_us(const CommShape& shape, Op op, const Estimate& estimate, double bytes,
                         int channels, const NcclParams& params) {
  if (estimate.algo != Algo::tree || estimate.proto != Proto::ll128 || op != Op::all_reduce)
    return 0;
  const int nodes = shape.n_nodes;
  if (nodes <= 1 || !(bytes > 0)) return 0;
  const double chunk = tree_ll128_chunk_bytes(bytes, shape.n_ranks, nodes, channels);
  const double loops = std::ceil(bytes / (std::max(channels, 1) * chunk));
  return (loops - 1) * tree_head_net_connections(nodes) * params.ll128_net_chunk_us;
}

double tree_pipeline_us(const CommShape& shape, Op op, const TunerChoice& choice, double bytes,
                        const NcclParams& params) {
  const Estimate& e = choice.estimate;
  return nvls_tree_fill_us(shape, op, e.algo, bytes, e.algo_bw_GBps, params) +
         tree_net_chunk_us(shape, op, e, bytes, choice.n_channels, params);
}

}  // namespace cs::coll
