// The shipped topology files: each loads with the GPU, NIC and switch counts derived by hand from
// its hardware and the fabric generator's rules, and the DGX H100 and 128-node files have the
// bandwidths their sources give.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "topology/loader.hpp"

using namespace cs;
using namespace cs::topo;

namespace {

struct Shipped {
  const char* file;
  std::size_t gpus;
  std::size_t nics;
  std::size_t servers;
  const char* fabric;
  std::size_t leaves;
  std::size_t spines;
};

// GPU and NIC counts from each file's hardware; leaf/spine counts derived in test_fabric.cpp's
// rules: rail-optimized DGX H100 with 64-port leaves at 1:1 has 8 rails of one leaf each, and
// leaf k's uplinks = its NIC count; 2 and 4 nodes -> 16 and 32 uplinks -> 1 spine of 64 ports,
// 16 nodes -> 128 uplinks -> 2 spines. The fat tree: 1,024 NICs / 32 down ports = 32 leaves,
// 32 x 32 uplinks / 64 ports = 16 spines. The AWS instances' fat trees (64 ports, 1:1: 32 down)
// hold one instance's 4 or 32 EFA NICs on one leaf, which needs no spine. The A100 SuperPOD:
// 40-port HDR leaves at 1:1 take 20 servers per rail leaf, ceil(384 / 20) = 20 leaves x 8 rails =
// 160; pods of 8 leaves (one per rail) -> 20 pods, each with 8 x 20 uplinks / 20 down ports = 8
// spines -> 160.
const std::vector<Shipped> kShipped = {
    {"dgx-a100.yaml", 8, 8, 1, "", 0, 0},
    {"dgx-a100-superpod.yaml", 3072, 3072, 384, "rail_optimized", 160, 160},
    {"dgx-h100.yaml", 8, 8, 1, "", 0, 0},
    {"dgx-h200.yaml", 8, 8, 1, "", 0, 0},
    {"dgx-b200.yaml", 8, 8, 1, "", 0, 0},
    {"h200-4gpu.yaml", 4, 0, 1, "", 0, 0},
    {"aws-p4d.24xlarge.yaml", 8, 4, 1, "fat_tree", 1, 0},
    {"aws-p5.48xlarge.yaml", 8, 32, 1, "fat_tree", 1, 0},
    {"aws-g6e.48xlarge.yaml", 8, 4, 1, "fat_tree", 1, 0},
    {"azure-ndmv4.yaml", 16, 16, 2, "fat_tree", 1, 0},
    {"workstation-4gpu-pcie.yaml", 4, 0, 1, "", 0, 0},
    {"dgx-h100-2node.yaml", 16, 16, 2, "rail_optimized", 8, 1},
    {"dgx-h100-4node.yaml", 32, 32, 4, "rail_optimized", 8, 1},
    {"dgx-h100-16node.yaml", 128, 128, 16, "rail_optimized", 8, 2},
    {"dgx-h100-16node-100gbe.yaml", 128, 128, 16, "rail_optimized", 8, 2},
    {"dgx-h100-128node-fattree.yaml", 1024, 1024, 128, "fat_tree", 32, 16},
    {"dgx-h100-2048node-superpod.yaml", 16384, 16384, 2048, "rail_optimized", 512, 512},
    {"dgx-h100-2048node-2plane.yaml", 16384, 16384, 2048, "rail_optimized", 256, 128},
    {"dgx-h100-16384node-roce.yaml", 131072, 131072, 16384, "rail_optimized", 2048, 2048},
};

}  // namespace

TEST_CASE("every shipped topology loads with its GPU, NIC and switch counts") {
  const std::string dir = std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/";
  std::set<std::string> listed;
  for (const auto& s : kShipped) {
    CAPTURE(s.file);
    listed.insert(s.file);
    const Cluster c = load_cluster(dir + s.file);
    std::size_t nics = 0;
    for (const auto& server : c.servers) nics += server.nics.size();
    CHECK(c.ranks.size() == s.gpus);
    CHECK(nics == s.nics);
    CHECK(c.servers.size() == s.servers);
    CHECK(c.fabric.kind == s.fabric);
    CHECK(c.fabric.leaves.size() == s.leaves);
    CHECK(c.fabric.spines.size() == s.spines);
    for (const auto& l : c.links) {
      CHECK(l.bandwidth_Bps > 0);
      CHECK(l.efficiency > 0);
      CHECK(l.efficiency <= 1);
    }
  }
  std::set<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") on_disk.insert(entry.path().filename().string());
  }
  CHECK(on_disk == listed);
}

TEST_CASE("DGX H100: every GPU has NVLink4 x18 = 450 GB/s to the NVSwitch and one NIC per GPU") {
  const Cluster c = load_cluster(std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/dgx-h100.yaml");
  const int nvswitch = c.find_node("node0/nvswitch");
  REQUIRE(nvswitch >= 0);
  int nvlinks = 0;
  for (const auto& l : c.links) {
    if (l.kind != LinkKind::nvlink) continue;
    ++nvlinks;
    CHECK(l.b == nvswitch);
    CHECK(c.nodes[static_cast<std::size_t>(l.a)].kind == NodeKind::gpu);
    CHECK(l.label == "NVLink4 x18");
    CHECK(l.bandwidth_Bps == doctest::Approx(450e9));  // 18 x 25 GB/s
  }
  CHECK(nvlinks == 8);
  // PCIe Gen5 x16: 32 GT/s x 16 x 128/130 / 8 = 63.015 GB/s.
  CHECK(c.links[8].label == "PCIe Gen5 x16");
  CHECK(c.links[8].bandwidth_Bps == doctest::Approx(63.015e9).epsilon(1e-4));
}

TEST_CASE("DGX B200: the B200's datasheet figures and NVLink5 x18 = 900 GB/s to the NVSwitch") {
  const Cluster c = load_cluster(std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/dgx-b200.yaml");
  // Per GPU from the HGX B200 / DGX B200 figures for 8 GPUs: BF16 = FP16 tensor 36 PFLOPS sparse
  // -> 4.5 sparse -> 2.25 PFLOPS dense; FP32 600 / 8 = 75 TFLOPS; 1,440 / 8 = 180 GB; 64 / 8 =
  // 8 TB/s.
  REQUIRE(c.gpu_models.size() == 1);
  const GpuModel& m = c.gpu_models[0];
  CHECK(m.name == "B200-SXM-180GB");
  CHECK(m.bf16_flops == doctest::Approx(2250e12));
  CHECK(m.fp16_flops == doctest::Approx(2250e12));
  CHECK(m.fp32_flops == doctest::Approx(75e12));
  CHECK(m.memory_bytes == doctest::Approx(180e9));
  CHECK(m.memory_bandwidth_Bps == doctest::Approx(8e12));
  const int nvswitch = c.find_node("node0/nvswitch");
  REQUIRE(nvswitch >= 0);
  int nvlinks = 0;
  for (const auto& l : c.links) {
    if (l.kind != LinkKind::nvlink) continue;
    ++nvlinks;
    CHECK(l.b == nvswitch);
    CHECK(l.label == "NVLink5 x18");
    CHECK(l.bandwidth_Bps == doctest::Approx(900e9));  // 18 x 50 GB/s: 1.8 TB/s both ways
  }
  CHECK(nvlinks == 8);
}

TEST_CASE("the 128-node fat tree: per-layer bandwidth is equal at 1:1") {
  const Cluster c = load_cluster(std::string(CLUSTERSIM_SOURCE_DIR) +
                                 "/topologies/dgx-h100-128node-fattree.yaml");
  // NIC layer: 1,024 NDR ports x 50 GB/s = 51.2 TB/s. Leaf-spine layer: each of 32 leaves has 32
  // uplinks spread over 16 spines, 2 per spine: 32 x 16 links of 2 x 50 = 100 GB/s = 51.2 TB/s.
  double nic_layer = 0;
  double spine_layer = 0;
  int spine_links = 0;
  for (const auto& l : c.links) {
    const Node& a = c.nodes[static_cast<std::size_t>(l.a)];
    const Node& b = c.nodes[static_cast<std::size_t>(l.b)];
    if (a.kind == NodeKind::nic && b.kind == NodeKind::network_switch) nic_layer += l.bandwidth_Bps;
    if (a.kind == NodeKind::network_switch && b.kind == NodeKind::network_switch) {
      spine_layer += l.bandwidth_Bps;
      ++spine_links;
      CHECK(l.label == "InfiniBand NDR x2");
    }
  }
  CHECK(nic_layer == doctest::Approx(51.2e12));
  CHECK(spine_links == 32 * 16);
  CHECK(spine_layer == doctest::Approx(51.2e12));
}
