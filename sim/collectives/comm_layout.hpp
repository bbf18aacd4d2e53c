// A communicator laid over the cluster: its ranks grouped by server, and the shape NCCL's tuner
// sees (ranks, nodes, link classes and the channels its graph search finds), read off the graph.
#pragma once

#include <vector>

#include "collectives/route_cache.hpp"
#include "collectives/tuner/tuner.hpp"

namespace cs::coll {

// The communicator's ranks on one server, in the server's local GPU order.
struct ServerGroup {
  int server = -1;
  std::vector<int> gpus;        // GPU node ids
  std::vector<int> comm_ranks;  // their positions in the communicator
  // The NICs the communicator uses here: those whose nearest GPU is one of `gpus` (NCCL reaches a
  // NIC through a local rank, directly or by PXN); all of the server's when none is.
  std::vector<int> nics;
};

struct CommLayout {
  std::vector<int> ranks;           // global ranks in communicator order
  std::vector<int> gpu_nodes;       // GPU node of each communicator rank
  std::vector<ServerGroup> groups;  // servers in order of their first rank
  CommShape shape;
};

// Throws InputError when a rank does not exist or appears twice.
CommLayout make_layout(RouteCache& routes, const std::vector<int>& ranks, const NcclParams& params);

// Ranks 0 .. n-1: the communicator of the first n GPUs, as nccl-tests runs them.
std::vector<int> first_ranks(int n);

// The NCCL generation of the communicator's first GPU (hopper when the cluster has no model).
GpuArch comm_arch(const topo::Cluster& cluster, const std::vector<int>& ranks);

// The latency NCCL's network plugin reports for a transport (ncclNetProperties.latency), us; the
// tuner adds it to every network hop, twice for Simple.
double net_plugin_latency_us(topo::LinkKind kind);

// NCCL's figure for one link, GB/s: NVLink lanes x per-link figure, PCIe by generation and
// width, anything else its line rate.
double nccl_link_GBps(const topo::Link& link, const NcclParams& params);

}  // namespace cs::coll
