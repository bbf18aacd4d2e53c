// The table of GPU models discovery knows, with the source of every figure.
#include "calibration/discover/discover_models.hpp"

#include <algorithm>
#include <cctype>

namespace cs::cal {

const std::vector<KnownGpu>& known_gpus() {
  // Rates are dense (no sparsity). "hardware.md" in the sources below stands for the GPU table of
  // topologies/README.md, "Sources" (each figure from the NVIDIA datasheet of the part); FP32 and
  // FP16 from the same datasheets. PCI ids: the PCI ID repository (pci-ids.ucw.cz); 0x2335 was
  // also read from NCCL's dump on the H200 calibration machines (calibrate/data/h200x4).
  static const std::vector<KnownGpu> table = {
      {"H200-SXM-141GB", "NVIDIA H200", "0x2335", "989TFLOPS", "989TFLOPS", "67TFLOPS", "141GB",
       "4.8TB/s", 4, 5,
       "hardware.md (bf16, memory, bandwidth); NVIDIA H200 datasheet (fp16 = bf16 dense, fp32 67)"},
      {"H100-SXM5-80GB", "NVIDIA H100 80GB HBM3", "0x2330", "989TFLOPS", "989TFLOPS", "67TFLOPS",
       "80GB", "3.35TB/s", 4, 5,
       "hardware.md (bf16, memory, bandwidth); NVIDIA H100 datasheet (fp16 = bf16 dense, fp32 67)"},
      {"A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", "0x20b2", "312TFLOPS", "312TFLOPS", "19.5TFLOPS",
       "80GB", "2.0TB/s", 3, 4,
       "hardware.md (bf16, memory, bandwidth); NVIDIA A100 datasheet (fp16 = bf16 dense, fp32 "
       "19.5)"},
      {"A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB", "0x20b0", "312TFLOPS", "312TFLOPS", "19.5TFLOPS",
       "40GB", "1.6TB/s", 3, 4,
       "hardware.md (bf16, memory, bandwidth); NVIDIA A100 datasheet (fp16 = bf16 dense, fp32 "
       "19.5)"},
      {"L40S", "NVIDIA L40S", "0x26b9", "362TFLOPS", "362TFLOPS", "91.6TFLOPS", "48GB", "864GB/s",
       0, 4,
       "hardware.md (bf16, memory); NVIDIA L40S datasheet (fp16 = bf16 dense, fp32 91.6, 864 GB/s, "
       "PCIe Gen4)"},
  };
  return table;
}

namespace {
std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}
}  // namespace

const KnownGpu* find_gpu_by_name(const std::string& smi_name) {
  for (const KnownGpu& gpu : known_gpus()) {
    if (lower(gpu.smi_name) == lower(smi_name) || lower(gpu.model) == lower(smi_name)) return &gpu;
  }
  return nullptr;
}

const KnownGpu* find_gpu_by_pci_device(const std::string& pci_device) {
  for (const KnownGpu& gpu : known_gpus()) {
    if (lower(gpu.pci_device) == lower(pci_device)) return &gpu;
  }
  return nullptr;
}

}  // namespace cs::cal
