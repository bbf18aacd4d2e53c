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
      // Hopper and Blackwell parts added for issue 41; each figure, dense, with its datasheet in
      // topologies/README.md, "Sources". The PCIe generation is the slot's or the board switch's
      // the GPU trains at (B200 and GB200 can run Gen6; HGX B200 and GB200 trays wire Gen5).
      {"H100-PCIe-80GB", "NVIDIA H100 PCIe", "0x2331", "756.5TFLOPS", "756.5TFLOPS", "51TFLOPS",
       "80GB", "2.0TB/s", 4, 5,
       "NVIDIA H100 PCIe product brief PB-11133-001 and H100 datasheet, PCIe column (bf16 = fp16 "
       "1,513 sparse / 2, fp32 51, 80 GB HBM2e, 2.0 TB/s, NVLink bridge 600 GB/s = NVLink4 x12)"},
      {"H100-NVL-94GB", "NVIDIA H100 NVL", "0x2321", "835.5TFLOPS", "835.5TFLOPS", "60TFLOPS",
       "94GB", "3.9TB/s", 4, 5,
       "NVIDIA H100 datasheet, H100 NVL column (bf16 = fp16 1,671 sparse / 2, fp32 60, 94 GB, "
       "3.9 TB/s, NVLink bridge 600 GB/s); PCI id 0x2321 uncertain (not confirmed here)"},
      {"H20-96GB", "NVIDIA H20", "0x2329", "148TFLOPS", "148TFLOPS", "44TFLOPS", "96GB", "4.0TB/s",
       4, 5,
       "NVIDIA H20 product brief as published by partners (no public nvidia.com datasheet): bf16 = "
       "fp16 148 dense, fp32 44, 96 GB HBM3, 4.0 TB/s, NVLink 900 GB/s; uncertain"},
      {"B200-SXM-180GB", "NVIDIA B200", "0x2901", "2250TFLOPS", "2250TFLOPS", "75TFLOPS", "180GB",
       "8TB/s", 5, 5,
       "NVIDIA HGX B200 specifications (nvidia.com/en-us/data-center/hgx) / DGX B200 datasheet, "
       "per "
       "GPU: bf16 = fp16 36 PFLOPS sparse / 8 / 2, fp32 600 / 8, 1,440 GB / 8, 64 TB/s / 8, "
       "NVLink5 "
       "1.8 TB/s"},
      {"GB200-186GB", "NVIDIA GB200", "0x2941", "2500TFLOPS", "2500TFLOPS", "80TFLOPS", "186GB",
       "8TB/s", 5, 5,
       "NVIDIA GB200 NVL72 specifications (nvidia.com/en-us/data-center/gb200-nvl72), per GPU: "
       "bf16 "
       "= fp16 5 PFLOPS sparse / 2, 186 GB HBM3e, 8 TB/s, NVLink5 1.8 TB/s; fp32 uncertain "
       "(80-90); "
       "NVLink-C2C to Grace is written as PCIe Gen5"},
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
