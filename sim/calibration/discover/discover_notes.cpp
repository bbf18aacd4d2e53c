// What the topology file says beside its links: each GPU as the inputs name it (bus id, CPU and
// NUMA affinity), and what neither input reports and discovery assumed.
#include <string>

#include "calibration/discover/discover_steps.hpp"

namespace cs::cal {

std::vector<std::string> gpu_notes(const SmiTopology& smi, const DiscoveredDevices& devices) {
  std::vector<std::string> notes;
  for (size_t g = 0; g < devices.gpus.size(); ++g) {
    const SmiDevice& d = smi.devices[devices.gpus[g]];
    std::string note = d.name + ":";
    if (devices.nccl_gpu[g] != nullptr) note += " bus " + devices.nccl_gpu[g]->busid + ",";
    note += " CPU affinity " + (d.cpu_affinity.empty() ? std::string("?") : d.cpu_affinity) +
            ", NUMA " + (d.numa_affinity.empty() ? std::string("?") : d.numa_affinity);
    notes.push_back(note);
  }
  return notes;
}

std::vector<std::string> assumptions(const NcclTopology* nccl, const DiscoveredDevices& devices,
                                     const NvlinkShape& shape, int pcie_switches) {
  // Only a GPU's <pci> in NCCL's XML gives a width: every NIC, and every GPU without one, is x16.
  bool assumed_width = !devices.nics.empty();
  for (const NcclGpu* g : devices.nccl_gpu) assumed_width |= !(g != nullptr && g->link_width > 0);
  std::vector<std::string> out;
  if (assumed_width) {
    out.push_back(nccl ? "PCIe width: NCCL reports 0 lanes (as in a VM) or the link is "
                         "not a GPU's; x16 assumed"
                       : "PCIe generation: the GPU model's host interface; width x16 "
                         "assumed (nvidia-smi topo -m reports neither)");
  }
  if (pcie_switches > 0)
    out.push_back("PCIe switch uplinks: x16 at the fastest member's generation (not reported)");
  if (nccl == nullptr && !shape.nvswitch && devices.gpus.size() >= 2 && shape.any_nvlink)
    out.push_back("NVLink cabled directly between GPU pairs (no NCCL XML to show an NVSwitch)");
  if (nccl == nullptr && shape.any_nvlink) {
    out.push_back(
        "PCIe switches shared by GPUs hide behind NV# cells in nvidia-smi topo -m; give --nccl-xml "
        "to see them");
  }
  return out;
}

}  // namespace cs::cal
