// The GPU models discovery can name: how nvidia-smi and PCI identify them, and the datasheet
// figures a topology file needs for them (topologies/README.md, gpu_models).
#pragma once

#include <string>
#include <vector>

namespace cs::cal {

struct KnownGpu {
  const char* model;       // the topology file's model name, e.g. H200-SXM-141GB
  const char* smi_name;    // nvidia-smi's product name, e.g. "NVIDIA H200"
  const char* pci_device;  // PCI device id as NCCL's XML writes it, e.g. 0x2335
  const char* bf16;        // dense tensor rates, memory and its bandwidth, in topology-file units
  const char* fp16;
  const char* fp32;
  const char* memory;
  const char* memory_bandwidth;
  int nvlink_generation;  // 0: no NVLink
  int pcie_generation;    // the GPU's host interface
  const char* source;     // where the figures come from
};

const std::vector<KnownGpu>& known_gpus();

// By nvidia-smi name (exact, case-insensitive) or by PCI device id; nullptr if unknown.
const KnownGpu* find_gpu_by_name(const std::string& smi_name);
const KnownGpu* find_gpu_by_pci_device(const std::string& pci_device);

}  // namespace cs::cal
