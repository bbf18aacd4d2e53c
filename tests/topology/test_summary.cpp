// The topology summary on clusters built in code: nvidia-smi classes on a hand-built PCIe server,
// bisection bandwidth and per-GPU bandwidth derived by hand, and the matrix layout rules.
#include <doctest/doctest.h>

#include "test_graph_fixtures.hpp"
#include "topology/summary.hpp"

namespace cs::topo {
namespace {

std::string connection(const ClusterGraph& g, const std::string& a, const std::string& b) {
  const int na = g.cluster().find_node(a);
  const int nb = g.cluster().find_node(b);
  REQUIRE(na >= 0);
  REQUIRE(nb >= 0);
  return to_string(classify_connection(g, na, nb));
}

}  // namespace

TEST_CASE("matrix classes on a hand-built PCIe server (see the drawing in pcie_server())") {
  const Cluster cluster = testing::pcie_server();
  const ClusterGraph g(cluster);
  CHECK(connection(g, "box/gpu0", "box/gpu0") == "X");
  CHECK(connection(g, "box/gpu0", "box/gpu1") == "PIX");
  CHECK(connection(g, "box/gpu0", "box/gpu2") == "PXB");
  CHECK(connection(g, "box/gpu0", "box/gpu3") == "PHB");
  CHECK(connection(g, "box/gpu0", "box/gpu4") == "SYS");
  CHECK(connection(g, "box/gpu3", "box/gpu5") == "SYS");
  CHECK(connection(g, "box/gpu4", "box/gpu5") == "NV4");
  CHECK(connection(g, "box/gpu5", "box/gpu4") == "NV4");
  // gpu0 -> pcie_a -> pcie_root -> cpu0 -> cpu1 -> pcie_d -> gpu4: five 100 ns PCIe hops plus the
  // 300 ns socket link = 800 ns; the 20 GB/s socket link is the bottleneck.
  const GpuConnection sys =
      classify_connection(g, cluster.find_node("box/gpu0"), cluster.find_node("box/gpu4"));
  CHECK(sys.hops == 6);
  CHECK(sys.latency == 800 * kPsPerNs);
  CHECK(sys.bandwidth_Bps == 20e9);
}

TEST_CASE("fat tree: NV18 inside a server, NET between servers") {
  const Cluster cluster = testing::small_fat_tree();
  const ClusterGraph g(cluster);
  CHECK(connection(g, "node0/gpu0", "node0/gpu7") == "NV18");
  CHECK(connection(g, "node0/gpu0", "node1/gpu0") == "NET");
  CHECK(connection(g, "node0/gpu0", "node7/gpu3") == "NET");
  // Same leaf: the NIC link is narrowest, 50 GB/s line rate, 50 x 0.96 = 48 GB/s achievable.
  const GpuConnection same_leaf =
      classify_connection(g, cluster.find_node("node0/gpu0"), cluster.find_node("node1/gpu0"));
  CHECK(same_leaf.line_rate_Bps == 50e9);
  CHECK(same_leaf.bandwidth_Bps == doctest::Approx(48e9));
}

TEST_CASE("bisection of the fat tree by hand") {
  // Halves: servers 0-3 (all under leaf0) and 4-7 (under leaf1). Every byte between them crosses
  // the 4 leaf0-spine links of 25 GB/s: 100 GB/s each way. Each half injects 4 NICs x 50 GB/s =
  // 200 GB/s, so the fabric delivers half of it (2:1 oversubscription).
  const Bisection b = compute_bisection(testing::small_fat_tree());
  CHECK(b.across_servers);
  CHECK(b.split == "servers 0-3 | servers 4-7");
  CHECK(b.gpus_a == 32);
  CHECK(b.gpus_b == 32);
  CHECK(b.a_to_b_Bps == 100e9);
  CHECK(b.b_to_a_Bps == 100e9);
  CHECK(b.injection_a_Bps == 200e9);
  CHECK(b.injection_b_Bps == 200e9);
}

TEST_CASE("bisection inside one server by hand") {
  // Halves: gpu0-2 (all below pcie_root) and gpu3-5. Every byte from A leaves pcie_root on its
  // one 32 GB/s link to cpu0; past cpu0 there is more room (pcie_c 32 + socket 20 = 52 GB/s), so
  // the cut is that link: 32 GB/s each way.
  const Bisection b = compute_bisection(testing::pcie_server());
  CHECK_FALSE(b.across_servers);
  CHECK(b.split == "box: GPUs 0-2 | GPUs 3-5");
  CHECK(b.a_to_b_Bps == 32e9);
  CHECK(b.b_to_a_Bps == 32e9);
}

TEST_CASE("summary: groups, per-GPU bandwidth and the truncated matrix") {
  const Cluster cluster = testing::small_fat_tree();
  const ClusterGraph g(cluster);
  const TopologySummary s = summarize(g);
  CHECK(s.gpu_count == 64);
  REQUIRE(s.servers.size() == 1);
  CHECK(s.servers[0].count == 8);
  CHECK(s.servers[0].gpus_per_server == 8);
  CHECK(s.fabric_switches == 6);  // 2 leaves + 4 spines
  // Per GPU: one NVLink x18 link (450 GB/s), one PCIe link (64 GB/s), and 50 GB/s of NIC per
  // server shared by 8 GPUs = 6.25 GB/s.
  REQUIRE(s.per_gpu.size() == 1);
  CHECK(s.per_gpu[0].nvlink_Bps == 450e9);
  CHECK(s.per_gpu[0].pcie_Bps == 64e9);
  CHECK(s.per_gpu[0].network_Bps == 6.25e9);
  // Links: 8 leaf-spine (25 GB/s), 8 NIC-leaf (50 GB/s), 64 NVLink, 64 + 8 PCIe.
  int nvlink = 0, pcie = 0, ib = 0;
  for (const LinkGroup& l : s.links) {
    if (l.kind == LinkKind::nvlink) nvlink += l.count;
    if (l.kind == LinkKind::pcie) pcie += l.count;
    if (l.kind == LinkKind::infiniband) ib += l.count;
    if (l.label == "InfiniBand NDR") CHECK(l.bandwidth_Bps == 8 * 50e9);
  }
  CHECK(nvlink == 64);
  CHECK(pcie == 72);
  CHECK(ib == 16);
  // 64 GPUs > 16: the first server's 8 x 8 block, then rank 0 against node7's GPUs.
  CHECK(s.matrix_truncated);
  REQUIRE(s.matrices.size() == 2);
  CHECK(s.matrices[0].cells.size() == 8);
  CHECK(s.matrices[0].cells[0].size() == 8);
  REQUIRE(s.matrices[1].cells.size() == 1);
  CHECK(s.matrices[1].columns == cluster.servers[7].gpus);
  for (const GpuConnection& c : s.matrices[1].cells[0]) {
    CHECK(c.type == ConnectionType::net);
    CHECK(c.bandwidth_Bps == 25e9);
  }
  CHECK(format_summary(s, cluster) == format_summary(summarize(g), cluster));
}

TEST_CASE("summary: small clusters show every GPU pair") {
  const Cluster cluster = testing::pcie_server();
  const TopologySummary s = summarize(ClusterGraph(cluster));
  CHECK_FALSE(s.matrix_truncated);
  REQUIRE(s.matrices.size() == 1);
  CHECK(s.matrices[0].rows == cluster.ranks);
  CHECK(s.matrices[0].columns == cluster.ranks);
  const std::string text = format_summary(s, cluster);
  CHECK(text.find("NV4") != std::string::npos);
  CHECK(text.find("PXB") != std::string::npos);
}

}  // namespace cs::topo
