// The communicator's view of the shipped DGX H100 files: groups, NICs, link classes and channel
// graphs, and the route cache's template translation against the graph's own routes.
#include <doctest/doctest.h>

#include <string>

#include "collectives/comm_layout.hpp"
#include "core/error.hpp"
#include "topology/loader.hpp"

using namespace cs;
using namespace cs::coll;

namespace {

topo::Cluster load(const char* name) {
  return topo::load_cluster(std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/" + name);
}

}  // namespace

TEST_CASE("one DGX H100: NVLink through the NVSwitch, 12 channels x 30 GB/s") {
  const topo::Cluster c = load("dgx-h100.yaml");
  const topo::ClusterGraph graph(c);
  RouteCache routes(graph);
  const CommLayout l = make_layout(routes, {0, 1, 2, 3, 4, 5, 6, 7}, nccl_priors(GpuArch::hopper));
  CHECK(l.shape.n_nodes == 1);
  CHECK(l.shape.intra == LinkClass::nvlink);
  CHECK(l.shape.nvswitch);
  CHECK(l.shape.ring.n_channels == 12);
  CHECK(l.shape.ring.bw_intra_GBps == doctest::Approx(30.0));
  // NIC i sits on the PCIe switch of GPUs 2(i/2) and 2(i/2)+1; the tie goes to GPU i.
  for (int i = 0; i < 8; ++i)
    CHECK(routes.nearest_gpu(c.servers[0].nics[i]) == c.servers[0].gpus[i]);
  CHECK(comm_arch(c, {0}) == GpuArch::hopper);
}

TEST_CASE("two DGX H100: all 8 rails for the full servers, only the local NICs for a subset") {
  const topo::Cluster c = load("dgx-h100-2node.yaml");
  const topo::ClusterGraph graph(c);
  RouteCache routes(graph);
  const NcclParams prm = nccl_priors(GpuArch::hopper);
  std::vector<int> all;
  for (int r = 0; r < 16; ++r) all.push_back(r);
  const CommLayout full = make_layout(routes, all, prm);
  CHECK(full.groups.size() == 2);
  CHECK(full.groups[1].nics.size() == 8);
  CHECK(full.shape.ring.n_channels == 16);  // test_channel_search: 8 x 45 -> 16 x 22.5
  CHECK(full.shape.ring.bw_inter_GBps == doctest::Approx(22.5));
  // Ranks 0, 1, 8, 9: GPUs 0-1 of each server use NICs 0-1. Search: 48 GB/s -> NVLink fits 7,
  // NICs 2 x 1 = 2 -> 96; 45 -> 90; ... 24 -> NICs 2 x 2 = 4 -> 96 (not better); 20 stops.
  // 2 x 48 duplicates to 4 x 24.
  const CommLayout part = make_layout(routes, {0, 1, 8, 9}, prm);
  REQUIRE(part.groups.size() == 2);
  CHECK(part.groups[0].nics == std::vector<int>{c.servers[0].nics[0], c.servers[0].nics[1]});
  CHECK(part.shape.ring.n_channels == 4);
  CHECK(part.shape.ring.bw_inter_GBps == doctest::Approx(24.0));
}

TEST_CASE("routes translated from the server template equal the graph's own routes") {
  const topo::Cluster c = load("dgx-h100-2node.yaml");
  const topo::ClusterGraph graph(c);
  RouteCache routes(graph);
  const topo::Server& s1 = c.servers[1];
  const int pairs[][2] = {{s1.gpus[0], s1.gpus[5]},
                          {s1.gpus[3], s1.nics[3]},
                          {s1.nics[6], s1.gpus[1]},
                          {s1.gpus[7], s1.gpus[2]}};
  for (const auto& p : pairs) {
    (void)routes.route(c.servers[0].gpus[0], c.servers[0].gpus[1]);  // warm the template cache
    const CachedRoute cached = routes.route(p[0], p[1]);
    const topo::Route direct = graph.route(p[0], p[1]);
    CHECK(cached.channels == direct.channels);
    CHECK(cached.latency == direct.latency);
  }
  CHECK_THROWS_AS(make_layout(routes, {0, 16}, nccl_priors(GpuArch::hopper)), InputError);
}
