// Fabric generators: which switches they create, which NIC lands on which leaf, how uplinks spread
// over spines, and the bandwidth of each layer, all derived by hand from the generator rules
// (topologies/README.md): a leaf of P ports at oversubscription r has floor(P r / (r + 1)) down
// ports; a leaf with a NICs gets ceil(a / r) uplinks; uplink g goes to spine g mod S with
// S = ceil(uplinks / P); parallel leaf-spine ports become one link of summed bandwidth.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "fabric_fixtures.hpp"
#include "topology/graph.hpp"

using namespace cs::topo;

using namespace cs::topo::testing;

TEST_CASE("single_switch: every NIC on one switch") {
  const Cluster c = load_fabric(3, 2, "  kind: single_switch\n");
  CHECK(c.fabric.kind == "single_switch");
  REQUIRE(c.fabric.leaves.size() == 1);
  CHECK(name_of(c, c.fabric.leaves[0]) == "switch");
  CHECK(c.fabric.spines.empty());
  const auto cabling = nic_switch(c);
  CHECK(cabling.size() == 6);  // 3 servers x 2 NICs
  for (const auto& [nic, sw] : cabling) CHECK(sw == "switch");
  CHECK(leaf_spine_links(c).empty());
}

TEST_CASE("fat_tree at 1:1: 12 NICs on 8-port leaves") {
  // down = floor(8 x 1 / 2) = 4 -> 12 / 4 = 3 leaves of 4 NICs, 4 uplinks each = 12 uplinks;
  // spines = ceil(12 / 8) = 2. Leaf k's uplinks 4k .. 4k+3 alternate spine 0, 1, 0, 1, so each
  // leaf meets each spine with 2 ports: 6 links of 2 x 12.5 = 25 GB/s.
  const Cluster c = load_fabric(6, 2, "  kind: fat_tree\n  leaf_ports: 8\n");
  CHECK(c.fabric.kind == "fat_tree");
  CHECK(c.fabric.leaf_ports == 8);
  CHECK(c.fabric.oversubscription == 1.0);
  CHECK(c.fabric.leaves.size() == 3);
  CHECK(c.fabric.spines.size() == 2);
  // NICs fill leaves in server order: servers 0-1 on leaf0, 2-3 on leaf1, 4-5 on leaf2.
  const auto cabling = nic_switch(c);
  CHECK(cabling.at("n0/nic0") == "leaf0");
  CHECK(cabling.at("n1/nic1") == "leaf0");
  CHECK(cabling.at("n2/nic0") == "leaf1");
  CHECK(cabling.at("n5/nic1") == "leaf2");
  const auto up = leaf_spine_links(c);
  REQUIRE(up.size() == 6);
  for (const auto& l : up) {
    CHECK(l.bandwidth_Bps == doctest::Approx(2 * kPort_Bps));
    CHECK(l.label == "Ethernet 100Gbps x2");
  }
  CHECK(up[0].leaf == "leaf0");
  CHECK(up[0].spine == "spine0");
  CHECK(up[1].spine == "spine1");
  // Per layer: 12 NIC ports x 12.5 = 150 GB/s down, 6 x 25 = 150 GB/s up: non-blocking.
  CHECK(cabling.size() * kPort_Bps == doctest::Approx(150e9));
  CHECK(sum_bandwidth(up) == doctest::Approx(150e9));
}

TEST_CASE("fat_tree at 3:1: fewer, fuller leaves with a third of the uplink bandwidth") {
  // down = floor(8 x 3 / 4) = 6 -> 12 / 6 = 2 leaves; uplinks ceil(6 / 3) = 2 each = 4;
  // spines = ceil(4 / 8) = 1; each leaf: one link of 2 ports = 25 GB/s.
  const Cluster c = load_fabric(6, 2, "  kind: fat_tree\n  leaf_ports: 8\n  oversubscription: 3\n");
  CHECK(c.fabric.leaves.size() == 2);
  CHECK(c.fabric.spines.size() == 1);
  const auto up = leaf_spine_links(c);
  REQUIRE(up.size() == 2);
  CHECK(up[0].bandwidth_Bps == doctest::Approx(25e9));
  // Per leaf: 6 x 12.5 = 75 GB/s down against 25 GB/s up = 3:1.
  CHECK(6 * kPort_Bps / up[0].bandwidth_Bps == doctest::Approx(3.0));
}

TEST_CASE("fat_tree with a partly filled last leaf keeps its ratio and balances the spines") {
  // 10 NICs, down 4: leaves of 4, 4, 2 NICs with 4, 4, 2 uplinks = 10; spines = ceil(10/8) = 2.
  // Uplinks 0-3 (leaf0): spines 0,1,0,1; 4-7 (leaf1): 0,1,0,1; 8-9 (leaf2): 0,1.
  const Cluster c = load_fabric(5, 2, "  kind: fat_tree\n  leaf_ports: 8\n");
  CHECK(c.fabric.leaves.size() == 3);
  CHECK(c.fabric.spines.size() == 2);
  const auto up = leaf_spine_links(c);
  REQUIRE(up.size() == 6);
  CHECK(up[4].leaf == "leaf2");
  CHECK(up[4].bandwidth_Bps == doctest::Approx(kPort_Bps));
  CHECK(up[4].label == "Ethernet 100Gbps");
  std::map<std::string, double> spine_ports;
  for (const auto& l : up) spine_ports[l.spine] += l.bandwidth_Bps / kPort_Bps;
  CHECK(spine_ports["spine0"] == doctest::Approx(5));  // 2 + 2 + 1 ports
  CHECK(spine_ports["spine1"] == doctest::Approx(5));
}

TEST_CASE("fat_tree with more spines than needed spreads each leaf over all of them") {
  // 3 leaves x 4 uplinks = 12; spines: 4 -> leaf k's uplinks land on spines 0..3 once each:
  // 12 single-port links of 12.5 GB/s.
  const Cluster c = load_fabric(6, 2, "  kind: fat_tree\n  leaf_ports: 8\n  spines: 4\n");
  CHECK(c.fabric.spines.size() == 4);
  const auto up = leaf_spine_links(c);
  CHECK(up.size() == 12);
  for (const auto& l : up) CHECK(l.bandwidth_Bps == doctest::Approx(kPort_Bps));
  CHECK(sum_bandwidth(up) == doctest::Approx(150e9));
}

TEST_CASE("fat_tree whose NICs fit on one leaf has no spines") {
  // 2 servers x 2 NICs = 4 = down ports of one 8-port leaf.
  const Cluster c = load_fabric(2, 2, "  kind: fat_tree\n  leaf_ports: 8\n");
  CHECK(c.fabric.leaves.size() == 1);
  CHECK(c.fabric.spines.empty());
  CHECK(leaf_spine_links(c).empty());
  CHECK(nic_switch(c).size() == 4);
}

TEST_CASE("explicit spines beyond a leaf's uplinks would split the fabric and are refused") {
  // 3 leaves x 4 uplinks over 5 spines: leaf0 reaches spines 0-3 and never spine 4. With more
  // leaves such gaps split the leaves into groups that share no spine, so it is refused.
  CHECK_THROWS_WITH_AS(load_fabric(6, 2, "  kind: fat_tree\n  leaf_ports: 8\n  spines: 5\n"),
                       doctest::Contains("a leaf has at most 4 uplinks"), cs::InputError);
}

TEST_CASE("rail_optimized: NIC i of every server on rail i's leaf, rails joined by a spine") {
  // 3 servers x 2 NICs; 8-port leaves at 1:1 have 4 down ports, so each rail (3 NICs) fits one
  // leaf: leaf0 = rail 0, leaf1 = rail 1, each with ceil(3 / 1) = 3 uplinks; 6 uplinks -> 1 spine,
  // one link of 3 ports = 37.5 GB/s per leaf.
  const Cluster c = load_fabric(3, 2, "  kind: rail_optimized\n  leaf_ports: 8\n");
  CHECK(c.fabric.kind == "rail_optimized");
  CHECK(c.fabric.leaves.size() == 2);
  CHECK(c.fabric.spines.size() == 1);
  const auto cabling = nic_switch(c);
  for (int s = 0; s < 3; ++s) {
    CHECK(cabling.at("n" + std::to_string(s) + "/nic0") == "leaf0");
    CHECK(cabling.at("n" + std::to_string(s) + "/nic1") == "leaf1");
  }
  const auto up = leaf_spine_links(c);
  REQUIRE(up.size() == 2);
  CHECK(up[0].bandwidth_Bps == doctest::Approx(3 * kPort_Bps));
  CHECK(up[0].label == "Ethernet 100Gbps x3");
  // Per layer: 6 x 12.5 = 75 GB/s of NIC ports, 2 x 37.5 = 75 GB/s into the spine.
  CHECK(sum_bandwidth(up) == doctest::Approx(6 * kPort_Bps));
}

TEST_CASE("rail_optimized with more servers than a leaf's down ports: several leaves per rail") {
  // 5 servers, down 4: rail 0 -> leaf0 (n0-n3), leaf1 (n4); rail 1 -> leaf2, leaf3. Uplinks
  // 4, 1, 4, 1 = 10 -> 2 spines. leaf0: uplinks 0-3 -> spines 0,1,0,1 (2 + 2 ports); leaf1:
  // uplink 4 -> spine 0; leaf2: 5-8 -> spines 1,0,1,0 (2 + 2); leaf3: uplink 9 -> spine 1.
  const Cluster c = load_fabric(5, 2, "  kind: rail_optimized\n  leaf_ports: 8\n");
  CHECK(c.fabric.leaves.size() == 4);
  CHECK(c.fabric.spines.size() == 2);
  const auto cabling = nic_switch(c);
  CHECK(cabling.at("n3/nic0") == "leaf0");
  CHECK(cabling.at("n4/nic0") == "leaf1");
  CHECK(cabling.at("n0/nic1") == "leaf2");
  CHECK(cabling.at("n4/nic1") == "leaf3");
  const auto up = leaf_spine_links(c);
  REQUIRE(up.size() == 6);
  CHECK(up[2].leaf == "leaf1");
  CHECK(up[2].spine == "spine0");
  CHECK(up[3].leaf == "leaf2");
  CHECK(up[3].spine == "spine1");
  CHECK(up[5].leaf == "leaf3");
  CHECK(up[5].spine == "spine1");
  CHECK(sum_bandwidth(up) == doctest::Approx(10 * kPort_Bps));
}

TEST_CASE("fabric switch names collide with hand-written nodes only by mistake") {
  // A top-level node named like a generated switch is a duplicate, reported at that node.
  const std::string text =
      "gpu_models: {G: {bf16: 1TFLOPS, fp16: 1TFLOPS, fp32: 1TFLOPS, memory: 1GB, "
      "memory_bandwidth: 1TB/s}}\n"
      "servers: {s: {nodes: [{name: gpu, kind: gpu, model: G}, {name: nic, kind: nic}],\n"
      "              links: [{from: gpu, to: nic, type: pcie, generation: 5}]}}\n"
      "cluster: [{server: s, count: 2}]\n"
      "fabric: {kind: single_switch, link: {type: infiniband, rate: NDR}}\n"
      "nodes: [{name: switch, kind: switch}]\n";
  CHECK_THROWS_WITH_AS(load_cluster_from_string(text, "x.yaml"),
                       doctest::Contains("x.yaml:6: key 'name': duplicate node name 'switch'"),
                       cs::InputError);
}

TEST_CASE(
    "fat_tree with levels 3: pods of leaves and spines, spine j of every pod on core group j") {
  // 8 servers x 1 NIC, 4-port switches at 1:1: leaves of 2 down + 2 up ports -> leaf0-3, 2 NICs
  // each. Pods of leaf_ports / 2 = 2 leaves: {leaf0, leaf1}, {leaf2, leaf3}. A pod's 4 uplinks
  // over spines of 2 down ports -> 2 spines per pod (spine0-1, spine2-3), each leaf one port to
  // each. A spine got 2 ports down, so it has 2 up. Core group 0 = {spine0, spine2}: 4 uplinks
  // over 4-port cores -> core0, 2 ports from each spine; group 1 -> core1.
  const Cluster c = load_fabric(8, 1, "  kind: fat_tree\n  leaf_ports: 4\n  levels: 3\n");
  CHECK(c.fabric.levels == 3);
  CHECK(c.fabric.pods == 2);
  CHECK(c.fabric.leaves.size() == 4);
  CHECK(c.fabric.spines.size() == 4);
  REQUIRE(c.fabric.cores.size() == 2);
  std::map<std::string, double> ports;  // "a-b" -> parallel ports
  for (const auto& l : leaf_spine_links(c))
    ports[l.leaf + "-" + l.spine] = l.bandwidth_Bps / kPort_Bps;
  const std::map<std::string, double> expected = {
      {"leaf0-spine0", 1}, {"leaf0-spine1", 1}, {"leaf1-spine0", 1}, {"leaf1-spine1", 1},
      {"leaf2-spine2", 1}, {"leaf2-spine3", 1}, {"leaf3-spine2", 1}, {"leaf3-spine3", 1},
      {"spine0-core0", 2}, {"spine2-core0", 2}, {"spine1-core1", 2}, {"spine3-core1", 2}};
  CHECK(ports == expected);
  // Every layer carries the NICs' 8 x 12.5 = 100 GB/s: the tree is non-blocking.
  CHECK(sum_bandwidth(leaf_spine_links(c)) == doctest::Approx(200e9));
}

TEST_CASE("rail_optimized with levels 3: a pod holds the rail leaves of the same servers") {
  // 4 servers x 2 NICs, 2 down ports: rail 0 -> leaf0 (n0, n1), leaf1 (n2, n3); rail 1 -> leaf2
  // (n0, n1), leaf3 (n2, n3). Pods of 2 leaves = 1 leaf per rail: {leaf0, leaf2} serve n0-n1,
  // {leaf1, leaf3} serve n2-n3, so rail 0 to rail 1 of n0 and n1 stays inside pod 0.
  const Cluster c = load_fabric(4, 2, "  kind: rail_optimized\n  leaf_ports: 4\n  levels: 3\n");
  CHECK(c.fabric.pods == 2);
  std::map<std::string, double> ports;
  for (const auto& l : leaf_spine_links(c))
    ports[l.leaf + "-" + l.spine] = l.bandwidth_Bps / kPort_Bps;
  CHECK(ports.count("leaf0-spine0") == 1);
  CHECK(ports.count("leaf2-spine0") == 1);
  CHECK(ports.count("leaf1-spine2") == 1);
  CHECK(ports.count("leaf3-spine3") == 1);
  CHECK(ports.count("leaf1-spine0") == 0);
  CHECK(c.fabric.cores.size() == 2);
}

TEST_CASE("a three-level fabric holds at most leaf_ports pods, and pods need levels 3") {
  // 20 servers x 1 NIC on 4-port switches: 10 leaves -> 5 pods; core group 0 has 5 spines x 2
  // uplinks = 10 -> 3 cores, more than a spine's 2 uplinks reach.
  CHECK_THROWS_WITH_AS(load_fabric(20, 1, "  kind: fat_tree\n  leaf_ports: 4\n  levels: 3\n"),
                       doctest::Contains("5 pods of 2 leaves are more than one core layer of "
                                         "4-port switches can join (at most 4 pods)"),
                       cs::InputError);
  CHECK_THROWS_WITH_AS(load_fabric(4, 1, "  kind: fat_tree\n  leaf_ports: 4\n  pod_leaves: 2\n"),
                       doctest::Contains("pods exist only in a three-level fabric"),
                       cs::InputError);
}

TEST_CASE(
    "three levels: NIC-to-NIC routes go up only as far as needed, spread over spines and cores") {
  // The 8-server tree above: n0-n1 share leaf0, n0-n3 share pod 0, n0-n7 cross pods. Up-down
  // paths: same leaf 2 hops (NIC-leaf-NIC), same pod 4, across pods 6 (through a core).
  const Cluster c = load_fabric(8, 1, "  kind: fat_tree\n  leaf_ports: 4\n  levels: 3\n");
  const ClusterGraph graph(c);
  auto nic = [&](int server) { return c.find_node("n" + std::to_string(server) + "/nic0"); };
  std::map<int, int> hops_to;  // server -> hops from n0
  std::set<std::string> cores_used;
  for (int src = 0; src < 8; ++src) {
    for (int dst = 0; dst < 8; ++dst) {
      if (src == dst) continue;
      const Route r = graph.route(nic(src), nic(dst));
      // A chain from src to dst.
      REQUIRE(!r.channels.empty());
      CHECK(graph.channel(r.channels.front()).from == nic(src));
      CHECK(graph.channel(r.channels.back()).to == nic(dst));
      for (std::size_t k = 1; k < r.channels.size(); ++k) {
        CHECK(graph.channel(r.channels[k]).from == graph.channel(r.channels[k - 1]).to);
      }
      if (src == 0) hops_to[dst] = r.hops();
      for (ChannelId ch : r.channels) {
        const std::string& name = name_of(c, graph.channel(ch).to);
        if (name.rfind("core", 0) == 0) cores_used.insert(name);
      }
    }
  }
  CHECK(hops_to == std::map<int, int>{{1, 2}, {2, 4}, {3, 4}, {4, 6}, {5, 6}, {6, 6}, {7, 6}});
  CHECK(cores_used == std::set<std::string>{"core0", "core1"});
}

TEST_CASE(
    "three levels with a partly filled last pod: one spine per uplink there, still connected") {
  // 9 servers x 1 NIC, 4-port switches: leaves of 2, 2, 2, 2, 1 NICs with 2, 2, 2, 2, 1 uplinks;
  // pods {leaf0, leaf1}, {leaf2, leaf3}, {leaf4}. Full pods: 4 uplinks -> 2 spines; the last pod
  // has 1 uplink -> 1 spine (spine4). Core group 0 = spines 0, 2, 4 with 2 + 2 + 1 uplinks -> 2
  // cores; group 1 = spines 1, 3 with 4 -> 1 core.
  const Cluster c = load_fabric(9, 1, "  kind: fat_tree\n  leaf_ports: 4\n  levels: 3\n");
  CHECK(c.fabric.pods == 3);
  CHECK(c.fabric.spines.size() == 5);
  CHECK(c.fabric.cores.size() == 3);
  const ClusterGraph graph(c);
  CHECK(graph.gpus_connected());
  CHECK(graph.route(c.find_node("n0/nic0"), c.find_node("n8/nic0")).hops() == 6);
}
