// Bisection bandwidth of a cluster, computed as a maximum flow: how many bytes per second the first
// half of the GPUs can send to the second half at once (and back), when every link carries at most
// its line rate in each direction and traffic may take any paths.
#pragma once

#include <string>

#include "topology/cluster/cluster.hpp"

namespace cs::topo {

struct Bisection {
  // How the GPUs were cut in two. With two or more servers: the first floor(n/2) servers against
  // the rest, so the cut crosses the fabric. With one server: its first half of GPUs (local order)
  // against the second half, so the cut crosses the server's own NVLink / PCIe.
  std::string split;
  bool across_servers = false;
  int gpus_a = 0;
  int gpus_b = 0;
  double a_to_b_Bps = 0;  // max flow from half A's GPUs to half B's, line rates
  double b_to_a_Bps = 0;
  // Sum of the line rates of the network links of each half's NICs (0 with one server): a
  // non-blocking fabric has bisection == min(injection_a, injection_b); less means oversubscribed.
  double injection_a_Bps = 0;
  double injection_b_Bps = 0;
};

// Needs at least two GPUs; with fewer every figure is 0.
Bisection compute_bisection(const Cluster& cluster);

// Whether a link joins a NIC to the network (InfiniBand, Ethernet, EFA).
bool is_network_link(LinkKind kind);

}  // namespace cs::topo
