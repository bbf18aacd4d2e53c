// The PCIe tree: which devices share a switch (NCCL's XML names the bridge above each device;
// without it, devices that nvidia-smi puts behind common bridges, PIX or PXB, share one), and
// each device's link to its switch or socket at the generation and width NCCL reports (else the
// GPU model's host interface, x16).
#include <algorithm>
#include <map>
#include <numeric>
#include <string>

#include "calibration/discover/discover_steps.hpp"

namespace cs::cal {
namespace {

// PCI-SIG: Gen1 2.5, Gen2 5, Gen3 8, Gen4 16, Gen5 32, Gen6 64 GT/s; 0 for another rate.
int pcie_generation_from_gts(double gts) {
  const std::pair<double, int> table[] = {{2.5, 1}, {5, 2}, {8, 3}, {16, 4}, {32, 5}, {64, 6}};
  for (const auto& [rate, generation] : table) {
    if (gts > rate * 0.99 && gts < rate * 1.01) return generation;
  }
  return 0;
}

// Union-find over device indices.
int root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

// The switch each device sits behind, numbered in order of their first device; -1: on its socket.
// Devices: GPUs 0..G-1, then NICs.
std::vector<int> switch_of_devices(const SmiTopology& smi, const NcclTopology* nccl,
                                   const DiscoveredDevices& devices,
                                   const std::vector<std::string>& nic_names) {
  const int gpus = static_cast<int>(devices.gpus.size());
  const int count = static_cast<int>(devices.gpus.size() + devices.nics.size());
  auto smi_index = [&](int device) {
    return device < gpus ? devices.gpus[device] : devices.nics[device - gpus];
  };
  std::vector<int> parent(count);
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<bool> behind_switch(count, false);
  if (nccl != nullptr) {
    std::map<std::string, int> first_on_bridge;
    auto place = [&](int device, const std::vector<std::string>& bridges) {
      if (bridges.empty()) return;
      behind_switch[device] = true;
      const auto [it, fresh] = first_on_bridge.emplace(bridges.front(), device);
      if (!fresh) parent[root(parent, device)] = root(parent, it->second);
    };
    for (int g = 0; g < gpus; ++g) place(g, devices.nccl_gpu[g]->switches);
    for (size_t n = 0; n < devices.nics.size(); ++n) {
      for (const NcclNet& net : nccl->nets) {
        if (net.name == nic_names[n]) place(gpus + static_cast<int>(n), net.switches);
      }
    }
  } else {
    for (int a = 0; a < count; ++a) {
      for (int b = a + 1; b < count; ++b) {
        const SmiLink link = smi.matrix[smi_index(a)][smi_index(b)].link;
        if (link != SmiLink::pix && link != SmiLink::pxb) continue;
        behind_switch[a] = behind_switch[b] = true;
        parent[root(parent, b)] = root(parent, a);
      }
    }
  }
  std::map<int, int> switch_of_root;
  std::vector<int> switch_of(count, -1);
  for (int d = 0; d < count; ++d) {
    if (!behind_switch[d]) continue;
    const int fresh = static_cast<int>(switch_of_root.size());
    switch_of[d] = switch_of_root.emplace(root(parent, d), fresh).first->second;
  }
  return switch_of;
}

}  // namespace

PcieTree pcie_tree(const SmiTopology& smi, const NcclTopology* nccl,
                   const DiscoveredDevices& devices, const SocketLayout& layout,
                   const std::vector<std::string>& nic_names, const KnownGpu& model) {
  const int gpus = static_cast<int>(devices.gpus.size());
  const int count = static_cast<int>(devices.gpus.size() + devices.nics.size());
  auto socket_of = [&](int device) {
    return device < gpus ? layout.gpu_socket[device] : layout.nic_socket[device - gpus];
  };
  const std::vector<int> switch_of = switch_of_devices(smi, nccl, devices, nic_names);
  // Each switch on the socket of its first device.
  std::vector<int> switch_socket;
  for (int d = 0; d < count; ++d) {
    if (switch_of[d] == static_cast<int>(switch_socket.size()))
      switch_socket.push_back(socket_of(d));
  }
  PcieTree out;
  out.switches = static_cast<int>(switch_socket.size());
  std::vector<int> switch_generation(switch_socket.size(), 0);
  for (int d = 0; d < count; ++d) {
    const bool is_gpu = d < gpus;
    const NcclGpu* nccl_gpu = is_gpu ? devices.nccl_gpu[d] : nullptr;
    int generation = model.pcie_generation;
    int width = 16;
    if (nccl_gpu != nullptr) {
      const int measured = pcie_generation_from_gts(nccl_gpu->link_gts);
      if (measured > 0) generation = measured;
      if (nccl_gpu->link_width > 0) width = nccl_gpu->link_width;
    }
    const std::string base = is_gpu ? "gpu" : "nic";
    const int index = is_gpu ? d : d - gpus;
    const std::string attributes = "type: pcie, generation: " + std::to_string(generation) +
                                   ", width: " + std::to_string(width);
    if (switch_of[d] >= 0) {
      const int s = switch_of[d];
      switch_generation[s] = std::max(switch_generation[s], generation);
      out.links.push_back({base, index, "pcie", s, attributes});
    } else {
      out.links.push_back({base, index, "cpu", socket_of(d), attributes});
    }
  }
  for (int s = 0; s < out.switches; ++s) {
    out.links.push_back(
        {"pcie", s, "cpu", switch_socket[s],
         "type: pcie, generation: " + std::to_string(switch_generation[s]) + ", width: 16"});
  }
  return out;
}

}  // namespace cs::cal
