// Discovery's parsers on the committed outputs of the 4 x H200 machine (calibrate/data/h200x4) and
// on hand-written nvidia-smi text with NICs, two sockets and bad cells.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "calibration/discover/discover_nccl_xml.hpp"
#include "calibration/discover/discover_smi.hpp"
#include "core/error.hpp"
#include "support/calibration_data.hpp"

namespace {

using cs::cal::SmiLink;

}  // namespace

TEST_CASE("nvidia-smi topo -m of the 4 x H200 machine: 4 GPUs, every pair NV18, one NUMA node") {
  const auto topo = cs::cal::parse_nvidia_smi_topo(
      cs::test::read_calibration_data("h200x4/topo-m.txt"), "topo-m.txt");
  REQUIRE(topo.devices.size() == 4);
  CHECK(topo.gpu_count() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(topo.devices[i].name == "GPU" + std::to_string(i));
    CHECK(topo.devices[i].cpu_affinity == "0-63");
    CHECK(topo.devices[i].numa_affinity == "0");
    for (size_t j = 0; j < 4; ++j) {
      CHECK(topo.matrix[i][j].link == (i == j ? SmiLink::self : SmiLink::nvlink));
      CHECK(topo.matrix[i][j].nvlinks == (i == j ? 0 : 18));
    }
  }
}

TEST_CASE(
    "nvidia-smi topo -m of the one-GPU H100 machine: one GPU row, affinity read past the padding") {
  const auto topo = cs::cal::parse_nvidia_smi_topo(
      cs::test::read_calibration_data("h100x1/topo-m.txt"), "topo-m.txt");
  REQUIRE(topo.gpu_count() == 1);
  CHECK(topo.devices[0].cpu_affinity == "0-15");
  CHECK(topo.devices[0].numa_affinity == "0");
}

TEST_CASE("nvidia-smi topo -m with NICs: NIC rows, legend names, per-GPU NUMA") {
  const auto topo = cs::cal::parse_nvidia_smi_topo(cs::test::kTwoSocketSmiText, "two-socket");
  REQUIRE(topo.devices.size() == 6);
  CHECK(topo.gpu_count() == 4);
  CHECK(topo.devices[4].legend_name == "mlx5_0");
  CHECK(topo.devices[5].legend_name == "mlx5_1");
  CHECK(topo.devices[2].numa_affinity == "1");
  CHECK(topo.matrix[4][1].link == SmiLink::pix);
  CHECK(topo.matrix[0][5].link == SmiLink::sys);
}

TEST_CASE("nvidia-smi topo -m errors name the file, line and column") {
  SUBCASE("an unknown connection") {
    const std::string text = "\tGPU0\tGPU1\nGPU0\t X \tNVX\nGPU1\tNVX\t X \n";
    CHECK_THROWS_WITH_AS(cs::cal::parse_nvidia_smi_topo(text, "t.txt"),
                         doctest::Contains("t.txt:2: key 'GPU1': connection 'NVX'"),
                         cs::InputError);
  }
  SUBCASE("an asymmetric matrix") {
    const std::string text = "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV8\t X \n";
    CHECK_THROWS_WITH_AS(cs::cal::parse_nvidia_smi_topo(text, "t.txt"),
                         doctest::Contains("t.txt:3: key 'GPU0': the matrix is not symmetric"),
                         cs::InputError);
  }
  SUBCASE("a missing row") {
    const std::string text = "\tGPU0\tGPU1\nGPU0\t X \tNV4\n";
    CHECK_THROWS_WITH_AS(cs::cal::parse_nvidia_smi_topo(text, "t.txt"),
                         doctest::Contains("key 'GPU1': the header names this device but no row"),
                         cs::InputError);
  }
  SUBCASE("not topo -m at all") {
    CHECK_THROWS_AS(
        cs::cal::parse_nvidia_smi_topo("Sun Nov 22 11:00\nNo devices were found\n", "t.txt"),
        cs::InputError);
  }
}

TEST_CASE(
    "NCCL topology XML of the 4 x H200 machine: 4 GPUs, 18 NVLinks each to NVSwitch, PCIe Gen5") {
  const auto topo = cs::cal::parse_nccl_topo_xml(
      cs::test::read_calibration_data("h200x4/nccl-topo.xml"), "nccl-topo.xml");
  REQUIRE(topo.gpus.size() == 4);
  CHECK(topo.cpu_numa.size() == 1);
  for (int g = 0; g < 4; ++g) {
    const auto& gpu = topo.gpus[static_cast<size_t>(g)];
    CHECK(gpu.dev == g);
    CHECK(gpu.sm == 90);
    CHECK(gpu.pci_device == "0x2335");
    CHECK(gpu.link_gts == doctest::Approx(32.0));
    CHECK(gpu.link_width == 0);   // a VM reports no width
    CHECK(gpu.switches.empty());  // each GPU on a root port of the (virtual) CPU
    REQUIRE(gpu.nvlinks.size() == 1);
    CHECK(gpu.nvlinks[0].to_nvswitch());
    CHECK(gpu.nvlinks[0].count == 18);
  }
  REQUIRE(topo.nets.size() == 1);
  CHECK(topo.nets[0].name == "eth0");
  CHECK(topo.nets[0].speed_mbps == doctest::Approx(10000));
}

TEST_CASE(
    "NCCL topology XML: bridges above devices are kept, outermost first, bad XML is an "
    "InputError") {
  const std::string xml =
      "<system version=\"1\">\n"
      " <cpu numaid=\"0\">\n"
      "  <pci busid=\"0000:10:00.0\" class=\"0x060400\">\n"
      "   <pci busid=\"0000:11:00.0\" class=\"0x060400\">\n"
      "    <pci busid=\"0000:12:00.0\" class=\"0x030200\" device=\"0x2330\" link_speed=\"32.0 GT/s "
      "PCIe\" link_width=\"16\">\n"
      "     <gpu dev=\"0\" sm=\"90\"><nvlink target=\"0000:13:00.0\" count=\"4\" "
      "tclass=\"0x030200\"/></gpu>\n"
      "    </pci>\n"
      "    <pci busid=\"0000:14:00.0\" class=\"0x020000\"><nic><net name=\"mlx5_0\" "
      "speed=\"400000\"/></nic></pci>\n"
      "   </pci>\n"
      "  </pci>\n"
      " </cpu>\n"
      "</system>\n";
  const auto topo = cs::cal::parse_nccl_topo_xml(xml, "x.xml");
  REQUIRE(topo.gpus.size() == 1);
  CHECK(topo.gpus[0].switches == std::vector<std::string>{"0000:10:00.0", "0000:11:00.0"});
  CHECK(topo.gpus[0].link_width == 16);
  CHECK_FALSE(topo.gpus[0].nvlinks[0].to_nvswitch());
  REQUIRE(topo.nets.size() == 1);
  CHECK(topo.nets[0].switches == std::vector<std::string>{"0000:10:00.0", "0000:11:00.0"});
  CHECK(topo.nets[0].speed_mbps == doctest::Approx(400000));
  CHECK_THROWS_WITH_AS(cs::cal::parse_nccl_topo_xml("<system><cpu>", "bad.xml"),
                       doctest::Contains("bad.xml:"), cs::InputError);
  CHECK_THROWS_WITH_AS(cs::cal::parse_nccl_topo_xml("<graphs/>", "g.xml"),
                       doctest::Contains("no <system>"), cs::InputError);
}
