// Node entries -> NodeSpec, declared in loader_parse_node.hpp.
#include "topology/parse/loader_parse_node.hpp"

#include <algorithm>

#include "topology/parse/loader_names.hpp"
#include "topology/parse/loader_parse.hpp"

namespace cs::topo {

using yaml::Fields;

namespace {

// Rate at which the CUDA driver stages pageable host memory through its pinned buffer, used when
// a cpu node gives no `pageable_copy`. Measured for this project on the H100 device machine
// (H100 80GB HBM3, PCIe Gen5 x16, Xeon host, driver 580.159.04; cudaMemcpy of 1 GiB from
// malloc'd, touched memory, median of 7): pageable H2D 9.2 GB/s (D2H 16.0 GB/s; pinned H2D
// 50.0 GB/s, within the usual ~50-55: topologies/README.md, "Sources"); calibrate/data agrees
// (h100x1 8.2 GB/s, h200x4 9.0-9.7 GB/s). H2D is the copy DDP's input batches make.
constexpr double kDefaultPageableCopy_Bps = 9.2e9;

bool valid_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

const std::vector<std::string> kNodeKinds = {"gpu",      "cpu", "pcie_switch",
                                             "nvswitch", "nic", "switch"};

spec::NodeSpec parse_node(const YAML::Node& node, const std::string& file, const SourceLoc& where,
                          const std::unordered_map<std::string, int>& models,
                          const std::vector<std::string>& model_names) {
  Fields f(node, "node entry", "nodes", file, where,
           {"name", "kind", "count", "model", "memory_bandwidth", "pageable_copy", "multicast",
            "vendor"});
  spec::NodeSpec n;
  n.loc = f.loc();
  n.name = parse_name(f, "name");
  const std::string kind = f.text("kind");
  const NodeKind kinds[] = {NodeKind::gpu,      NodeKind::cpu, NodeKind::pcie_switch,
                            NodeKind::nvswitch, NodeKind::nic, NodeKind::network_switch};
  bool known = false;
  for (NodeKind k : kinds) {
    if (kind == to_string(k)) {
      n.kind = k;
      known = true;
    }
  }
  if (!known) {
    f.fail("kind", "unknown node kind '" + kind + "'" + names::did_you_mean(kind, kNodeKinds) +
                       "; valid: " + names::join_truncated(kNodeKinds));
  }
  if (const auto count = f.optional_integer("count", 1, kMaxCount)) {
    n.counted = true;
    n.count = static_cast<int>(*count);
  }
  if (n.kind == NodeKind::gpu) {
    f.forbid({"memory_bandwidth", "pageable_copy", "multicast", "vendor"}, "gpu nodes", "model");
    const std::string model = f.text("model");
    auto it = models.find(model);
    if (it == models.end()) {
      f.fail("model",
             "unknown gpu model '" + model + "'" + names::did_you_mean(model, model_names) +
                 "; models defined under gpu_models: " + names::join_truncated(model_names));
    }
    n.gpu_model = it->second;
  } else if (n.kind == NodeKind::cpu) {
    f.forbid({"model", "multicast"}, "cpu nodes", "memory_bandwidth, pageable_copy, vendor");
    n.host_memory_bandwidth_Bps = f.bandwidth_Bps("memory_bandwidth");
    n.cpu_vendor = f.optional_text("vendor").value_or("intel");
    const std::vector<std::string> vendors = {"intel", "amd", "arm"};
    if (std::find(vendors.begin(), vendors.end(), n.cpu_vendor) == vendors.end())
      f.fail("vendor", "unknown cpu vendor '" + n.cpu_vendor + "'; valid: intel, amd, arm");
    n.pageable_copy_Bps =
        f.optional_bandwidth_Bps("pageable_copy").value_or(kDefaultPageableCopy_Bps);
  } else {
    f.forbid({"model", "memory_bandwidth", "pageable_copy", "vendor"},
             std::string(to_string(n.kind)) + " nodes",
             n.kind == NodeKind::nvswitch ? "name, kind, count, multicast" : "name, kind, count");
    if (n.kind == NodeKind::nvswitch) {
      n.multicast = f.optional_bool("multicast").value_or(true);
    } else {
      f.forbid({"multicast"}, std::string(to_string(n.kind)) + " nodes", "name, kind, count");
    }
  }
  return n;
}

}  // namespace

std::string parse_name(const Fields& fields, const std::string& key) {
  std::string name = fields.text(key);
  if (name.empty()) fields.fail(key, "must not be empty");
  for (char c : name) {
    if (!valid_name_char(c)) {
      fields.fail(key, "'" + name + "' contains '" + std::string(1, c) +
                           "'; names use letters, digits, '_', '-' and '.'");
    }
  }
  return name;
}

std::vector<spec::NodeSpec> parse_nodes(const Fields& parent, const std::string& file,
                                        const std::unordered_map<std::string, int>& models,
                                        const std::vector<std::string>& model_names) {
  std::vector<spec::NodeSpec> out;
  const YAML::Node list = parent.list("nodes");
  for (const auto& item : list) {
    out.push_back(parse_node(item, file, parent.loc("nodes"), models, model_names));
  }
  return out;
}

}  // namespace cs::topo
