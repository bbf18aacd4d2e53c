// Parser of NCCL's topology dump (NCCL_TOPO_DUMP_FILE): CPUs (NUMA domains), the PCIe tree, GPUs
// with their NVLinks, and network devices. Pure: text in, struct out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace cs::cal {

struct NcclNvlink {
  std::string target_busid;  // a GPU's bus id, or NVSwitch's (often ffffffff:ff:ff.0)
  std::string target_class;  // PCI class of the target: 0x030200 GPU, 0x068000 NVSwitch
  int count = 0;             // links
  bool to_nvswitch() const { return target_class == "0x068000"; }
};

struct NcclGpu {
  int dev = -1;                       // CUDA device index
  int sm = 0;                         // compute capability x 10
  std::string busid;                  // of the GPU's pci element
  std::string pci_device;             // PCI device id, e.g. 0x2335 (H200 SXM)
  double link_gts = 0;                // PCIe link speed in GT/s (0 if unknown)
  int link_width = 0;                 // PCIe lanes (0 if unknown, as in VMs)
  int cpu = -1;                       // index into NcclTopology::cpu_numa
  std::vector<std::string> switches;  // bus ids of the PCIe bridges above it, outermost first
  std::vector<NcclNvlink> nvlinks;
  SourceLoc loc;  // the line of its <gpu> element
};

struct NcclNet {
  std::string name;       // e.g. mlx5_0, eth0
  double speed_mbps = 0;  // as NCCL reports it (Mb/s)
  int cpu = -1;
  std::vector<std::string> switches;  // PCIe bridges above its NIC (empty: on the CPU)
};

struct NcclTopology {
  std::vector<std::string> cpu_numa;  // numaid of each cpu element, in order
  std::vector<NcclGpu> gpus;          // in document order
  std::vector<NcclNet> nets;
};

// Throws InputError("<source>:<line>: key 'k': ...") when the text is not XML, has no <system>,
// an attribute that must be a count is not one, or two GPUs share a dev.
NcclTopology parse_nccl_topo_xml(std::string_view xml, const std::string& source);

// "32.0 GT/s PCIe" -> 32; 0 when the text holds no number.
double parse_link_speed_gts(const std::string& text);

}  // namespace cs::cal
