// The sockets: one per NUMA node the GPUs report (nvidia-smi's NUMA Affinity column), each NIC on
// the socket of the first GPU it reaches without crossing the SMP interconnect, and the links
// between sockets, whose bandwidth only --socket-bandwidth supplies.
#include <algorithm>
#include <string>

#include "calibration/discover/discover_steps.hpp"
#include "core/error.hpp"

namespace cs::cal {
namespace {

// Each GPU's socket, numbered by first appearance of its NUMA node (unknown: socket 0).
std::vector<int> sockets_of_gpus(const SmiTopology& smi, const std::vector<int>& gpus,
                                 int& sockets) {
  std::vector<std::string> numa_ids;
  std::vector<int> socket(gpus.size(), 0);
  for (size_t g = 0; g < gpus.size(); ++g) {
    const std::string& numa = smi.devices[gpus[g]].numa_affinity;
    if (numa.empty() || numa == "N/A") continue;
    auto found = std::find(numa_ids.begin(), numa_ids.end(), numa);
    if (found == numa_ids.end()) found = numa_ids.insert(numa_ids.end(), numa);
    socket[g] = static_cast<int>(found - numa_ids.begin());
  }
  sockets = std::max<int>(1, static_cast<int>(numa_ids.size()));
  return socket;
}

}  // namespace

SocketLayout socket_layout(const SmiTopology& smi, const DiscoveredDevices& devices,
                           const DiscoverOptions& options) {
  const std::vector<int>& gpus = devices.gpus;
  const std::vector<int>& nics = devices.nics;
  SocketLayout layout;
  layout.gpu_socket = sockets_of_gpus(smi, gpus, layout.sockets);
  layout.nic_socket.assign(nics.size(), 0);
  for (size_t n = 0; n < nics.size(); ++n) {
    for (size_t g = 0; g < gpus.size(); ++g) {
      if (smi.matrix[nics[n]][gpus[g]].link != SmiLink::sys) {
        layout.nic_socket[n] = layout.gpu_socket[g];
        break;
      }
    }
  }
  if (layout.sockets > 1 && options.socket_bandwidth.empty()) {
    // At the row of the first GPU on another NUMA node than the first GPU's.
    const std::vector<int>& gpu_socket = layout.gpu_socket;
    std::size_t other = 1;
    while (gpu_socket[other] == gpu_socket.front()) ++other;
    const SmiDevice& first = smi.devices[gpus.front()];
    const SmiDevice& second = smi.devices[gpus[other]];
    throw InputError(SourceLoc{options.smi_source, second.line}, "NUMA Affinity",
                     second.name + " is on NUMA node " + second.numa_affinity + ", " + first.name +
                         " on " + (first.numa_affinity.empty() ? "?" : first.numa_affinity) + ": " +
                         std::to_string(layout.sockets) +
                         " sockets, and neither input reports the bandwidth between them; give "
                         "--socket-bandwidth (e.g. UPI 2.0 x4 = 128GB/s)");
  }
  return layout;
}

std::vector<DiscoveredLink> socket_links(int sockets, const DiscoverOptions& options) {
  std::vector<DiscoveredLink> links;
  for (int a = 0; a < sockets; ++a) {
    for (int b = a + 1; b < sockets; ++b)
      links.push_back({"cpu", a, "cpu", b, "type: socket, bandwidth: " + options.socket_bandwidth});
  }
  return links;
}

}  // namespace cs::cal
