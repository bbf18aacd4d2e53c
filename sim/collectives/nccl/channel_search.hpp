// NCCL's graph search reduced to its arithmetic: how many channels (rings or trees) a communicator
// gets and at what per-channel bandwidth, from what one GPU and one NIC can carry. Pure.
#pragma once

#include "collectives/nccl/nccl_params.hpp"

namespace cs::coll {

// What the search sees of one server, in NCCL's own bandwidth figures (GB/s).
struct SearchInput {
  bool multi_node = false;
  int gpus_per_node = 1;
  double gpu_total_GBps = 0;  // one GPU's intra-server bandwidth: NVLink lanes x per-link, or PCIe
  double gpu_pair_GBps = 0;   // the best path between two GPUs of a server
  int nics_per_node = 0;
  double nic_GBps = 0;      // one NIC: line rate / 8
  double gpu_nic_GBps = 0;  // the path from a GPU to a NIC (PCIe figure, capped by the NIC)
};

// A graph as the tuner reads it: nChannels at bwIntra / bwInter each.
struct GraphInfo {
  int n_channels = 0;
  double bw_intra_GBps = 0;
  double bw_inter_GBps = 0;
};

// NCCL search.cc, in arithmetic form: for each speed s of the speed list (intra list on one node,
// inter list across nodes), starting with the first that a path can carry, the rings that fit are
//   min(max channels, floor(gpu_total / s), nics * floor(min(nic, gpu_nic) / s)),
// every ring crossing each GPU once and each server once through one NIC in each direction. The
// best nChannels * s wins (the first found on ties); the search stops lowering s once s falls to
// ratio_floor of the best speed. A solution at >= 25 GB/s per channel is then duplicated: twice
// the channels at half the speed.
GraphInfo search_channels(const SearchInput& input, const NcclParams& params);

// NCCL's tree graph across servers: the ring's channels and network speed, but the search's second
// pass raises the intra-server speed (search.cc, "increase bwIntra for trees"): from the ring's
// speed up the inter-server list, one step while the speed is below twice the network speed and
// the ring's channels still fit the GPU's intra-server bandwidth. The tuner reads that raised
// speed on two servers, so Tree beats Ring there at large sizes. On one server: the ring's graph.
GraphInfo tree_graph(const SearchInput& input, const GraphInfo& ring, const NcclParams& params);

// NCCL's NVLS graph (search.cc, pattern NVLS). On one server: nvls_channels channels sharing the
// GPU's intra-server bandwidth. Across servers a channel is a head GPU with its NIC, at most one
// per GPU (NCCL_MAX_NVLS_ARITY 32); a channel takes s of every GPU's NVSwitch bandwidth and 2s of
// its head's, so h heads fit at s while (h + 1) s <= the GPU's total. The search prefers more
// heads: every GPU heads one channel at the fastest inter-server speed where they fit (bwIntra),
// then its second pass raises bwInter up the list while the NIC path carries it and bwInter is
// below 2 bwIntra. No heads (0 channels) with one GPU per server.
GraphInfo nvls_graph(const SearchInput& input, const NcclParams& params);

// NCCL's CollNetDirect graph across servers (search.cc, pattern COLLNET_DIRECT): one channel per
// head GPU, at most 8 (NCCL_MAX_DIRECT_ARITY + 1); each head reaches every other GPU of its server
// with 1 / (gpus - 1) of the channel's speed both ways, so a GPU carries twice the speed (its own
// channel and its share of the others'), and its NIC once. The speed is the highest of NCCL's
// inter-server speeds that fits both; bwIntra then rises, as for trees, while under twice bwInter
// and the GPU's links allow. Empty on one server or a single-GPU server.
GraphInfo collnet_direct_graph(const SearchInput& input, const NcclParams& params);

}  // namespace cs::coll
