// discover_server: GPU model, NVLink (NVSwitch or direct), NUMA sockets, PCIe switches and NICs
// from nvidia-smi's matrix, refined by NCCL's XML where given (it names NVSwitch and PCIe bridges,
// which nvidia-smi hides behind NV# cells). Each step is one file (discover_steps.hpp); this one
// runs them in the order their errors are reported and gathers the links in output order.
#include "calibration/discover/discover.hpp"

#include "calibration/discover/discover_steps.hpp"

namespace cs::cal {
namespace {

void append(std::vector<DiscoveredLink>& links, const std::vector<DiscoveredLink>& more) {
  links.insert(links.end(), more.begin(), more.end());
}

}  // namespace

DiscoveredServer discover_server(const SmiTopology& smi, const NcclTopology* nccl,
                                 const DiscoverOptions& options) {
  DiscoveredServer out;
  out.model = &resolve_model(nccl, options);
  const KnownGpu& model = *out.model;
  check_bandwidth_flags(options);
  const DiscoveredDevices devices = match_devices(smi, nccl, options);
  out.gpus = static_cast<int>(devices.gpus.size());
  const NvlinkShape nvlink = nvlink_shape(smi, nccl, devices, model, options);
  out.nvswitch = nvlink.nvswitch;
  append(out.links, nvlink_links(smi, devices, nvlink, model));
  out.nic_names = nic_names(smi, devices);
  const SocketLayout layout = socket_layout(smi, devices, options);
  out.sockets = layout.sockets;
  const PcieTree pcie = pcie_tree(smi, nccl, devices, layout, out.nic_names, model);
  out.pcie_switches = pcie.switches;
  append(out.links, pcie.links);
  append(out.links, socket_links(out.sockets, options));
  out.gpu_notes = gpu_notes(smi, devices);
  out.assumptions = assumptions(nccl, devices, nvlink, out.pcie_switches);
  return out;
}

}  // namespace cs::cal
