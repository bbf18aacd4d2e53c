// Multi-plane fabrics (`planes: P`): P identical copies of the generated switches, every NIC with
// one port on each, and routes that keep to the plane asked for. Expected shapes derived by hand
// from the generator rules (topologies/README.md), as in test_fabric.cpp.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "topology/fabric_fixtures.hpp"
#include "topology/graph.hpp"

using namespace cs::topo;
using namespace cs::topo::testing;

namespace {

// The plane prefix of a switch name ("plane1.leaf0" -> "plane1."), "" for any other node.
std::string plane_of(const std::string& name) {
  const auto dot = name.find('.');
  return name.rfind("plane", 0) == 0 && dot != std::string::npos ? name.substr(0, dot + 1) : "";
}

// The planes whose switches a route crosses.
std::set<std::string> planes_crossed(const Cluster& c, const ClusterGraph& graph, const Route& r) {
  std::set<std::string> out;
  for (ChannelId ch : r.channels) {
    const std::string p = plane_of(name_of(c, graph.channel(ch).to));
    if (!p.empty()) out.insert(p);
  }
  return out;
}

}  // namespace

TEST_CASE("planes: every NIC has a port on each plane, and each plane is the one-plane fabric") {
  // 4 servers x 1 NIC, 4-port switches at 1:1, 2 planes. One plane as in test_fabric.cpp: leaves
  // of 2 down ports (n0, n1 -> leaf0; n2, n3 -> leaf1), 2 uplinks each, 4 uplinks over 4-port
  // spines -> spine0 with 2 ports from each leaf. Two planes: every switch twice, prefixed.
  const Cluster c = load_fabric(4, 1, "  kind: fat_tree\n  leaf_ports: 4\n  planes: 2\n");
  CHECK(c.fabric.planes == 2);
  CHECK(c.fabric.levels == 2);
  std::set<std::string> switches;
  for (const auto& n : c.nodes) {
    if (n.kind == NodeKind::network_switch) switches.insert(n.name);
  }
  CHECK(switches == std::set<std::string>{"plane0.leaf0", "plane0.leaf1", "plane0.spine0",
                                          "plane1.leaf0", "plane1.leaf1", "plane1.spine0"});
  std::map<std::string, std::set<std::string>> cabling;  // NIC -> its leaves
  for (const auto& l : c.links) {
    if (c.nodes[static_cast<std::size_t>(l.a)].kind == NodeKind::nic &&
        c.nodes[static_cast<std::size_t>(l.b)].kind == NodeKind::network_switch) {
      cabling[name_of(c, l.a)].insert(name_of(c, l.b));
      CHECK(l.bandwidth_Bps == kPort_Bps);  // each port at the link's speed
    }
  }
  CHECK(cabling["n0/nic0"] == std::set<std::string>{"plane0.leaf0", "plane1.leaf0"});
  CHECK(cabling["n3/nic0"] == std::set<std::string>{"plane0.leaf1", "plane1.leaf1"});
  // Switch links never join two planes; each plane carries 2 leaves x 2 ports.
  for (const auto& l : leaf_spine_links(c)) CHECK(plane_of(l.leaf) == plane_of(l.spine));
  CHECK(sum_bandwidth(leaf_spine_links(c)) == doctest::Approx(2 * 4 * kPort_Bps));
}

TEST_CASE("planes: a route keeps to the plane asked for, or to one plane chosen for the pair") {
  const Cluster c = load_fabric(4, 1, "  kind: fat_tree\n  leaf_ports: 4\n  planes: 2\n");
  const ClusterGraph graph(c);
  const int a = c.find_node("n0/nic0");
  const int b = c.find_node("n3/nic0");
  for (int p = 0; p < 2; ++p) {
    const Route r = graph.route(a, b, p);
    CHECK(r.hops() == 4);  // NIC - leaf0 - spine0 - leaf1 - NIC
    CHECK(planes_crossed(c, graph, r) == std::set<std::string>{"plane" + std::to_string(p) + "."});
    // GPU to GPU as well: through the server's PCIe to the NIC, then the plane.
    const Route g = graph.route(c.find_node("n0/gpu"), c.find_node("n3/gpu"), p);
    CHECK(planes_crossed(c, graph, g) == std::set<std::string>{"plane" + std::to_string(p) + "."});
  }
  CHECK(planes_crossed(c, graph, graph.route(a, b, 3)) == std::set<std::string>{"plane1."});
  CHECK(planes_crossed(c, graph, graph.route(a, b)).size() == 1);  // no plane given: one of them
}

TEST_CASE("planes with three levels: up-down routes inside each plane, as deep as needed") {
  // Each plane is the 8-server, 4-port three-level tree of test_fabric.cpp: 4 leaves, 4 spines in
  // 2 pods, 2 cores; from n0: n1 on its leaf (2 hops), n2-n3 in its pod (4), n4-n7 across (6).
  const Cluster c =
      load_fabric(8, 1, "  kind: fat_tree\n  leaf_ports: 4\n  levels: 3\n  planes: 2\n");
  CHECK(c.fabric.pods == 2);
  CHECK(c.fabric.leaves.size() == 8);
  CHECK(c.fabric.spines.size() == 8);
  CHECK(c.fabric.cores.size() == 4);
  const ClusterGraph graph(c);
  auto nic = [&](int server) { return c.find_node("n" + std::to_string(server) + "/nic0"); };
  for (int p = 0; p < 2; ++p) {
    std::map<int, int> hops_to;
    for (int dst = 1; dst < 8; ++dst) {
      const Route r = graph.route(nic(0), nic(dst), p);
      hops_to[dst] = r.hops();
      CHECK(graph.channel(r.channels.front()).from == nic(0));
      CHECK(graph.channel(r.channels.back()).to == nic(dst));
      CHECK(planes_crossed(c, graph, r) ==
            std::set<std::string>{"plane" + std::to_string(p) + "."});
    }
    CHECK(hops_to == std::map<int, int>{{1, 2}, {2, 4}, {3, 4}, {4, 6}, {5, 6}, {6, 6}, {7, 6}});
  }
}

TEST_CASE("planes: at least 1 and at most 16") {
  CHECK_THROWS_WITH_AS(load_fabric(2, 1, "  kind: single_switch\n  planes: 0\n"),
                       doctest::Contains("key 'planes'"), cs::InputError);
  CHECK_THROWS_WITH_AS(load_fabric(2, 1, "  kind: single_switch\n  planes: 17\n"),
                       doctest::Contains("key 'planes'"), cs::InputError);
  const Cluster c = load_fabric(2, 1, "  kind: single_switch\n  planes: 4\n");
  CHECK(c.fabric.leaves.size() == 4);  // one switch per plane
}
