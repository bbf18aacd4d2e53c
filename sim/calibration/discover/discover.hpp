// Topology discovery: turns what a node reports (`nvidia-smi topo -m`, optionally NCCL's topology
// dump) into a topology file (topologies/README.md) that cs::topo::load_cluster reads.
#pragma once

#include <string>
#include <vector>

#include "calibration/discover/discover_models.hpp"
#include "calibration/discover/discover_nccl_xml.hpp"
#include "calibration/discover/discover_smi.hpp"

namespace cs::cal {

struct DiscoverOptions {
  std::string name = "discovered";    // cluster and server template name
  std::string gpu;                    // nvidia-smi product or model name; empty: NCCL XML's PCI id
  std::string host_memory_bandwidth;  // DRAM bandwidth per socket, e.g. "307.2GB/s" (required:
                                      // neither input reports it)
  std::string socket_bandwidth;       // between sockets; required when there are several
  std::string smi_source;             // file names, for the generated file's header
  std::string nccl_source;
};

// One link entry of the server template, before grouping.
struct DiscoveredLink {
  std::string from_base;  // "gpu", "nic", "pcie", "cpu"
  int from_index = 0;
  std::string to_base;     // "nvswitch" (no index), "gpu", "pcie", "cpu"
  int to_index = -1;       // -1: a single node without an index
  std::string attributes;  // "type: nvlink, generation: 4, count: 18"
};

// The server as discovered: counts of each node kind and the links between them.
struct DiscoveredServer {
  const KnownGpu* model = nullptr;
  int gpus = 0;
  bool nvswitch = false;
  int sockets = 1;
  int pcie_switches = 0;
  std::vector<std::string> nic_names;  // legend names (mlx5_0) or column names (NIC0)
  std::vector<std::string> gpu_notes;  // per GPU: bus id, affinity
  std::vector<DiscoveredLink> links;
  std::vector<std::string> assumptions;  // what neither input said, written as comments
};

// `nccl` may be null. Throws InputError for inconsistent inputs or missing options.
DiscoveredServer discover_server(const SmiTopology& smi, const NcclTopology* nccl,
                                 const DiscoverOptions& options);

// The topology file text for one server of that kind.
std::string topology_yaml(const DiscoveredServer& server, const DiscoverOptions& options);

}  // namespace cs::cal
