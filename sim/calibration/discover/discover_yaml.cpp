// topology_yaml: writes a DiscoveredServer in the topology file format (topologies/README.md),
// grouping like links into pattern entries ("gpu[0-3]" -> nvswitch) and commenting what was
// discovered and what was assumed.
#include <algorithm>
#include <cctype>

#include "calibration/discover/discover.hpp"

namespace cs::cal {
namespace {

// "0,1,2,3" -> "0-3"; runs of 3+ consecutive ascending indices become ranges.
std::string index_list(const std::vector<int>& indices) {
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ",";
    if (j - i >= 2) {
      out += std::to_string(indices[i]) + "-" + std::to_string(indices[j]);
      i = j + 1;
    } else {
      out += std::to_string(indices[i]);
      ++i;
    }
  }
  return out;
}

std::string side(const std::string& base, const std::vector<int>& indices) {
  if (indices.size() == 1) return indices[0] < 0 ? base : base + std::to_string(indices[0]);
  if (indices[0] < 0) return base;  // one node linked to every node of the other side
  if (std::all_of(indices.begin(), indices.end(), [&](int i) { return i == indices[0]; })) {
    return base + std::to_string(indices[0]);  // likewise
  }
  return "\"" + base + "[" + index_list(indices) + "]\"";
}

std::string yaml_name(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    out += ok ? c : '-';
  }
  return out.empty() ? "discovered" : out;
}

}  // namespace

std::string topology_yaml(const DiscoveredServer& server, const DiscoverOptions& options) {
  const KnownGpu& model = *server.model;
  const std::string name = yaml_name(options.name);
  std::string y = "# " + name + ": written by `clustersim discover` from " + options.smi_source;
  if (!options.nccl_source.empty()) y += " and " + options.nccl_source;
  y += ".\n# GPU model figures: " + std::string(model.source) + ".\n";
  for (const std::string& note : server.gpu_notes) y += "# " + note + "\n";
  for (const std::string& note : server.assumptions) y += "# Assumed: " + note + "\n";
  y += "# Host memory bandwidth per socket (given): " + options.host_memory_bandwidth + "\n";
  y += "name: " + name + "\n\ngpu_models:\n  " + model.model + ":\n";
  y += "    bf16: " + std::string(model.bf16) + "\n    fp16: " + model.fp16 +
       "\n    fp32: " + model.fp32 + "\n";
  y += "    memory: " + std::string(model.memory) +
       "\n    memory_bandwidth: " + model.memory_bandwidth + "\n\n";
  y += "servers:\n  " + name + ":\n    nodes:\n";
  y += "      - {name: gpu, kind: gpu, model: " + std::string(model.model) +
       ", count: " + std::to_string(server.gpus) + "}\n";
  if (server.nvswitch) y += "      - {name: nvswitch, kind: nvswitch}\n";
  y += "      - {name: cpu, kind: cpu, count: " + std::to_string(server.sockets) +
       ", memory_bandwidth: " + options.host_memory_bandwidth + "}\n";
  if (server.pcie_switches > 0)
    y += "      - {name: pcie, kind: pcie_switch, count: " + std::to_string(server.pcie_switches) +
         "}\n";
  if (!server.nic_names.empty()) {
    y +=
        "      - {name: nic, kind: nic, count: " + std::to_string(server.nic_names.size()) + "}  #";
    for (const std::string& nic : server.nic_names) y += " " + nic;
    y += "\n";
  }
  y += "    links:\n";
  for (size_t i = 0; i < server.links.size();) {
    const DiscoveredLink& first = server.links[i];
    std::vector<int> from;
    std::vector<int> to;
    size_t j = i;
    for (; j < server.links.size(); ++j) {
      const DiscoveredLink& l = server.links[j];
      if (l.from_base != first.from_base || l.to_base != first.to_base ||
          l.attributes != first.attributes || (l.to_index < 0) != (first.to_index < 0)) {
        break;
      }
      from.push_back(l.from_index);
      to.push_back(l.to_index);
    }
    if (first.to_index < 0) to.assign(1, -1);
    y += "      - {from: " + side(first.from_base, from) + ", to: " + side(first.to_base, to) +
         ", " + first.attributes + "}\n";
    i = j;
  }
  y += "\ncluster:\n  - {server: " + name + ", count: 1, name: node}\n";
  return y;
}

}  // namespace cs::cal
