// `clustersim discover --nvidia-smi FILE [--nccl-xml FILE] --host-memory-bandwidth BW [-o OUT]`:
// turns a node's `nvidia-smi topo -m` (and NCCL's topology dump) into a topology file, checks that
// it loads, and writes it atomically (or prints it).
#include <iostream>

#include "calibration/discover/discover.hpp"
#include "cli/commands.hpp"
#include "cli/output/output_guard.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "topology/loader.hpp"

namespace cs::cli {
namespace {

struct DiscoverArgs {
  std::string nvidia_smi;
  std::string nccl_xml;
  std::string out;
  cal::DiscoverOptions options;
};

std::string read_text(const std::string& path, const std::string& flag) {
  return read_input_file(path, flag + " file");
}

void run_discover(DiscoverArgs a) {
  refuse_outputs_over_inputs(
      {{"--out", a.out}}, {{"--nvidia-smi file", a.nvidia_smi}, {"--nccl-xml file", a.nccl_xml}});
  a.options.smi_source = a.nvidia_smi;
  const cal::SmiTopology smi =
      cal::parse_nvidia_smi_topo(read_text(a.nvidia_smi, "--nvidia-smi"), a.nvidia_smi);
  cal::NcclTopology nccl;
  if (!a.nccl_xml.empty()) {
    a.options.nccl_source = a.nccl_xml;
    nccl = cal::parse_nccl_topo_xml(read_text(a.nccl_xml, "--nccl-xml"), a.nccl_xml);
  }
  const cal::DiscoveredServer server =
      cal::discover_server(smi, a.nccl_xml.empty() ? nullptr : &nccl, a.options);
  const std::string yaml = cal::topology_yaml(server, a.options);
  // What discovery writes must load; a failure here is a bug in discovery, not in the inputs.
  try {
    topo::load_cluster_from_string(yaml, a.out.empty() ? "<discovered>" : a.out);
  } catch (const InputError& e) {
    throw InternalError(std::string("discover wrote a topology that does not load: ") + e.what());
  }
  if (a.out.empty()) {
    std::cout << yaml;
    return;
  }
  write_file_atomically(a.out, yaml);
  std::cerr << "discover: " << server.gpus << " x " << server.model->model
            << (server.nvswitch ? " on NVSwitch" : "") << ", " << server.sockets << " socket(s), "
            << server.pcie_switches << " PCIe switch(es), " << server.nic_names.size()
            << " NIC(s) -> " << a.out << "\n";
}

}  // namespace

void add_discover_command(CLI::App& app) {
  auto args = std::make_shared<DiscoverArgs>();
  CLI::App* cmd = app.add_subcommand(
      "discover", "Write a topology file from `nvidia-smi topo -m` (and NCCL's topology XML)");
  cmd->add_option("--nvidia-smi", args->nvidia_smi, "text of `nvidia-smi topo -m`")->required();
  cmd->add_option("--nccl-xml", args->nccl_xml,
                  "NCCL_TOPO_DUMP_FILE of a run over all GPUs (shows NVSwitch, PCIe bridges)");
  cmd->add_option("-o,--out", args->out, "topology file to write (default: print it)");
  cmd->add_option("--gpu", args->options.gpu,
                  "GPU product name as nvidia-smi prints it (default: from the NCCL XML)");
  cmd->add_option("--host-memory-bandwidth", args->options.host_memory_bandwidth,
                  "DRAM bandwidth per socket, e.g. 307.2GB/s (no input reports it)")
      ->required();
  cmd->add_option("--socket-bandwidth", args->options.socket_bandwidth,
                  "bandwidth between sockets, e.g. 128GB/s");
  cmd->add_option("--name", args->options.name, "cluster and server template name");
  cmd->callback([args] { run_discover(*args); });
}

}  // namespace cs::cli
