// What discover's flags decide before the inputs are read for links: the GPU model (--gpu, else
// the PCI device of NCCL's XML) and the bandwidth flags, which must be rates above 0.
#include <string>

#include "calibration/discover/discover_steps.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace cs::cal {
namespace {

// A command-line flag's error: no file, the flag as the key.
InputError flag_error(const std::string& flag, const std::string& message) {
  return InputError("key '" + flag + "': " + message);
}

// A bandwidth flag: a rate with its unit, above 0 (it becomes a link or memory of the topology).
void check_bandwidth(const std::string& text, const std::string& flag) {
  double Bps = 0;
  try {
    Bps = units::parse_bandwidth_Bps(text);
  } catch (const UnitError& e) {
    throw flag_error(flag, e.what());
  }
  if (!(Bps > 0)) throw flag_error(flag, "'" + text + "' must be above 0");
}

}  // namespace

const KnownGpu& resolve_model(const NcclTopology* nccl, const DiscoverOptions& options) {
  const KnownGpu* model = nullptr;
  if (!options.gpu.empty()) {
    model = find_gpu_by_name(options.gpu);
  } else if (nccl != nullptr) {
    model = find_gpu_by_pci_device(nccl->gpus.front().pci_device);
  }
  if (model == nullptr) {
    std::string known;
    for (const KnownGpu& g : known_gpus())
      known += std::string(known.empty() ? "" : ", ") + "'" + g.smi_name + "'";
    const std::string what =
        options.gpu.empty()
            ? (nccl ? "PCI device " + nccl->gpus.front().pci_device +
                          " of the NCCL XML is not a known GPU"
                    : options.smi_source + " (nvidia-smi topo -m) does not name the GPU model")
            : "unknown GPU '" + options.gpu + "'";
    const std::string message = what + "; give --gpu with one of " + known;
    if (!options.gpu.empty()) throw flag_error("--gpu", message);
    if (nccl != nullptr) throw InputError(nccl->gpus.front().loc, "device", message);
    // Nothing in the file is wrong: the model is missing from it, and only a flag supplies it.
    throw flag_error("--gpu", "required without --nccl-xml: " + message);
  }
  return *model;
}

void check_bandwidth_flags(const DiscoverOptions& options) {
  if (options.host_memory_bandwidth.empty()) {
    throw flag_error("--host-memory-bandwidth",
                     "required; neither nvidia-smi nor NCCL reports host DRAM bandwidth (e.g. 8 "
                     "channels DDR5-4800 = 307.2GB/s per socket)");
  }
  check_bandwidth(options.host_memory_bandwidth, "--host-memory-bandwidth");
  if (!options.socket_bandwidth.empty())
    check_bandwidth(options.socket_bandwidth, "--socket-bandwidth");
}

}  // namespace cs::cal
