// NCCL's point-to-point channel split (init.cc, enqueue.cc of NCCL 2.28).
#include "collectives/nccl/p2p_plan.hpp"

#include <algorithm>
#include <cmath>

#include "collectives/nccl/ring_alignment.hpp"

namespace cs::coll {
namespace {

int pow2_up(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

}  // namespace

P2pChannels p2p_channels(int comm_channels, int n_ranks, int n_nodes, const NcclParams& params) {
  P2pChannels out;
  const int base = std::max(1, std::min(comm_channels, params.p2p_max_channels));
  // Per-peer topology figure: NVLink peers allow more channels than a communicator runs (2 per
  // NVLink of the path); a network peer NCCL_NCHANNELS_PER_NET_PEER.
  const int per_peer_topo = n_nodes > 1 ? params.p2p_net_channels_per_peer : base;
  out.comm_channels = pow2_up(base);
  out.per_peer_max = pow2_up(std::max(1, std::min(base, per_peer_topo)));
  out.per_peer_min = out.per_peer_max;
  while (out.per_peer_min * n_ranks > out.comm_channels && out.per_peer_min > 1)
    out.per_peer_min /= 2;
  return out;
}

int p2p_part_channels(double bytes, const P2pChannels& ch, int n_nodes, Proto proto,
                      const NcclParams& params) {
  if (!(bytes > 0)) return 1;
  const double step = proto == Proto::ll
                          ? p2p_ll_step_bytes
                          : (n_nodes > 1 ? params.p2p_net_chunk_bytes : params.p2p_nvl_chunk_bytes);
  const double min_part = n_nodes > 1 ? step / 2 : step / 8;
  const double max_part = n_nodes > 1 ? step : step * 32;
  int nc = static_cast<int>(std::min<double>(ch.per_peer_min, std::ceil(bytes / min_part)));
  nc = std::max(nc, 1);
  double part = std::max(min_part, std::ceil(bytes / nc));
  while (part > max_part && nc <= ch.per_peer_max / 2) {
    nc *= 2;
    part = std::ceil(bytes / nc);
  }
  return nc;
}

bool p2p_uses_ll(double bytes, int per_peer_channels, const NcclParams& params) {
  return bytes <= per_peer_channels * params.p2p_ll_threshold_bytes;
}

double p2p_fill_us(double bytes, int part_channels, int sends, double chunk_bytes,
                   double fill_GBps) {
  if (!(fill_GBps > 0) || !(bytes > 0) || part_channels < 1 || sends < 1) return 0;
  const double last_chunk = std::min(bytes / part_channels, chunk_bytes);
  return sends * part_channels * last_chunk / (fill_GBps * 1e3);
}

bool p2p_fills(int n_nodes, LinkClass intra, Proto proto) {
  return n_nodes <= 1 && intra == LinkClass::nvlink && proto == Proto::simple;
}

bool p2p_aligned(Op op, double bytes, int n_ranks) {
  return op != Op::all_to_all || rank_chunks_aligned(op, bytes, n_ranks);
}

int p2p_sends(Op op, int n_ranks) {
  if (n_ranks <= 1) return 0;
  return op == Op::all_to_all ? n_ranks - 1 : 1;
}

double p2p_rate_channels(int part_channels, int sends, int comm_channels) {
  double channels = part_channels;
  if (sends > 0 && comm_channels > 0)
    channels = std::min(channels, static_cast<double>(comm_channels) / sends);
  return channels;
}

double p2p_send_GBps(double rate_channels, Proto proto, double per_channel_GBps, bool full_packs,
                     int sends, const NcclParams& params) {
  if (proto == Proto::ll) {
    return rate_channels * (params.p2p_ll_per_channel_GBps > 0
                                ? params.p2p_ll_per_channel_GBps
                                : per_channel_GBps * p2p_ll_data_fraction);
  }
  if (full_packs) return rate_channels * per_channel_GBps;
  const double channel_GBps = params.p2p_unaligned_per_channel_GBps > 0
                                  ? params.p2p_unaligned_per_channel_GBps
                                  : per_channel_GBps * p2p_pack_width_ratio;
  double rate = rate_channels * channel_GBps;
  if (params.p2p_unaligned_gpu_GBps > 0 && sends > 0)
    rate = std::min(rate, params.p2p_unaligned_gpu_GBps / sends);
  return rate;
}

double p2p_protocol_channels(double rate_channels, Proto proto) {
  return proto == Proto::ll ? rate_channels * p2p_ll_data_fraction : rate_channels;
}

int p2p_peers(Op op, int n_ranks) {
  if (n_ranks <= 1) return 0;
  if (op == Op::all_to_all) return n_ranks - 1;
  return n_ranks == 2 ? 1 : 2;
}

int p2p_remote_peers(Op op, int n_ranks, int n_nodes) {
  if (n_nodes <= 1 || n_ranks <= 1) return 0;
  const int server_gpus = std::max(n_ranks / n_nodes, 1);
  if (op == Op::all_to_all) return n_ranks - server_gpus;
  return server_gpus == 1 ? p2p_peers(op, n_ranks) : 1;
}

std::vector<ShiftGroup> alltoall_shifts(int n_ranks, int server_gpus, int exact_ranks, int groups) {
  std::vector<ShiftGroup> out;
  const int lo = std::max(1, server_gpus);  // from here on every peer is on another server
  const int hi = n_ranks - server_gpus;     // up to here
  if (n_ranks <= exact_ranks || hi - lo + 1 <= groups) {
    for (int d = 1; d < n_ranks; ++d) out.push_back({d, 1});
    return out;
  }
  for (int d = 1; d < lo; ++d) out.push_back({d, 1});
  const long long span = hi - lo + 1;
  for (int g = 0; g < groups; ++g) {  // runs of span / groups distances, the first ones longer
    const auto first = static_cast<int>(lo + span * g / groups);
    const auto last = static_cast<int>(lo + span * (g + 1) / groups - 1);
    out.push_back({(first + last) / 2, last - first + 1});
  }
  for (int d = hi + 1; d < n_ranks; ++d) out.push_back({d, 1});
  return out;
}

}  // namespace cs::coll
