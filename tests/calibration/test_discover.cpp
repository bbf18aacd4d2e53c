// Discovery end to end: nvidia-smi text (+ NCCL XML) -> topology YAML -> cs::topo::load_cluster.
// Expected bandwidths come from topologies/README.md's rules: NVLink4 = 18 x 25 GB/s = 450 GB/s per
// direction; PCIe Gen5 x16 = 32 GT/s x 16 lanes x 128/130 / 8 = 63.02 GB/s.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "calibration/discover/discover.hpp"
#include "core/error.hpp"
#include "support/calibration_data.hpp"
#include "support/cli_run.hpp"
#include "topology/loader.hpp"

namespace {

cs::cal::DiscoverOptions options(const std::string& name) {
  cs::cal::DiscoverOptions o;
  o.name = name;
  o.host_memory_bandwidth = "307.2GB/s";
  o.smi_source = "topo-m.txt";
  return o;
}

int count_nodes(const cs::topo::Cluster& c, cs::topo::NodeKind kind) {
  return static_cast<int>(std::count_if(c.nodes.begin(), c.nodes.end(),
                                        [&](const cs::topo::Node& n) { return n.kind == kind; }));
}

std::vector<const cs::topo::Link*> links_of(const cs::topo::Cluster& c, cs::topo::LinkKind kind) {
  std::vector<const cs::topo::Link*> out;
  for (const auto& l : c.links) {
    if (l.kind == kind) out.push_back(&l);
  }
  return out;
}

}  // namespace

TEST_CASE(
    "discover h200x4 from topo -m and NCCL's XML: 4 GPUs on one NVSwitch at 450 GB/s, PCIe Gen5 to "
    "the CPU") {
  const auto smi = cs::cal::parse_nvidia_smi_topo(
      cs::test::read_calibration_data("h200x4/topo-m.txt"), "topo-m.txt");
  const auto nccl = cs::cal::parse_nccl_topo_xml(
      cs::test::read_calibration_data("h200x4/nccl-topo.xml"), "nccl-topo.xml");
  auto o = options("h200x4");
  o.nccl_source = "nccl-topo.xml";
  const auto server = cs::cal::discover_server(smi, &nccl, o);
  CHECK(std::string(server.model->model) == "H200-SXM-141GB");  // from PCI id 0x2335
  CHECK(server.nvswitch);
  const auto cluster =
      cs::topo::load_cluster_from_string(cs::cal::topology_yaml(server, o), "h200x4.yaml");
  CHECK(cluster.ranks.size() == 4);
  CHECK(count_nodes(cluster, cs::topo::NodeKind::nvswitch) == 1);
  CHECK(count_nodes(cluster, cs::topo::NodeKind::cpu) == 1);
  CHECK(count_nodes(cluster, cs::topo::NodeKind::pcie_switch) == 0);
  const auto nvlinks = links_of(cluster, cs::topo::LinkKind::nvlink);
  REQUIRE(nvlinks.size() == 4);
  for (const auto* l : nvlinks) CHECK(l->bandwidth_Bps == doctest::Approx(450e9));
  const auto pcie = links_of(cluster, cs::topo::LinkKind::pcie);
  REQUIRE(pcie.size() == 4);
  for (const auto* l : pcie) CHECK(l->bandwidth_Bps == doctest::Approx(32e9 * 16 * 128 / 130 / 8));
}

TEST_CASE(
    "discover h200x2 from topo -m alone: two GPUs with NV18 become one direct NVLink4 x18 link") {
  // Without NCCL's XML two GPUs with NV18 could be cabled directly or switched; for two GPUs both
  // give one 450 GB/s path, and discovery writes the direct link.
  const auto smi = cs::cal::parse_nvidia_smi_topo(
      cs::test::read_calibration_data("h200x2/topo-m.txt"), "topo-m.txt");
  auto o = options("h200x2");
  o.gpu = "NVIDIA H200";
  const auto server = cs::cal::discover_server(smi, nullptr, o);
  CHECK_FALSE(server.nvswitch);
  const auto cluster =
      cs::topo::load_cluster_from_string(cs::cal::topology_yaml(server, o), "h200x2.yaml");
  CHECK(cluster.ranks.size() == 2);
  const auto nvlinks = links_of(cluster, cs::topo::LinkKind::nvlink);
  REQUIRE(nvlinks.size() == 1);
  CHECK(nvlinks[0]->bandwidth_Bps == doctest::Approx(450e9));
}

TEST_CASE("discover h100x1: one GPU, model named by --gpu") {
  const auto smi = cs::cal::parse_nvidia_smi_topo(
      cs::test::read_calibration_data("h100x1/topo-m.txt"), "topo-m.txt");
  auto o = options("h100x1");
  o.gpu = "NVIDIA H100 80GB HBM3";
  const auto cluster = cs::topo::load_cluster_from_string(
      cs::cal::topology_yaml(cs::cal::discover_server(smi, nullptr, o), o), "h100x1.yaml");
  CHECK(cluster.ranks.size() == 1);
  CHECK(cluster.gpu_models.at(0).name == "H100-SXM5-80GB");
  CHECK(links_of(cluster, cs::topo::LinkKind::nvlink).empty());
}

TEST_CASE(
    "discover a two-socket board with NICs: PCIe switches from PIX, NICs on them, a socket link") {
  const std::string text = cs::test::kTwoSocketSmiText;
  const auto smi = cs::cal::parse_nvidia_smi_topo(text, "board.txt");
  auto o = options("board");
  o.gpu = "NVIDIA H100 80GB HBM3";
  SUBCASE("two NUMA nodes need the socket bandwidth") {
    CHECK_THROWS_WITH_AS(cs::cal::discover_server(smi, nullptr, o),
                         doctest::Contains("--socket-bandwidth"), cs::InputError);
  }
  o.socket_bandwidth = "128GB/s";
  const auto server = cs::cal::discover_server(smi, nullptr, o);
  // 4 uniform NV18 pairs: more links than a GPU has, so NVSwitch.
  CHECK(server.nvswitch);
  CHECK(server.sockets == 2);
  CHECK(server.pcie_switches == 2);
  CHECK(server.nic_names == std::vector<std::string>{"mlx5_0", "mlx5_1"});
  const auto cluster =
      cs::topo::load_cluster_from_string(cs::cal::topology_yaml(server, o), "board.yaml");
  // 4 GPUs + nvswitch + 2 cpus + 2 PCIe switches + 2 NICs.
  CHECK(cluster.nodes.size() == 11);
  // 4 NVLink + 4 GPU-switch + 2 NIC-switch + 2 switch-CPU + 1 socket.
  CHECK(cluster.links.size() == 13);
  CHECK(links_of(cluster, cs::topo::LinkKind::socket).size() == 1);
  // GPU1 and NIC0 hang off the same switch, which goes to cpu0.
  const int gpu1 = cluster.find_node("node0/gpu1");
  const int nic0 = cluster.find_node("node0/nic0");
  const int pcie0 = cluster.find_node("node0/pcie0");
  const int cpu0 = cluster.find_node("node0/cpu0");
  REQUIRE(gpu1 >= 0);
  auto linked = [&](int a, int b) {
    return std::any_of(cluster.links.begin(), cluster.links.end(), [&](const cs::topo::Link& l) {
      return (l.a == a && l.b == b) || (l.a == b && l.b == a);
    });
  };
  CHECK(linked(gpu1, pcie0));
  CHECK(linked(nic0, pcie0));
  CHECK(linked(pcie0, cpu0));
}

TEST_CASE("discover refuses what it cannot know") {
  const auto smi = cs::cal::parse_nvidia_smi_topo(
      cs::test::read_calibration_data("h200x4/topo-m.txt"), "topo-m.txt");
  auto o = options("x");
  SUBCASE("no GPU model without NCCL's XML or --gpu") {
    CHECK_THROWS_WITH_AS(cs::cal::discover_server(smi, nullptr, o),
                         doctest::Contains("give --gpu with one of 'NVIDIA H200'"), cs::InputError);
  }
  SUBCASE("no host memory bandwidth") {
    o.gpu = "NVIDIA H200";
    o.host_memory_bandwidth.clear();
    CHECK_THROWS_WITH_AS(cs::cal::discover_server(smi, nullptr, o),
                         doctest::Contains("--host-memory-bandwidth"), cs::InputError);
  }
  SUBCASE("NVLink on a model without it") {
    o.gpu = "NVIDIA L40S";
    CHECK_THROWS_WITH_AS(cs::cal::discover_server(smi, nullptr, o),
                         doctest::Contains("is L40S, which has no NVLink"), cs::InputError);
  }
}

TEST_CASE("clustersim discover writes a topology file that loads, bad flags are exit code 2") {
  const std::string data = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/data/h200x4/";
  const std::string out = cs::test::scratch_path("cs_test_discover_h200x4.yaml").string();
  std::filesystem::remove(out);
  const std::string command = std::string(CLUSTERSIM_BINARY) + " discover --nvidia-smi " + data +
                              "topo-m.txt --nccl-xml " + data +
                              "nccl-topo.xml --host-memory-bandwidth 307.2GB/s --name h200x4 -o " +
                              out + " 2>/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  const auto cluster = cs::topo::load_cluster(out);
  CHECK(cluster.ranks.size() == 4);
  CHECK(cluster.name == "h200x4");
  std::filesystem::remove(out);
  const std::string missing = std::string(CLUSTERSIM_BINARY) + " discover --nvidia-smi " + data +
                              "no-such-file.txt --host-memory-bandwidth 1GB/s 2>/dev/null";
  const int status = std::system(missing.c_str());
  CHECK(WEXITSTATUS(status) == 2);
}

TEST_CASE("discover names the GPUs of issue 41 as nvidia-smi prints them, with their datasheets") {
  // Dense rates from each datasheet (topologies/README.md, "Sources"): a sparse figure halved.
  struct Expected {
    const char* smi;
    const char* model;
    const char* bf16;
    const char* fp32;
    const char* memory;
    const char* bandwidth;
    int nvlink;
  };
  const Expected expected[] = {
      {"NVIDIA B200", "B200-SXM-180GB", "2250TFLOPS", "75TFLOPS", "180GB", "8TB/s", 5},
      {"NVIDIA GB200", "GB200-186GB", "2500TFLOPS", "80TFLOPS", "186GB", "8TB/s", 5},
      {"NVIDIA H100 PCIe", "H100-PCIe-80GB", "756.5TFLOPS", "51TFLOPS", "80GB", "2.0TB/s", 4},
      {"NVIDIA H100 NVL", "H100-NVL-94GB", "835.5TFLOPS", "60TFLOPS", "94GB", "3.9TB/s", 4},
      {"NVIDIA H20", "H20-96GB", "148TFLOPS", "44TFLOPS", "96GB", "4.0TB/s", 4},
  };
  for (const Expected& e : expected) {
    CAPTURE(e.smi);
    const cs::cal::KnownGpu* gpu = cs::cal::find_gpu_by_name(e.smi);
    REQUIRE(gpu != nullptr);
    CHECK(std::string(gpu->model) == e.model);
    CHECK(std::string(gpu->bf16) == e.bf16);
    CHECK(std::string(gpu->fp16) == e.bf16);  // every datasheet: FP16 tensor = BF16
    CHECK(std::string(gpu->fp32) == e.fp32);
    CHECK(std::string(gpu->memory) == e.memory);
    CHECK(std::string(gpu->memory_bandwidth) == e.bandwidth);
    CHECK(gpu->nvlink_generation == e.nvlink);
  }
}

TEST_CASE("discover --gpu 'NVIDIA B200' on a 4-GPU NV18 board: NVLink5 x18 = 900 GB/s per GPU") {
  // The h200x4 matrix (4 GPUs, NV18 between every pair, all on an NVSwitch) read as a B200 board:
  // NVLink5 runs 50 GB/s per link and direction (Blackwell technical brief), 18 x 50 = 900 GB/s.
  const auto smi = cs::cal::parse_nvidia_smi_topo(
      cs::test::read_calibration_data("h200x4/topo-m.txt"), "topo-m.txt");
  auto o = options("b200x4");
  o.gpu = "NVIDIA B200";
  const auto server = cs::cal::discover_server(smi, nullptr, o);
  const auto cluster =
      cs::topo::load_cluster_from_string(cs::cal::topology_yaml(server, o), "b200x4.yaml");
  REQUIRE(cluster.gpu_models.size() == 1);
  const auto& m = cluster.gpu_models[0];
  CHECK(m.name == "B200-SXM-180GB");
  CHECK(m.bf16_flops == doctest::Approx(2250e12));
  CHECK(m.fp16_flops == doctest::Approx(2250e12));
  CHECK(m.fp32_flops == doctest::Approx(75e12));
  CHECK(m.memory_bytes == doctest::Approx(180e9));
  CHECK(m.memory_bandwidth_Bps == doctest::Approx(8e12));
  const auto nvlinks = links_of(cluster, cs::topo::LinkKind::nvlink);
  REQUIRE(nvlinks.size() == 4);
  for (const auto* l : nvlinks) CHECK(l->bandwidth_Bps == doctest::Approx(900e9));
}
