// Which of nvidia-smi's devices are GPUs and which NICs, what each NIC is called, and which
// <gpu> of NCCL's XML describes each GPU (by its CUDA dev, which must name one of the matrix's).
#include <string>

#include "calibration/discover/discover_steps.hpp"
#include "core/error.hpp"

namespace cs::cal {

DiscoveredDevices match_devices(const SmiTopology& smi, const NcclTopology* nccl,
                                const DiscoverOptions& options) {
  DiscoveredDevices out;
  for (size_t d = 0; d < smi.devices.size(); ++d)
    (smi.devices[d].is_gpu ? out.gpus : out.nics).push_back(static_cast<int>(d));
  const int gpus = static_cast<int>(out.gpus.size());
  out.nccl_gpu.assign(out.gpus.size(), nullptr);
  if (nccl == nullptr) return out;
  for (const NcclGpu& g : nccl->gpus) {
    if (g.dev < 0 || g.dev >= gpus) {
      throw InputError(g.loc, "dev",
                       "GPU dev " + std::to_string(g.dev) + " is not one of " + options.smi_source +
                           "'s " + std::to_string(gpus) + " GPUs");
    }
    out.nccl_gpu[g.dev] = &g;
  }
  if (nccl->gpus.size() != out.gpus.size()) {
    throw InputError(SourceLoc{options.nccl_source, 0}, "gpu",
                     "lists " + std::to_string(nccl->gpus.size()) + " GPUs, " + options.smi_source +
                         " " + std::to_string(gpus) +
                         " (dump NCCL's topology from a run over all GPUs)");
  }
  return out;
}

std::vector<std::string> nic_names(const SmiTopology& smi, const DiscoveredDevices& devices) {
  std::vector<std::string> names;
  for (const int n : devices.nics) {
    const SmiDevice& d = smi.devices[n];
    names.push_back(d.legend_name.empty() ? d.name : d.legend_name);
  }
  return names;
}

}  // namespace cs::cal
