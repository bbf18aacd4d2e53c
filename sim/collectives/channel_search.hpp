// NCCL's graph search reduced to its arithmetic: how many channels (rings or trees) a communicator
// gets and at what per-channel bandwidth, from what one GPU and one NIC can carry. Pure.
#pragma once

#include "collectives/nccl_params.hpp"

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

}  // namespace cs::coll
