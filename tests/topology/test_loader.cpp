// Loading good files: template expansion (names, counts, servers), rank order, the figures each
// link type implies, top-level links (the shipped files: test_shipped.cpp).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "topology/loader.hpp"

using namespace cs;
using namespace cs::topo;

namespace {

Cluster load_fixture(const std::string& name) {
  return load_cluster(std::string(CLUSTERSIM_TEST_DATA) + "/topologies/" + name);
}

const Node& node_named(const Cluster& c, const std::string& name) {
  const int i = c.find_node(name);
  REQUIRE_MESSAGE(i >= 0, "no node " << name);
  return c.nodes[static_cast<std::size_t>(i)];
}

std::string link_name(const Cluster& c, const Link& l) {
  return c.nodes[static_cast<std::size_t>(l.a)].name + " -- " +
         c.nodes[static_cast<std::size_t>(l.b)].name;
}

}  // namespace

TEST_CASE("two GPUs on PCIe: names, ranks, models, host memory") {
  const Cluster c = load_fixture("two-gpu-pcie.yaml");
  CHECK(c.name == "two-gpu-pcie");
  REQUIRE(c.nodes.size() == 3);
  CHECK(c.nodes[0].name == "host0/gpu0");
  CHECK(c.nodes[0].local_name == "gpu0");
  CHECK(c.nodes[1].name == "host0/gpu1");
  CHECK(c.nodes[2].name == "host0/cpu");
  CHECK(c.ranks == std::vector<int>{0, 1});
  CHECK(c.nodes[1].rank == 1);
  CHECK(c.nodes[2].rank == -1);
  REQUIRE(c.servers.size() == 1);
  CHECK(c.servers[0].name == "host0");
  CHECK(c.servers[0].template_name == "box");
  CHECK(c.servers[0].gpus == std::vector<int>{0, 1});
  CHECK(c.servers[0].nics.empty());

  REQUIRE(c.gpu_models.size() == 1);
  CHECK(c.gpu_models[0].bf16_flops == doctest::Approx(100e12));
  CHECK(c.gpu_models[0].fp32_flops == doctest::Approx(10e12));
  CHECK(c.gpu_models[0].memory_bytes == doctest::Approx(16e9));
  CHECK(c.gpu_models[0].memory_bandwidth_Bps == doctest::Approx(1e12));
  CHECK(c.nodes[0].gpu_model == 0);

  CHECK(c.nodes[2].kind == NodeKind::cpu);
  CHECK(c.nodes[2].host_memory_bandwidth_Bps == doctest::Approx(100e9));
  CHECK(c.nodes[2].pageable_copy_Bps == doctest::Approx(8e9));
  CHECK(c.fabric.kind.empty());
}

TEST_CASE("PCIe line rate follows the spec: GT/s x lanes x 128/130 / 8") {
  const Cluster c = load_fixture("two-gpu-pcie.yaml");
  REQUIRE(c.links.size() == 2);
  const Link& l = c.links[0];
  CHECK(link_name(c, l) == "host0/gpu0 -- host0/cpu");
  CHECK(l.kind == LinkKind::pcie);
  CHECK(l.label == "PCIe Gen4 x16");
  CHECK(l.generation == 4);
  CHECK(l.lanes == 16);
  // Gen4: 16 GT/s x 16 lanes x 128/130 / 8 bits = 31.508 GB/s per direction.
  CHECK(l.bandwidth_Bps == doctest::Approx(16e9 * 16 * 128.0 / 130.0 / 8));
  // Default efficiency: the achieved Gen4 pinned copy, 25 of 31.508 GB/s (topologies/README.md).
  CHECK(l.effective_bandwidth_Bps() == doctest::Approx(25e9).epsilon(0.001));
  // Default PCIe hop: half of NCCL's 1.0 us PCIe hop = 500 ns.
  CHECK(l.latency == 500 * kPsPerNs);
  CHECK(l.loc.line == 11);
}

TEST_CASE("mesh joins every pair once, NVLink rate is links x 25 GB/s") {
  const Cluster c = load_fixture("mesh-4gpu.yaml");
  // 4 GPUs: 4 * 3 / 2 = 6 NVLink links, then 4 PCIe links.
  REQUIRE(c.links.size() == 10);
  const std::vector<std::pair<int, int>> pairs = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    CHECK(c.links[i].a == pairs[i].first);
    CHECK(c.links[i].b == pairs[i].second);
    CHECK(c.links[i].kind == LinkKind::nvlink);
    CHECK(c.links[i].label == "NVLink3 x4");
    CHECK(c.links[i].bandwidth_Bps == doctest::Approx(4 * 25e9));  // 4 links x 25 GB/s
    CHECK(c.links[i].latency == 300 * kPsPerNs);  // half of NCCL's 0.6 us NVLink hop
  }
  // `width` defaults to 16: Gen4 x16.
  CHECK(c.links[6].label == "PCIe Gen4 x16");
}

TEST_CASE("templates of different sizes: instance names, counts and rank order") {
  const Cluster c = load_fixture("mixed-templates.yaml");
  // pair: 2 GPUs + cpu + nic = 4 nodes, 3 links; trio: 3 GPUs + cpu + nic = 5 nodes, 4 links.
  // Instances p0, p1 (pair), t0 (trio), q0 (pair) + top-level switch sw:
  // nodes 4 + 4 + 5 + 4 + 1 = 18; links 3 + 3 + 4 + 3 + 4 NIC-switch = 17.
  CHECK(c.nodes.size() == 18);
  CHECK(c.links.size() == 17);
  REQUIRE(c.servers.size() == 4);
  CHECK(c.servers[0].name == "p0");
  CHECK(c.servers[1].name == "p1");
  CHECK(c.servers[2].name == "t0");
  CHECK(c.servers[2].template_name == "trio");
  CHECK(c.servers[3].name == "q0");

  // Ranks: server by server in cluster-list order, then local GPU order.
  const std::vector<std::string> expected = {"p0/gpu0",  "p0/gpu1",   "p1/gpu0",
                                             "p1/gpu1",  "t0/accel0", "t0/accel1",
                                             "t0/spare", "q0/gpu0",   "q0/gpu1"};
  REQUIRE(c.ranks.size() == expected.size());
  for (std::size_t r = 0; r < expected.size(); ++r) {
    const Node& gpu = c.nodes[static_cast<std::size_t>(c.ranks[r])];
    CHECK(gpu.name == expected[r]);
    CHECK(gpu.rank == static_cast<int>(r));
  }
  CHECK(node_named(c, "t0/spare").server == 2);
  CHECK(c.gpu_models[static_cast<std::size_t>(node_named(c, "t0/spare").gpu_model)].name ==
        "Small");
  CHECK(c.gpu_models[static_cast<std::size_t>(node_named(c, "q0/gpu1").gpu_model)].name == "Big");
  CHECK(c.servers[2].gpus.size() == 3);
  CHECK(c.servers[2].nics.size() == 1);
  CHECK(node_named(c, "sw").server == -1);
  // trio links are PCIe Gen3 x8: 8 GT/s x 8 x 128/130 / 8 = 7.877 GB/s.
  const Node& accel = node_named(c, "t0/accel0");
  for (const auto& l : c.links) {
    if (c.nodes[static_cast<std::size_t>(l.a)].name == accel.name) {
      CHECK(l.label == "PCIe Gen3 x8");
      CHECK(l.bandwidth_Bps == doctest::Approx(8e9 * 8 * 128.0 / 130.0 / 8));
    }
  }
  // HDR InfiniBand: 200 Gb/s = 25 GB/s.
  CHECK(c.links.back().label == "InfiniBand HDR");
  CHECK(c.links.back().bandwidth_Bps == doctest::Approx(25e9));
}

TEST_CASE("top-level links over global names, with explicit bandwidth and latency") {
  const Cluster c = load_fixture("two-servers-handwired.yaml");
  // "srv[0-1]/nic[0-1]" -> srv0/nic0, srv0/nic1, srv1/nic0, srv1/nic1, all to tor.
  std::vector<std::string> to_tor;
  for (const auto& l : c.links) {
    if (c.nodes[static_cast<std::size_t>(l.b)].name != "tor") continue;
    to_tor.push_back(c.nodes[static_cast<std::size_t>(l.a)].name);
    CHECK(l.kind == LinkKind::ethernet);
    CHECK(l.label == "Ethernet 100Gbps");
    CHECK(l.bandwidth_Bps == doctest::Approx(12.5e9));  // 100 Gb/s / 8
    CHECK(l.efficiency == 1.0);
    CHECK(l.latency == 2 * kPsPerUs);
  }
  CHECK(to_tor == std::vector<std::string>{"srv0/nic0", "srv0/nic1", "srv1/nic0", "srv1/nic1"});
  // NIC links: PCIe Gen4 x8 = 15.75 GB/s.
  CHECK(c.links[2].label == "PCIe Gen4 x8");
}

TEST_CASE("overrides: bandwidth, efficiency, latency and label replace the derived figures") {
  const char* text = R"(
gpu_models: {G: {bf16: 1TFLOPS, fp16: 1TFLOPS, fp32: 1TFLOPS, memory: 1GB, memory_bandwidth: 1TB/s}}
servers:
  s:
    nodes:
      - {name: gpu, kind: gpu, model: G, count: 2}
    links:
      - {from: gpu0, to: gpu1, type: nvlink, generation: 4, count: 18, bandwidth: 400GB/s,
         efficiency: 0.5, latency: 1.5us, label: custom}
cluster: [{server: s}]
)";
  const Cluster c = load_cluster_from_string(text, "inline.yaml");
  REQUIRE(c.links.size() == 1);
  CHECK(c.links[0].bandwidth_Bps == doctest::Approx(400e9));
  CHECK(c.links[0].effective_bandwidth_Bps() == doctest::Approx(200e9));
  CHECK(c.links[0].latency == 1'500'000);
  CHECK(c.links[0].label == "custom");
  CHECK(c.links[0].lanes == 18);
  // Without a `name:` the cluster is named after the file's stem; the default instance prefix is
  // "node".
  CHECK(c.name == "inline");
  CHECK(c.servers[0].name == "node0");
  CHECK(c.nodes[0].name == "node0/gpu0");
}

TEST_CASE("loading is deterministic: the same text gives the same cluster") {
  const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/dgx-h100-16node.yaml";
  const Cluster a = load_cluster(path);
  const Cluster b = load_cluster(path);
  REQUIRE(a.nodes.size() == b.nodes.size());
  REQUIRE(a.links.size() == b.links.size());
  for (std::size_t i = 0; i < a.nodes.size(); ++i) CHECK(a.nodes[i].name == b.nodes[i].name);
  for (std::size_t i = 0; i < a.links.size(); ++i) {
    CHECK(a.links[i].a == b.links[i].a);
    CHECK(a.links[i].b == b.links[i].b);
    CHECK(a.links[i].bandwidth_Bps == b.links[i].bandwidth_Bps);
  }
}

TEST_CASE("each link type's line rate, label and default latency, derived by hand") {
  const char* text = R"(
gpu_models: {G: {bf16: 1TFLOPS, fp16: 1TFLOPS, fp32: 1TFLOPS, memory: 1GB, memory_bandwidth: 1TB/s}}
servers:
  s:
    nodes:
      - {name: gpu, kind: gpu, model: G, count: 2}
      - {name: x, kind: switch, count: 7}
      - {name: cpu, kind: cpu, memory_bandwidth: 100GB/s}
    links:
      - {from: gpu0, to: x0, type: pcie, generation: 3, width: 4}
      - {from: gpu0, to: x1, type: pcie, generation: 6}
      - {from: gpu0, to: x2, type: nvlink, generation: 2, count: 6}
      - {from: gpu0, to: x3, type: nvlink, generation: 5, count: 18}
      - {from: gpu0, to: x4, type: infiniband, rate: XDR}
      - {from: gpu0, to: x5, type: efa, bandwidth: 100Gbps}
      - {from: gpu0, to: x6, type: socket, bandwidth: 62.4GB/s}
      - {from: gpu1, to: x0, type: infiniband, rate: NDR}
      - {from: cpu, to: x0, type: ethernet, bandwidth: 400Gbps}
cluster: [{server: s}]
)";
  const Cluster c = load_cluster_from_string(text, "types.yaml");
  REQUIRE(c.links.size() == 9);
  struct Expected {
    const char* label;
    double bandwidth_Bps;
    double efficiency;
    TimePs latency;
  };
  const std::vector<Expected> expected = {
      // Gen3 x4: 8 GT/s x 4 x 128/130 / 8 = 3.938 GB/s; efficiency 11.5 / 15.754.
      {"PCIe Gen3 x4", 8e9 * 4 * 128.0 / 130.0 / 8, 11.5 / 15.754, 500 * kPsPerNs},
      // Gen6 x16: 64 GT/s x 16 / 8 = 128 GB/s (FLIT mode, no line code); Gen5's efficiency.
      {"PCIe Gen6 x16", 128e9, 52.5 / 63.015, 500 * kPsPerNs},
      // NVLink2 x6: 6 x 25 = 150 GB/s (V100); the measured NVLink4 peer-copy fraction 396.6 / 450.
      {"NVLink2 x6", 150e9, 396.6 / 450.0, 300 * kPsPerNs},
      // NVLink5 x18: 18 x 50 = 900 GB/s; the same measured fraction 396.6 / 450.
      {"NVLink5 x18", 900e9, 396.6 / 450.0, 300 * kPsPerNs},
      // XDR: 800 Gb/s / 8 = 100 GB/s; NDR's fraction 48.5 / 50.
      {"InfiniBand XDR", 100e9, 48.5 / 50.0, 1350 * kPsPerNs},
      {"EFA 100Gbps", 12.5e9, 1.0, 1350 * kPsPerNs},
      {"Socket 62.4GB/s", 62.4e9, 1.0, 500 * kPsPerNs},
      {"InfiniBand NDR", 50e9, 48.5 / 50.0, 1350 * kPsPerNs},
      {"Ethernet 400Gbps", 50e9, 1.0, 1350 * kPsPerNs},
  };
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(c.links[i].label == expected[i].label);
    CHECK(c.links[i].bandwidth_Bps == doctest::Approx(expected[i].bandwidth_Bps));
    CHECK(c.links[i].efficiency == doctest::Approx(expected[i].efficiency));
    CHECK(c.links[i].latency == expected[i].latency);
  }
  // A cpu without `pageable_copy` gets the default measured on the H100 device machine, 9.2 GB/s.
  CHECK(node_named(c, "node0/cpu").pageable_copy_Bps == doctest::Approx(9.2e9));
}

TEST_CASE("the example in topologies/README.md loads as documented") {
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/README.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const std::size_t begin = readme.find("```yaml\n");
  REQUIRE(begin != std::string::npos);
  const std::size_t end = readme.find("```", begin + 8);
  REQUIRE(end != std::string::npos);
  const Cluster c = load_cluster_from_string(readme.substr(begin + 8, end - begin - 8), "README");
  // Two DGX H100 instances: 16 GPUs, ranks node0/gpu0 .. node1/gpu7; 8 rails of one leaf each,
  // 2 NICs per leaf -> 2 uplinks per leaf, 16 uplinks -> 1 spine of 64 ports.
  CHECK(c.name == "two-dgx");
  CHECK(c.ranks.size() == 16);
  CHECK(c.nodes[static_cast<std::size_t>(c.ranks[9])].name == "node1/gpu1");
  CHECK(c.fabric.kind == "rail_optimized");
  CHECK(c.fabric.leaves.size() == 8);
  CHECK(c.fabric.spines.size() == 1);
}
