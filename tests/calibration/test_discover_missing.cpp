// What discover says when the nvidia-smi text (or NCCL's XML) lacks what a flag supplies, or
// contradicts the GPU model a flag or the XML names: a real key of the file at its line (the cell,
// the column, the element that shows it), or the flag as the key with no file position; never a
// flag's name as a key at a file's line.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "calibration/discover/discover.hpp"
#include "core/error.hpp"
#include "support/bad_input.hpp"
#include "support/calibration_data.hpp"

namespace {

cs::cal::DiscoverOptions options() {
  cs::cal::DiscoverOptions o;
  o.name = "x";
  o.host_memory_bandwidth = "307.2GB/s";
  o.smi_source = "topo-m.txt";
  return o;
}

std::string error_of(const cs::cal::SmiTopology& smi, const cs::cal::NcclTopology* nccl,
                     const cs::cal::DiscoverOptions& o) {
  try {
    cs::cal::discover_server(smi, nccl, o);
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at))
    text.replace(at, from.size(), to), at += to.size();
  return text;
}

// calibrate/data/h200x4: line 1 of topo-m.txt is the header, line 2 GPU0's row (NV18 to GPU1);
// nccl-topo.xml's first <gpu> (dev 0) is at line 4, with an NVLink to the NVSwitch at line 5.
std::string smi_text() {
  return cs::test::read_calibration_data("h200x4/topo-m.txt");
}
std::string xml_text() {
  return cs::test::read_calibration_data("h200x4/nccl-topo.xml");
}

}  // namespace

TEST_CASE("no GPU model: the flag is the key, the file is named in the message, no position") {
  const auto smi = cs::cal::parse_nvidia_smi_topo(smi_text(), "topo-m.txt");
  CHECK(
      error_of(smi, nullptr, options())
          .starts_with("key '--gpu': required without --nccl-xml: topo-m.txt (nvidia-smi topo "
                       "-m) does not name the GPU model; give --gpu with one of 'NVIDIA H200', "));
}

TEST_CASE("NVLink on a model without it: at the NV# cell, naming where the model came from") {
  const auto smi = cs::cal::parse_nvidia_smi_topo(smi_text(), "topo-m.txt");
  auto o = options();
  o.gpu = "NVIDIA L40S";
  CHECK(error_of(smi, nullptr, o) ==
        "topo-m.txt:2: key 'GPU1': GPU0 and GPU1 connect by NV18, but --gpu 'NVIDIA L40S' is "
        "L40S, which has no NVLink; check --gpu");
  // The model from the XML's PCI device (L40S's 0x26b9 in place of H200's 0x2335).
  o.gpu.clear();
  o.nccl_source = "nccl-topo.xml";
  const auto l40s =
      cs::cal::parse_nccl_topo_xml(replace_all(xml_text(), "0x2335", "0x26b9"), "nccl-topo.xml");
  CHECK(error_of(smi, &l40s, o) ==
        "topo-m.txt:2: key 'GPU1': GPU0 and GPU1 connect by NV18, but the NCCL XML's PCI device "
        "0x26b9 is L40S, which has no NVLink; check the inputs");
  // No NV# cell in nvidia-smi's matrix (SYS instead): the XML's NVSwitch link shows the NVLink.
  const auto no_nv =
      cs::cal::parse_nvidia_smi_topo(replace_all(smi_text(), "NV18", "SYS"), "topo-m.txt");
  CHECK(error_of(no_nv, &l40s, o) ==
        "nccl-topo.xml:4: key 'nvlink': GPU dev 0 has NVLinks to an NVSwitch, but the NCCL XML's "
        "PCI device 0x26b9 is L40S, which has no NVLink; check the inputs");
}

TEST_CASE("two NUMA nodes without --socket-bandwidth: at the row of the GPU on the second") {
  // kTwoSocketSmiText: header at line 1, GPU0..GPU3 at lines 2..5; GPU0-1 on NUMA 0, GPU2-3 on 1.
  const auto smi = cs::cal::parse_nvidia_smi_topo(cs::test::kTwoSocketSmiText, "board.txt");
  auto o = options();
  o.smi_source = "board.txt";
  o.gpu = "NVIDIA H100 80GB HBM3";
  CHECK(error_of(smi, nullptr, o) ==
        "board.txt:4: key 'NUMA Affinity': GPU2 is on NUMA node 1, GPU0 on 0: 2 sockets, and "
        "neither input reports the bandwidth between them; give --socket-bandwidth (e.g. UPI 2.0 "
        "x4 = 128GB/s)");
}

TEST_CASE("clustersim discover: both kinds of message, exit 2, one line") {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("clustersim-discover-missing-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "board.txt") << cs::test::kTwoSocketSmiText;
  std::ofstream(dir / "topo-m.txt") << smi_text();
  const std::string run = "cd '" + dir.string() + "' && '" + std::string(CLUSTERSIM_BINARY) +
                          "' discover --host-memory-bandwidth 307.2GB/s --nvidia-smi ";
  const cs::test::CommandResult no_model = cs::test::run_command(run + "topo-m.txt 2>&1");
  const cs::test::CommandResult no_socket =
      cs::test::run_command(run + "board.txt --gpu 'NVIDIA H100 80GB HBM3' 2>&1");
  fs::remove_all(dir);
  cs::test::check_bad_input(no_model,
                            "error: key '--gpu': required without --nccl-xml: topo-m.txt "
                            "(nvidia-smi topo -m) does not name the GPU model");
  cs::test::check_bad_input(no_socket, "error: board.txt:4: key 'NUMA Affinity': GPU2 is on NUMA");
}
