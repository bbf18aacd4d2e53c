// Scale: a collective over many servers must cost flows per channel, not per rank or rank pair,
// and graph queries linear in the servers (routes inside a server are computed once per template).
#include <doctest/doctest.h>

#include <string>

#include "collectives/communicator.hpp"
#include "topology/loader.hpp"

using namespace cs;
using namespace cs::coll;

TEST_CASE("a ring all-reduce over 128 DGX H100 servers is one flow per channel") {
  const topo::Cluster cluster = topo::load_cluster(std::string(CLUSTERSIM_SOURCE_DIR) +
                                                   "/topologies/dgx-h100-128node-fattree.yaml");
  const topo::ClusterGraph graph(cluster);
  std::vector<int> ranks;
  for (int r = 0; r < 1024; ++r) ranks.push_back(r);
  Communicator comm(graph, ranks, nccl_priors(GpuArch::hopper));
  CollectiveCall call;
  call.op = Op::all_reduce;
  call.bytes = kGiB;
  call.options.algo_mask = 1u << index_of(Algo::ring);
  call.options.proto_mask = 1u << index_of(Proto::simple);
  const CollectiveResult r = simulate_alone(comm, call, Fidelity::flow);
  CHECK(r.flows == r.choice.n_channels);  // 32: the 16 graph channels, duplicated
  CHECK(r.flows == 32);
  // Channel c leaves every server through NIC c mod 8: 128 servers x 8 rails NIC-to-NIC routes,
  // plus the routes inside one server template (GPU pairs, GPU-NIC, NIC-GPU: fewer than 100).
  CHECK(comm.routes().graph_queries() <= 128 * 8 + 100);
  // The bandwidth term cannot beat the channel cap: 1 GiB x 2 x 1023/1024 / (16 x 22.5 GB/s).
  CHECK(r.time_us() > kGiB * 2.0 * 1023 / 1024 / 360e9 * 1e6);
}
