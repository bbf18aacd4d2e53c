// The steps of discover_server (discover.cpp), each deciding one part of the server from the
// nvidia-smi matrix and, where given, NCCL's XML: the flags and GPU model, which device is which,
// the NVLink graph, the sockets, the PCIe tree and what the output notes and assumes.
#pragma once

#include <string>
#include <vector>

#include "calibration/discover/discover.hpp"

namespace cs::cal {

// nvidia-smi's devices split into GPUs and NICs (indices into SmiTopology::devices, column order),
// and each GPU's NCCL entry (null without the XML).
struct DiscoveredDevices {
  std::vector<int> gpus;
  std::vector<int> nics;
  std::vector<const NcclGpu*> nccl_gpu;  // by GPU index
};

// What the matrix (and XML) say about NVLink.
struct NvlinkShape {
  bool any_nvlink = false;  // some NV# cell between two GPUs
  bool nvswitch = false;    // GPUs reach each other through an NVSwitch
  int first_k = 0;          // GPU0-GPU1's NV#: each GPU's link count to the NVSwitch without XML
};

// The socket of each GPU and NIC: the GPUs' NUMA nodes, numbered in order of first appearance.
struct SocketLayout {
  int sockets = 1;
  std::vector<int> gpu_socket;
  std::vector<int> nic_socket;
};

// The PCIe switches and every PCIe link.
struct PcieTree {
  int switches = 0;
  std::vector<DiscoveredLink> links;
};

// discover_flags.cpp
// The GPU model from --gpu, else the XML's PCI device; InputError naming the known models.
const KnownGpu& resolve_model(const NcclTopology* nccl, const DiscoverOptions& options);
// --host-memory-bandwidth is required, and both bandwidth flags are rates above 0.
void check_bandwidth_flags(const DiscoverOptions& options);

// discover_devices.cpp
// GPUs and NICs of the matrix, each GPU matched to the XML's <gpu> of its dev.
DiscoveredDevices match_devices(const SmiTopology& smi, const NcclTopology* nccl,
                                const DiscoverOptions& options);
// Each NIC's legend name (mlx5_0), else its column name (NIC0).
std::vector<std::string> nic_names(const SmiTopology& smi, const DiscoveredDevices& devices);

// discover_nvlink.cpp
// Whether GPUs share NVLink and whether through an NVSwitch; InputError for NVLink on a model
// without it.
NvlinkShape nvlink_shape(const SmiTopology& smi, const NcclTopology* nccl,
                         const DiscoveredDevices& devices, const KnownGpu& model,
                         const DiscoverOptions& options);
// Each GPU's link to the NVSwitch, or one link per NV# pair when cabled directly.
std::vector<DiscoveredLink> nvlink_links(const SmiTopology& smi, const DiscoveredDevices& devices,
                                         const NvlinkShape& shape, const KnownGpu& model);

// discover_sockets.cpp
// Sockets from the GPUs' NUMA affinity; InputError for several without --socket-bandwidth.
SocketLayout socket_layout(const SmiTopology& smi, const DiscoveredDevices& devices,
                           const DiscoverOptions& options);
// One socket link between each pair of sockets.
std::vector<DiscoveredLink> socket_links(int sockets, const DiscoverOptions& options);

// discover_pcie.cpp
// Every GPU's and NIC's PCIe link (to its switch or its socket), then each switch's uplink.
PcieTree pcie_tree(const SmiTopology& smi, const NcclTopology* nccl,
                   const DiscoveredDevices& devices, const SocketLayout& layout,
                   const std::vector<std::string>& nic_names, const KnownGpu& model);

// discover_notes.cpp
// Per GPU: its name, bus id (from the XML), CPU and NUMA affinity.
std::vector<std::string> gpu_notes(const SmiTopology& smi, const DiscoveredDevices& devices);
// What neither input reports and the output assumes, as comments of the topology file.
std::vector<std::string> assumptions(const NcclTopology* nccl, const DiscoveredDevices& devices,
                                     const NvlinkShape& shape, int pcie_switches);

}  // namespace cs::cal
