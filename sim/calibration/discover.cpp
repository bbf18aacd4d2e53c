// discover_server: GPU model, NVLink (NVSwitch or direct), NUMA sockets, PCIe switches and NICs
// from nvidia-smi's matrix, refined by NCCL's XML where given (it names NVSwitch and PCIe bridges,
// which nvidia-smi hides behind NV# cells).
#include "calibration/discover.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "core/error.hpp"
#include "core/units.hpp"

namespace cs::cal {
namespace {

// A command-line flag's error: no file, the flag as the key.
InputError flag_error(const std::string& flag, const std::string& message) {
  return InputError("key '" + flag + "': " + message);
}

int pcie_generation_from_gts(double gts) {
  // PCI-SIG: Gen1 2.5, Gen2 5, Gen3 8, Gen4 16, Gen5 32, Gen6 64 GT/s.
  const std::pair<double, int> table[] = {{2.5, 1}, {5, 2}, {8, 3}, {16, 4}, {32, 5}, {64, 6}};
  for (const auto& [rate, generation] : table) {
    if (gts > rate * 0.99 && gts < rate * 1.01) return generation;
  }
  return 0;
}

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

// Union-find over device indices.
int root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

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

DiscoveredServer discover_server(const SmiTopology& smi, const NcclTopology* nccl,
                                 const DiscoverOptions& options) {
  DiscoveredServer out;
  out.model = &resolve_model(nccl, options);
  const KnownGpu& model = *out.model;
  if (options.host_memory_bandwidth.empty()) {
    throw flag_error("--host-memory-bandwidth",
                     "required; neither nvidia-smi nor NCCL reports host DRAM bandwidth (e.g. 8 "
                     "channels DDR5-4800 = 307.2GB/s per socket)");
  }
  check_bandwidth(options.host_memory_bandwidth, "--host-memory-bandwidth");
  if (!options.socket_bandwidth.empty())
    check_bandwidth(options.socket_bandwidth, "--socket-bandwidth");

  std::vector<int> gpus;
  std::vector<int> nics;
  for (size_t d = 0; d < smi.devices.size(); ++d)
    (smi.devices[d].is_gpu ? gpus : nics).push_back(static_cast<int>(d));
  out.gpus = static_cast<int>(gpus.size());
  std::vector<const NcclGpu*> nccl_gpu(gpus.size(), nullptr);
  if (nccl != nullptr) {
    for (const NcclGpu& g : nccl->gpus) {
      if (g.dev < 0 || g.dev >= out.gpus) {
        throw InputError(g.loc, "dev",
                         "GPU dev " + std::to_string(g.dev) + " is not one of " +
                             options.smi_source + "'s " + std::to_string(out.gpus) + " GPUs");
      }
      nccl_gpu[g.dev] = &g;
    }
    if (nccl->gpus.size() != gpus.size()) {
      throw InputError(SourceLoc{options.nccl_source, 0}, "gpu",
                       "lists " + std::to_string(nccl->gpus.size()) + " GPUs, " +
                           options.smi_source + " " + std::to_string(out.gpus) +
                           " (dump NCCL's topology from a run over all GPUs)");
    }
  }

  // NVLink: through NVSwitch when NCCL says so; without NCCL, when 3+ GPUs all pair with the same
  // NV#, which no GPU has enough links to cable directly.
  bool any_nvlink = false;
  bool uniform = gpus.size() >= 3;
  const int first_k = gpus.size() >= 2 ? smi.matrix[gpus[0]][gpus[1]].nvlinks : 0;
  for (size_t i = 0; i < gpus.size(); ++i) {
    for (size_t j = i + 1; j < gpus.size(); ++j) {
      const SmiCell& c = smi.matrix[gpus[i]][gpus[j]];
      any_nvlink |= c.link == SmiLink::nvlink;
      uniform &= c.link == SmiLink::nvlink && c.nvlinks == first_k;
    }
  }
  if (nccl != nullptr) {
    out.nvswitch = std::any_of(nccl->gpus.begin(), nccl->gpus.end(), [](const NcclGpu& g) {
      return std::any_of(g.nvlinks.begin(), g.nvlinks.end(),
                         [](const NcclNvlink& l) { return l.to_nvswitch(); });
    });
  } else {
    out.nvswitch = uniform;
  }
  if ((any_nvlink || out.nvswitch) && model.nvlink_generation == 0)
    throw_nvlink_without_model(smi, gpus, nccl, model, options);
  const std::string nvlink_type =
      "type: nvlink, generation: " + std::to_string(model.nvlink_generation) + ", count: ";
  for (size_t g = 0; g < gpus.size(); ++g) {
    if (!out.nvswitch) break;
    int count = 0;
    if (nccl_gpu[g] != nullptr) {
      for (const NcclNvlink& l : nccl_gpu[g]->nvlinks) count += l.to_nvswitch() ? l.count : 0;
    } else {
      count = first_k;
    }
    if (count > 0)
      out.links.push_back(
          {"gpu", static_cast<int>(g), "nvswitch", -1, nvlink_type + std::to_string(count)});
  }
  for (size_t i = 0; i < gpus.size() && !out.nvswitch; ++i) {
    for (size_t j = i + 1; j < gpus.size(); ++j) {
      const SmiCell& c = smi.matrix[gpus[i]][gpus[j]];
      if (c.link == SmiLink::nvlink)
        out.links.push_back({"gpu", static_cast<int>(i), "gpu", static_cast<int>(j),
                             nvlink_type + std::to_string(c.nvlinks)});
    }
  }

  // Sockets from the GPUs' NUMA affinity; a NIC sits on the socket of the first GPU it reaches
  // without crossing the SMP interconnect.
  const std::vector<int> gpu_socket = sockets_of_gpus(smi, gpus, out.sockets);
  std::vector<int> nic_socket(nics.size(), 0);
  for (size_t n = 0; n < nics.size(); ++n) {
    for (size_t g = 0; g < gpus.size(); ++g) {
      if (smi.matrix[nics[n]][gpus[g]].link != SmiLink::sys) {
        nic_socket[n] = gpu_socket[g];
        break;
      }
    }
    const SmiDevice& d = smi.devices[nics[n]];
    out.nic_names.push_back(d.legend_name.empty() ? d.name : d.legend_name);
  }
  if (out.sockets > 1 && options.socket_bandwidth.empty()) {
    // At the row of the first GPU on another NUMA node than the first GPU's.
    std::size_t other = 1;
    while (gpu_socket[other] == gpu_socket.front()) ++other;
    const SmiDevice& first = smi.devices[gpus.front()];
    const SmiDevice& second = smi.devices[gpus[other]];
    throw InputError(SourceLoc{options.smi_source, second.line}, "NUMA Affinity",
                     second.name + " is on NUMA node " + second.numa_affinity + ", " + first.name +
                         " on " + (first.numa_affinity.empty() ? "?" : first.numa_affinity) + ": " +
                         std::to_string(out.sockets) +
                         " sockets, and neither input reports the bandwidth between them; give "
                         "--socket-bandwidth (e.g. UPI 2.0 x4 = 128GB/s)");
  }

  // PCIe switches: NCCL names the bridge above each device; without NCCL, devices that nvidia-smi
  // puts behind common bridges (PIX, PXB) share one. Devices: GPUs 0..G-1, then NICs.
  const int devices = static_cast<int>(gpus.size() + nics.size());
  auto smi_index = [&](int device) {
    return device < out.gpus ? gpus[device] : nics[device - out.gpus];
  };
  std::vector<int> parent(devices);
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<bool> behind_switch(devices, false);
  if (nccl != nullptr) {
    std::map<std::string, int> first_on_bridge;
    auto place = [&](int device, const std::vector<std::string>& bridges) {
      if (bridges.empty()) return;
      behind_switch[device] = true;
      const auto [it, fresh] = first_on_bridge.emplace(bridges.front(), device);
      if (!fresh) parent[root(parent, device)] = root(parent, it->second);
    };
    for (int g = 0; g < out.gpus; ++g) place(g, nccl_gpu[g]->switches);
    for (size_t n = 0; n < nics.size(); ++n) {
      for (const NcclNet& net : nccl->nets) {
        if (net.name == out.nic_names[n]) place(out.gpus + static_cast<int>(n), net.switches);
      }
    }
  } else {
    for (int a = 0; a < devices; ++a) {
      for (int b = a + 1; b < devices; ++b) {
        const SmiLink link = smi.matrix[smi_index(a)][smi_index(b)].link;
        if (link != SmiLink::pix && link != SmiLink::pxb) continue;
        behind_switch[a] = behind_switch[b] = true;
        parent[root(parent, b)] = root(parent, a);
      }
    }
  }
  std::map<int, int> switch_of_root;
  std::vector<int> switch_socket;
  std::vector<int> switch_generation;
  auto socket_of = [&](int device) {
    return device < out.gpus ? gpu_socket[device] : nic_socket[device - out.gpus];
  };
  for (int d = 0; d < devices; ++d) {
    if (!behind_switch[d] || switch_of_root.count(root(parent, d))) continue;
    switch_of_root[root(parent, d)] = static_cast<int>(switch_socket.size());
    switch_socket.push_back(socket_of(d));
    switch_generation.push_back(0);
  }
  out.pcie_switches = static_cast<int>(switch_socket.size());

  bool assumed_width = false;
  for (int d = 0; d < devices; ++d) {
    const bool is_gpu = d < out.gpus;
    int generation = model.pcie_generation;
    int width = 16;
    if (is_gpu && nccl_gpu[d] != nullptr) {
      const int measured = pcie_generation_from_gts(nccl_gpu[d]->link_gts);
      if (measured > 0) generation = measured;
      if (nccl_gpu[d]->link_width > 0) width = nccl_gpu[d]->link_width;
    }
    assumed_width |= !(is_gpu && nccl_gpu[d] != nullptr && nccl_gpu[d]->link_width > 0);
    const std::string base = is_gpu ? "gpu" : "nic";
    const int index = is_gpu ? d : d - out.gpus;
    const std::string attributes = "type: pcie, generation: " + std::to_string(generation) +
                                   ", width: " + std::to_string(width);
    if (behind_switch[d]) {
      const int s = switch_of_root[root(parent, d)];
      switch_generation[s] = std::max(switch_generation[s], generation);
      out.links.push_back({base, index, "pcie", s, attributes});
    } else {
      out.links.push_back({base, index, "cpu", socket_of(d), attributes});
    }
  }
  for (int s = 0; s < out.pcie_switches; ++s) {
    out.links.push_back(
        {"pcie", s, "cpu", switch_socket[s],
         "type: pcie, generation: " + std::to_string(switch_generation[s]) + ", width: 16"});
  }
  for (int a = 0; a < out.sockets; ++a) {
    for (int b = a + 1; b < out.sockets; ++b) {
      out.links.push_back(
          {"cpu", a, "cpu", b, "type: socket, bandwidth: " + options.socket_bandwidth});
    }
  }

  for (int g = 0; g < out.gpus; ++g) {
    const SmiDevice& d = smi.devices[gpus[g]];
    std::string note = d.name + ":";
    if (nccl_gpu[g] != nullptr) note += " bus " + nccl_gpu[g]->busid + ",";
    note += " CPU affinity " + (d.cpu_affinity.empty() ? std::string("?") : d.cpu_affinity) +
            ", NUMA " + (d.numa_affinity.empty() ? std::string("?") : d.numa_affinity);
    out.gpu_notes.push_back(note);
  }
  if (assumed_width) {
    out.assumptions.push_back(nccl ? "PCIe width: NCCL reports 0 lanes (as in a VM) or the link is "
                                     "not a GPU's; x16 assumed"
                                   : "PCIe generation: the GPU model's host interface; width x16 "
                                     "assumed (nvidia-smi topo -m reports neither)");
  }
  if (out.pcie_switches > 0)
    out.assumptions.push_back(
        "PCIe switch uplinks: x16 at the fastest member's generation (not reported)");
  if (nccl == nullptr && !out.nvswitch && gpus.size() >= 2 && any_nvlink) {
    out.assumptions.push_back(
        "NVLink cabled directly between GPU pairs (no NCCL XML to show an NVSwitch)");
  }
  if (nccl == nullptr && any_nvlink) {
    out.assumptions.push_back(
        "PCIe switches shared by GPUs hide behind NV# cells in nvidia-smi topo -m; give --nccl-xml "
        "to see them");
  }
  return out;
}

}  // namespace cs::cal
