// The NVLink graph: through an NVSwitch when NCCL's XML says so (or, without it, when 3+ GPUs all
// pair with the same NV#, which no GPU has enough links to cable directly), else cabled between the
// GPU pairs whose matrix cell is NV#.
#include <algorithm>
#include <string>

#include "calibration/discover/discover_steps.hpp"
#include "core/error.hpp"

namespace cs::cal {
namespace {

// NVLink in the inputs (a NV# cell of nvidia-smi's matrix, else an NVSwitch link in NCCL's XML)
// on a GPU model without it: the error points at that cell or element and names where the model
// came from (--gpu, or the XML's PCI device).
[[noreturn]] void throw_nvlink_without_model(const SmiTopology& smi, const std::vector<int>& gpus,
                                             const NcclTopology* nccl, const KnownGpu& model,
                                             const DiscoverOptions& options) {
  const std::string from = !options.gpu.empty() || nccl == nullptr
                               ? "--gpu '" + options.gpu + "'"
                               : "the NCCL XML's PCI device " + nccl->gpus.front().pci_device;
  const std::string has_none = ", but " + from + " is " + model.model +
                               ", which has no NVLink; check " +
                               (options.gpu.empty() ? "the inputs" : "--gpu");
  for (const int r : gpus) {
    for (const int c : gpus) {
      const SmiCell& cell = smi.matrix[r][c];
      if (cell.link != SmiLink::nvlink) continue;
      throw InputError(SourceLoc{options.smi_source, smi.devices[r].line}, smi.devices[c].name,
                       smi.devices[r].name + " and " + smi.devices[c].name + " connect by NV" +
                           std::to_string(cell.nvlinks) + has_none);
    }
  }
  for (std::size_t i = 0; nccl != nullptr && i < nccl->gpus.size(); ++i) {
    const NcclGpu& g = nccl->gpus[i];
    for (const NcclNvlink& l : g.nvlinks) {
      if (l.to_nvswitch())
        throw InputError(
            g.loc, "nvlink",
            "GPU dev " + std::to_string(g.dev) + " has NVLinks to an NVSwitch" + has_none);
    }
  }
  throw InternalError("discover: NVLink was seen, but neither input shows where");
}

}  // namespace

NvlinkShape nvlink_shape(const SmiTopology& smi, const NcclTopology* nccl,
                         const DiscoveredDevices& devices, const KnownGpu& model,
                         const DiscoverOptions& options) {
  const std::vector<int>& gpus = devices.gpus;
  NvlinkShape shape;
  bool uniform = gpus.size() >= 3;
  shape.first_k = gpus.size() >= 2 ? smi.matrix[gpus[0]][gpus[1]].nvlinks : 0;
  for (size_t i = 0; i < gpus.size(); ++i) {
    for (size_t j = i + 1; j < gpus.size(); ++j) {
      const SmiCell& c = smi.matrix[gpus[i]][gpus[j]];
      shape.any_nvlink |= c.link == SmiLink::nvlink;
      uniform &= c.link == SmiLink::nvlink && c.nvlinks == shape.first_k;
    }
  }
  if (nccl != nullptr) {
    shape.nvswitch = std::any_of(nccl->gpus.begin(), nccl->gpus.end(), [](const NcclGpu& g) {
      return std::any_of(g.nvlinks.begin(), g.nvlinks.end(),
                         [](const NcclNvlink& l) { return l.to_nvswitch(); });
    });
  } else {
    shape.nvswitch = uniform;
  }
  if ((shape.any_nvlink || shape.nvswitch) && model.nvlink_generation == 0)
    throw_nvlink_without_model(smi, gpus, nccl, model, options);
  return shape;
}

std::vector<DiscoveredLink> nvlink_links(const SmiTopology& smi, const DiscoveredDevices& devices,
                                         const NvlinkShape& shape, const KnownGpu& model) {
  const std::vector<int>& gpus = devices.gpus;
  const std::string nvlink_type =
      "type: nvlink, generation: " + std::to_string(model.nvlink_generation) + ", count: ";
  std::vector<DiscoveredLink> links;
  if (shape.nvswitch) {
    for (size_t g = 0; g < gpus.size(); ++g) {
      int count = 0;
      if (devices.nccl_gpu[g] != nullptr) {
        for (const NcclNvlink& l : devices.nccl_gpu[g]->nvlinks)
          count += l.to_nvswitch() ? l.count : 0;
      } else {
        count = shape.first_k;
      }
      if (count > 0)
        links.push_back(
            {"gpu", static_cast<int>(g), "nvswitch", -1, nvlink_type + std::to_string(count)});
    }
    return links;
  }
  for (size_t i = 0; i < gpus.size(); ++i) {
    for (size_t j = i + 1; j < gpus.size(); ++j) {
      const SmiCell& c = smi.matrix[gpus[i]][gpus[j]];
      if (c.link == SmiLink::nvlink)
        links.push_back({"gpu", static_cast<int>(i), "gpu", static_cast<int>(j),
                         nvlink_type + std::to_string(c.nvlinks)});
    }
  }
  return links;
}

}  // namespace cs::cal
