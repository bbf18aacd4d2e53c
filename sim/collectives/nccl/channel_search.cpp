// The channel search: see channel_search.hpp for the rule it follows.
#include "collectives/nccl/channel_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cs::coll {
namespace {

// floor(a / b) with a small tolerance, so 360 / 60 counts 6 even after rounding.
int fits(double capacity, double speed) {
  if (!(capacity > 0) || !(speed > 0)) return 0;
  if (std::isinf(capacity)) return std::numeric_limits<int>::max();
  return static_cast<int>(std::floor(capacity / speed + 1e-9));
}

}  // namespace

GraphInfo search_channels(const SearchInput& in, const NcclParams& params) {
  const std::vector<double>& speeds =
      in.multi_node ? params.inter_speeds_GBps : params.intra_speeds_GBps;
  const double inf = std::numeric_limits<double>::infinity();
  // Bytes crossing the NVLink/PCIe fabric of a server: only with two or more GPUs on it.
  const double gpu_capacity = in.gpus_per_node > 1 ? in.gpu_total_GBps : inf;
  const double nic_capacity = std::min(in.nic_GBps, in.gpu_nic_GBps);
  // The fastest speed worth trying: what one path can carry.
  const double max_path = in.multi_node ? nic_capacity : in.gpu_pair_GBps;

  auto rings_at = [&](double speed) {
    int n = std::min(params.search_max_channels, fits(gpu_capacity, speed));
    if (in.multi_node) {
      const int per_nic = fits(nic_capacity, speed);
      const long long total = static_cast<long long>(per_nic) * std::max(in.nics_per_node, 0);
      n = static_cast<int>(std::min<long long>(n, total));
    }
    return n;
  };

  GraphInfo best;
  double best_speed = 0;
  for (std::size_t i = 0; i < speeds.size(); ++i) {
    const double speed = speeds[i];
    if (speed > max_path) continue;
    if (best.n_channels > 0 && speed / best_speed <= params.search_speed_ratio_floor) break;
    const int n = rings_at(speed);
    if (n > 0 && n * speed > best.n_channels * best_speed) {
      best.n_channels = n;
      best_speed = speed;
    }
  }
  if (best.n_channels == 0) {  // nothing on the list fits: one channel at what the path carries
    best.n_channels = 1;
    best_speed = std::max(std::min(max_path, gpu_capacity), 0.0);
  }
  if (best_speed >= params.duplicate_channels_min_GBps) {
    const int doubled = std::min(best.n_channels * 2, params.search_max_channels);
    const int factor = (doubled + best.n_channels - 1) / best.n_channels;
    best_speed /= factor;
    best.n_channels = doubled;
  }
  best.bw_intra_GBps = best_speed;
  best.bw_inter_GBps = best_speed;
  return best;
}

GraphInfo tree_graph(const SearchInput& in, const GraphInfo& ring, const NcclParams& params) {
  GraphInfo tree = ring;
  if (!in.multi_node || ring.n_channels <= 0) return tree;
  const std::vector<double>& speeds = params.inter_speeds_GBps;
  const double capacity =
      in.gpus_per_node > 1 ? in.gpu_total_GBps : std::numeric_limits<double>::infinity();
  // The list position of the ring's speed (the first speed at or below it).
  std::size_t i = 0;
  while (i + 1 < speeds.size() && speeds[i] > ring.bw_inter_GBps + 1e-9) ++i;
  while (i > 0 && tree.bw_intra_GBps < 2.0 * ring.bw_inter_GBps - 1e-9) {
    const double faster = speeds[i - 1];
    if (ring.n_channels * faster > capacity + 1e-9) break;
    if (in.gpus_per_node > 1 && faster > in.gpu_pair_GBps + 1e-9) break;
    tree.bw_intra_GBps = faster;
    --i;
  }
  return tree;
}

namespace {

// The first of `speeds` (highest first) that a head's NIC path carries while `load` times it fits
// the GPU's intra-server total; speeds.size() if none does.
std::size_t first_head_speed(const std::vector<double>& speeds, double nic_capacity,
                             double gpu_total, double load) {
  std::size_t i = 0;
  while (i < speeds.size() &&
         !(speeds[i] <= nic_capacity + 1e-9 && load * speeds[i] <= gpu_total + 1e-9))
    ++i;
  return i;
}

}  // namespace

GraphInfo nvls_graph(const SearchInput& in, const NcclParams& params) {
  GraphInfo g;
  if (!in.multi_node) {
    g.n_channels = params.nvls_channels;
    g.bw_intra_GBps = in.gpu_total_GBps / std::max(params.nvls_channels, 1);
    g.bw_inter_GBps = g.bw_intra_GBps;
    return g;
  }
  constexpr int kMaxNvlsArity = 32;  // NCCL device.h NCCL_MAX_NVLS_ARITY
  const int heads = std::min(in.gpus_per_node, kMaxNvlsArity);
  if (heads < 2) return g;
  const std::vector<double>& speeds = params.inter_speeds_GBps;
  const double nic_capacity = std::min(in.nic_GBps, in.gpu_nic_GBps);
  std::size_t i = first_head_speed(speeds, nic_capacity, in.gpu_total_GBps, heads + 1);
  if (i == speeds.size()) return g;
  g.n_channels = heads;
  g.bw_intra_GBps = speeds[i];
  g.bw_inter_GBps = speeds[i];
  while (i > 0 && g.bw_inter_GBps < 2.0 * g.bw_intra_GBps - 1e-9 &&
         speeds[i - 1] <= nic_capacity + 1e-9) {
    g.bw_inter_GBps = speeds[--i];
  }
  return g;
}

GraphInfo collnet_direct_graph(const SearchInput& in, const NcclParams& params) {
  GraphInfo g;
  constexpr int kMaxDirectHeads = 8;  // NCCL device.h NCCL_MAX_DIRECT_ARITY + 1
  const int heads = std::min(in.gpus_per_node, kMaxDirectHeads);
  if (!in.multi_node || heads < 2) return g;
  const std::vector<double>& speeds = params.inter_speeds_GBps;
  std::size_t i =
      first_head_speed(speeds, std::min(in.nic_GBps, in.gpu_nic_GBps), in.gpu_total_GBps, 2);
  if (i == speeds.size()) return g;
  g.n_channels = heads;
  g.bw_inter_GBps = speeds[i];
  g.bw_intra_GBps = speeds[i];
  while (i > 0 && g.bw_intra_GBps < 2.0 * g.bw_inter_GBps - 1e-9 &&
         2 * speeds[i - 1] <= in.gpu_total_GBps + 1e-9) {
    g.bw_intra_GBps = speeds[--i];
  }
  return g;
}

}  // namespace cs::coll
