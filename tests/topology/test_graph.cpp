// Routes on clusters built in code: paths, latency and bottleneck derived by hand, the hop-count
// tie-break, ECMP spreading across fat-tree spines, determinism, and the transit rules.
#include <doctest/doctest.h>

#include <map>

#include "test_graph_fixtures.hpp"
#include "topology/graph.hpp"

namespace cs::topo {
namespace {

std::vector<std::string> route_nodes(const ClusterGraph& g, const Route& r) {
  std::vector<std::string> names;
  if (r.channels.empty()) return names;
  names.push_back(g.cluster().nodes[static_cast<std::size_t>(g.channel(r.channels[0]).from)].name);
  for (ChannelId c : r.channels) {
    names.push_back(g.cluster().nodes[static_cast<std::size_t>(g.channel(c).to)].name);
  }
  return names;
}

int node(const Cluster& c, const std::string& name) {
  const int id = c.find_node(name);
  REQUIRE(id >= 0);
  return id;
}

}  // namespace

TEST_CASE("channels: link l becomes channels 2l (a->b) and 2l+1 (b->a)") {
  const Cluster cluster = testing::small_fat_tree();
  const ClusterGraph g(cluster);
  CHECK(g.channel_count() == 2 * static_cast<int>(cluster.links.size()));
  for (int l = 0; l < static_cast<int>(cluster.links.size()); ++l) {
    const Link& link = cluster.links[static_cast<std::size_t>(l)];
    CHECK(g.channel(2 * l).from == link.a);
    CHECK(g.channel(2 * l).to == link.b);
    CHECK(g.channel(2 * l + 1).from == link.b);
    CHECK(g.channel(2 * l + 1).to == link.a);
    CHECK(g.capacity_Bps(2 * l) == link.effective_bandwidth_Bps());
  }
}

TEST_CASE("route inside a server takes NVLink through the NVSwitch") {
  const Cluster cluster = testing::small_fat_tree();
  const ClusterGraph g(cluster);
  const Route r = g.route(node(cluster, "node0/gpu0"), node(cluster, "node0/gpu5"));
  // gpu0 -> nvswitch -> gpu5: 2 x 100 ns = 200 ns, beating PCIe's 2 x 150 ns.
  CHECK(route_nodes(g, r) ==
        std::vector<std::string>{"node0/gpu0", "node0/nvswitch", "node0/gpu5"});
  CHECK(r.latency == 200 * kPsPerNs);
  CHECK(r.bottleneck_Bps == 450e9);
}

TEST_CASE("route under one leaf and across the spines: latency and bottleneck by hand") {
  const Cluster cluster = testing::small_fat_tree();
  const ClusterGraph g(cluster);
  SUBCASE("same leaf") {
    // gpu-pcie 150 + pcie-nic 150 + nic-leaf 500, twice: 1600 ns over 6 hops; the NIC link at
    // 50 GB/s x 0.96 = 48 GB/s is the narrowest.
    const Route r = g.route(node(cluster, "node0/gpu2"), node(cluster, "node3/gpu7"));
    CHECK(route_nodes(g, r) == std::vector<std::string>{"node0/gpu2", "node0/pcie0", "node0/nic0",
                                                        "leaf0", "node3/nic0", "node3/pcie0",
                                                        "node3/gpu7"});
    CHECK(r.latency == 1600 * kPsPerNs);
    CHECK(r.bottleneck_Bps == doctest::Approx(48e9));
  }
  SUBCASE("across spines") {
    // 1600 ns + leaf-spine-leaf 2 x 600 ns = 2800 ns over 8 hops; leaf-spine 25 GB/s is narrowest.
    const Route r = g.route(node(cluster, "node1/gpu0"), node(cluster, "node6/gpu0"));
    CHECK(r.hops() == 8);
    CHECK(r.latency == 2800 * kPsPerNs);
    CHECK(r.bottleneck_Bps == 25e9);
    const auto names = route_nodes(g, r);
    CHECK(names[3] == "leaf0");
    CHECK(names[4].rfind("spine", 0) == 0);
    CHECK(names[5] == "leaf1");
  }
  SUBCASE("to itself") {
    const Route r = g.route(node(cluster, "node1/gpu0"), node(cluster, "node1/gpu0"));
    CHECK(r.hops() == 0);
    CHECK(r.latency == 0);
    CHECK(r.bottleneck_Bps == std::numeric_limits<double>::infinity());
  }
}

TEST_CASE("routes spread evenly over the spines and repeat exactly across graph builds") {
  const Cluster first = testing::small_fat_tree();
  const Cluster second = testing::small_fat_tree();
  const ClusterGraph g1(first);
  const ClusterGraph g2(second);
  std::map<std::string, int> pairs_per_spine;
  int pairs = 0;
  for (int a = 0; a < 32; ++a) {     // ranks 0-31: servers 0-3 under leaf0
    for (int b = 32; b < 64; ++b) {  // ranks 32-63: servers 4-7 under leaf1
      const int src = first.ranks[static_cast<std::size_t>(a)];
      const int dst = first.ranks[static_cast<std::size_t>(b)];
      const Route r1 = g1.route(src, dst);
      const Route r2 = g2.route(src, dst);
      REQUIRE(r1.channels == r2.channels);
      ++pairs_per_spine[route_nodes(g1, r1)[4]];
      ++pairs;
    }
  }
  // 32 x 32 = 1024 pairs over 4 spines: 256 each if even. A hash picks the spine, so the counts
  // are binomial (sd = sqrt(1024 * 1/4 * 3/4) ~ 13.9); +-64 is over four sd, while a broken spread
  // (say every pair on one spine, or only two spines used) falls far outside it.
  CHECK(pairs == 1024);
  REQUIRE(pairs_per_spine.size() == 4);
  for (const auto& [spine, count] : pairs_per_spine) {
    INFO(spine << " carries " << count);
    CHECK(count >= 192);
    CHECK(count <= 320);
  }
}

TEST_CASE("scratch reuse: a route does not depend on the queries before it") {
  const Cluster cluster = testing::small_fat_tree();
  const ClusterGraph g(cluster);
  std::vector<Route> forward;
  for (int r = 0; r < 64; r += 3)
    forward.push_back(g.route(cluster.ranks[0], cluster.ranks[static_cast<std::size_t>(r)]));
  int i = static_cast<int>(forward.size()) - 1;
  for (int r = 63 / 3 * 3; r >= 0; r -= 3, --i) {
    CHECK(g.route(cluster.ranks[0], cluster.ranks[static_cast<std::size_t>(r)]).channels ==
          forward[static_cast<std::size_t>(i)].channels);
  }
}

TEST_CASE("equal latency: the path with fewer hops wins (1 ps per hop)") {
  testing::ClusterBuilder b("tie");
  const int s = b.server("box");
  const int g0 = b.node("gpu0", NodeKind::gpu, s);
  const int x = b.node("pcie0", NodeKind::pcie_switch, s);
  const int g1 = b.node("gpu1", NodeKind::gpu, s);
  b.link(g0, x, LinkKind::pcie, "PCIe", 32e9, 100 * kPsPerNs);
  b.link(x, g1, LinkKind::pcie, "PCIe", 32e9, 100 * kPsPerNs);
  b.link(g0, g1, LinkKind::nvlink, "NVLink", 50e9, 200 * kPsPerNs);  // same 200 ns, one hop
  const Cluster cluster = b.take();
  const ClusterGraph g(cluster);
  const Route r = g.route(g0, g1);
  REQUIRE(r.hops() == 1);
  CHECK(g.link_of(r.channels[0]).kind == LinkKind::nvlink);
  CHECK(r.latency == 200 * kPsPerNs);
}

TEST_CASE("transit rules: no forwarding through a GPU or through a third server") {
  SUBCASE("a GPU is never a hop in the middle") {
    testing::ClusterBuilder b("gpu-transit");
    const int s = b.server("box");
    const int g0 = b.node("gpu0", NodeKind::gpu, s);
    const int g1 = b.node("gpu1", NodeKind::gpu, s);
    const int nic = b.node("nic0", NodeKind::nic, s);
    b.link(g0, g1, LinkKind::nvlink, "NVLink", 50e9, 100);
    b.link(g1, nic, LinkKind::pcie, "PCIe", 32e9, 100);
    const Cluster cluster = b.take();
    const ClusterGraph g(cluster);
    CHECK(g.route(g1, nic).hops() == 1);
    CHECK_THROWS_AS(g.route(g0, nic), InputError);
    CHECK(g.gpus_connected());
  }
  SUBCASE("servers cabled in a chain do not forward for each other") {
    testing::ClusterBuilder b("chain");
    int gpu[3];
    int nic[3];
    for (int i = 0; i < 3; ++i) {
      const int s = b.server("node" + std::to_string(i));
      gpu[i] = b.node("gpu0", NodeKind::gpu, s);
      nic[i] = b.node("nic0", NodeKind::nic, s);
      b.link(gpu[i], nic[i], LinkKind::pcie, "PCIe", 32e9, 100);
    }
    b.link(nic[0], nic[1], LinkKind::infiniband, "IB", 50e9, 1000);
    b.link(nic[1], nic[2], LinkKind::infiniband, "IB", 50e9, 1000);
    const Cluster cluster = b.take();
    const ClusterGraph g(cluster);
    CHECK(g.route(gpu[0], gpu[1]).hops() == 3);
    CHECK_THROWS_WITH_AS(g.route(gpu[0], gpu[2]),
                         doctest::Contains("no route from 'node0/gpu0' to 'node2/gpu0'"),
                         InputError);
  }
}

TEST_CASE("transit rules: a NIC endpoint in another server is reached through its network port") {
  // Two servers, each gpu0 and nic0, nic1 on one PCIe switch (100 ns hops); rail 0 joins the
  // nic0s on leaf0, rail 1 the nic1s on leaf1 (1 us hops); a spine joins the leaves (5 us hops).
  // nic0(a) -> nic1(b): through a's PCIe switch and nic1 would take 0.2 + 1 + 1 = 2.2 us, but
  // fabric traffic does not re-enter a host, so it climbs the spine: 1 + 5 + 5 + 1 = 12 us.
  // A GPU endpoint may still pick a NIC of its own server: gpu0(a) -> nic1(b) takes
  // gpu0 -> pcie -> nic1 -> leaf1 -> nic1(b) = 0.2 + 2 = 2.2 us.
  testing::ClusterBuilder b("rails");
  const int leaf0 = b.node("leaf0", NodeKind::network_switch);
  const int leaf1 = b.node("leaf1", NodeKind::network_switch);
  const int spine = b.node("spine", NodeKind::network_switch);
  b.link(leaf0, spine, LinkKind::infiniband, "IB", 50e9, 5 * kPsPerUs);
  b.link(leaf1, spine, LinkKind::infiniband, "IB", 50e9, 5 * kPsPerUs);
  int gpu[2];
  int nic0[2];
  int nic1[2];
  for (int i = 0; i < 2; ++i) {
    const int s = b.server(i == 0 ? "a" : "b");
    gpu[i] = b.node("gpu0", NodeKind::gpu, s);
    const int pcie = b.node("pcie0", NodeKind::pcie_switch, s);
    nic0[i] = b.node("nic0", NodeKind::nic, s);
    nic1[i] = b.node("nic1", NodeKind::nic, s);
    for (int end : {gpu[i], nic0[i], nic1[i]}) {
      b.link(end, pcie, LinkKind::pcie, "PCIe", 32e9, 100 * kPsPerNs);
    }
    b.link(nic0[i], leaf0, LinkKind::infiniband, "IB", 50e9, kPsPerUs);
    b.link(nic1[i], leaf1, LinkKind::infiniband, "IB", 50e9, kPsPerUs);
  }
  const Cluster cluster = b.take();
  const ClusterGraph g(cluster);
  CHECK(route_nodes(g, g.route(nic0[0], nic1[1])) ==
        std::vector<std::string>{"a/nic0", "leaf0", "spine", "leaf1", "b/nic1"});
  CHECK(g.route(nic0[0], nic1[1]).latency == 12 * kPsPerUs);
  CHECK(route_nodes(g, g.route(gpu[0], nic1[1])) ==
        std::vector<std::string>{"a/gpu0", "a/pcie0", "a/nic1", "leaf1", "b/nic1"});
  CHECK(g.route(gpu[0], nic1[1]).latency == 2200 * kPsPerNs);
  // Inside one server a NIC is an ordinary endpoint: nic0(a) -> nic1(a) through the PCIe switch.
  CHECK(g.route(nic0[0], nic1[0]).latency == 200 * kPsPerNs);
}

TEST_CASE("gpus_connected") {
  CHECK(ClusterGraph(testing::small_fat_tree()).gpus_connected());
  testing::ClusterBuilder b("islands");
  const int s0 = b.server("a");
  const int s1 = b.server("b");
  b.node("gpu0", NodeKind::gpu, s0);
  b.node("gpu0", NodeKind::gpu, s1);
  const Cluster cluster = b.take();
  CHECK_FALSE(ClusterGraph(cluster).gpus_connected());
}

}  // namespace cs::topo
