// `clustersim discover` against hostile input: malformed nvidia-smi matrices and NCCL topology XML
// are InputErrors at their line and key, never a crash, and bandwidth flags must be rates above 0.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "calibration/discover/discover.hpp"
#include "support/bad_input.hpp"
#include "support/calibration_data.hpp"

namespace {

// Two GPUs on one NUMA node; each test varies one element.
std::string two_gpu_xml(const std::string& second_gpu) {
  return "<system version=\"1\">\n"                                              // 1
         " <cpu numaid=\"0\">\n"                                                 // 2
         "  <pci busid=\"0000:01:00.0\" device=\"0x2335\" link_width=\"16\">\n"  // 3
         "   <gpu dev=\"0\" sm=\"90\"><nvlink target=\"x\" count=\"18\" "
         "tclass=\"0x068000\"/></gpu>\n"
         "  </pci>\n"                                                            // 5
         "  <pci busid=\"0000:02:00.0\" device=\"0x2335\" link_width=\"16\">\n"  // 6
         "   " +
         second_gpu +
         "\n"  // 7
         "  </pci>\n"
         " </cpu>\n"
         "</system>\n";
}

std::string xml_error(const std::string& xml) {
  try {
    cs::cal::parse_nccl_topo_xml(xml, "t.xml");
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST_CASE("NCCL topology XML: attributes that are not counts, and a GPU listed twice") {
  const std::string nvlink = "<nvlink target=\"x\" count=\"18\" tclass=\"0x068000\"/>";
  CHECK(xml_error(two_gpu_xml("<gpu dev=\"1\" sm=\"90\">" + nvlink + "</gpu>")) == "no error");
  // Was a segmentation fault in discover_server: GPU 1 had no XML entry.
  CHECK(xml_error(two_gpu_xml("<gpu dev=\"0\" sm=\"90\">" + nvlink + "</gpu>")) ==
        "t.xml:7: key 'dev': GPU dev 0 appears twice (first at line 4)");
  // Was read as dev -1 ("not one of nvidia-smi's GPUs").
  CHECK(xml_error(two_gpu_xml("<gpu dev=\"one\" sm=\"90\"/>")) ==
        "t.xml:7: key 'dev': 'one' is not an integer of 0 or more");
  // Was accepted: the GPU lost its NVLinks in silence.
  CHECK(xml_error(two_gpu_xml("<gpu dev=\"1\" sm=\"90\"><nvlink target=\"x\" count=\"-5\" "
                              "tclass=\"0x068000\"/></gpu>")) ==
        "t.xml:7: key 'count': '-5' is not an integer of 0 or more");
  CHECK(xml_error(two_gpu_xml("<gpu sm=\"90\"/>")) ==
        "t.xml:7: key 'dev': missing; each <gpu> names its CUDA device");
}

TEST_CASE("nvidia-smi topo -m: an NV count past int, a device named twice") {
  // Was exit 3 (std::stoi threw out of the parser).
  const std::string huge = "\tGPU0\tGPU1\nGPU0\t X \tNV99999999999\nGPU1\tNV99999999999\t X \n";
  CHECK_THROWS_WITH_AS(cs::cal::parse_nvidia_smi_topo(huge, "t.txt"),
                       doctest::Contains("t.txt:2: key 'GPU1': connection 'NV99999999999' is not "
                                         "a count of NVLinks"),
                       cs::InputError);
  // Was "the header names this device but no row describes it".
  const std::string twice = "\tGPU0\tGPU0\nGPU0\t X \t X \n";
  CHECK_THROWS_WITH_AS(cs::cal::parse_nvidia_smi_topo(twice, "t.txt"),
                       doctest::Contains("t.txt:1: key 'GPU0': the header names this device twice"),
                       cs::InputError);
}

TEST_CASE("discover: bandwidth flags are rates above 0, checked whether used or not") {
  const auto smi = cs::cal::parse_nvidia_smi_topo(
      cs::test::read_calibration_data("h200x4/topo-m.txt"), "topo-m.txt");
  cs::cal::DiscoverOptions o;
  o.gpu = "NVIDIA H200";
  o.smi_source = "topo-m.txt";
  // Both were exit 3: the written topology did not load.
  for (const char* bad : {"0GB/s", "-1GB/s"}) {
    o.host_memory_bandwidth = bad;
    const std::string expected =
        "key '--host-memory-bandwidth': '" + std::string(bad) + "' must be above 0";
    CHECK_THROWS_WITH_AS(cs::cal::discover_server(smi, nullptr, o),
                         doctest::Contains(expected.c_str()), cs::InputError);
  }
  // One socket needs no --socket-bandwidth, but a bad one was accepted in silence.
  o.host_memory_bandwidth = "307.2GB/s";
  o.socket_bandwidth = "1XB";
  CHECK_THROWS_WITH_AS(cs::cal::discover_server(smi, nullptr, o),
                       doctest::Contains("key '--socket-bandwidth': '1XB' is not a bandwidth"),
                       cs::InputError);
}

TEST_CASE("clustersim discover: a folder as input and a missing output folder exit 2, one line") {
  const std::string data = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/data/h200x4/";
  const std::string bin = std::string("'") + CLUSTERSIM_BINARY +
                          "' discover --gpu 'NVIDIA H200' "
                          "--host-memory-bandwidth 307.2GB/s ";
  const struct {
    std::string args;
    const char* message;
  } cases[] = {
      {"--nvidia-smi " + data, "cannot open the --nvidia-smi file: it is a folder"},
      {"--nvidia-smi " + data + "topo-m.txt --nccl-xml " + data,
       "cannot open the --nccl-xml file: it is a folder"},
      {"--nvidia-smi " + data + "topo-m.txt -o /nonexistent/d.yaml", "/nonexistent/d.yaml"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const cs::test::CommandResult r = cs::test::run_command(bin + c.args + " 2>&1 >/dev/null");
    cs::test::check_bad_input(r, c.message);
  }
}

}  // namespace
