// Parser of `nvidia-smi topo -m` text: the device matrix (GPUs and NICs, how each pair connects),
// each GPU's CPU and NUMA affinity, and the NIC legend. Pure: text in, struct out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cs::cal {

// How nvidia-smi says two devices connect (its legend), fastest first.
enum class SmiLink {
  self,    // X
  nvlink,  // NV#: a bonded set of # NVLinks
  pix,     // at most one PCIe bridge
  pxb,     // several PCIe bridges, no host bridge
  phb,     // through a PCIe host bridge (the CPU)
  node,    // between host bridges of one NUMA node
  sys,     // across NUMA nodes (SMP interconnect); older drivers print SOC
};

const char* to_string(SmiLink link);

struct SmiCell {
  SmiLink link = SmiLink::sys;
  int nvlinks = 0;  // the # of NV#, else 0
};

struct SmiDevice {
  std::string name;  // column name: GPU0, NIC0 (or mlx5_0 on older drivers)
  bool is_gpu = false;
  std::string legend_name;    // NIC legend ("mlx5_0"), empty if none
  std::string cpu_affinity;   // GPUs: "0-63"; empty if not printed
  std::string numa_affinity;  // GPUs: "0"; "N/A" or empty if unknown
  int line = 0;               // line of its row in the text
};

struct SmiTopology {
  std::vector<SmiDevice> devices;            // in column order
  std::vector<std::vector<SmiCell>> matrix;  // [row][column], both in device order
  int gpu_count() const;
};

// Throws InputError("<source>:<line>: key '<column>': ...") for text that is not topo -m output.
SmiTopology parse_nvidia_smi_topo(std::string_view text, const std::string& source);

}  // namespace cs::cal
