// YAML -> TopologySpec: the key-by-key reading of a topology file (format: topologies/README.md).
#include "topology/loader_parse.hpp"

#include <unordered_map>

#include "topology/loader_link_types.hpp"
#include "topology/loader_names.hpp"
#include "topology/yaml_fields.hpp"

namespace cs::topo {
namespace {

using yaml::Fields;

// Rate at which the CUDA driver stages pageable host memory through its pinned buffer, used when
// a cpu node gives no `pageable_copy`. Measured for this project on the H100 device machine
// (H100 80GB HBM3, PCIe Gen5 x16, Xeon host, driver 580.159.04; cudaMemcpy of 1 GiB from
// malloc'd, touched memory, median of 7): pageable H2D 9.2 GB/s (D2H 16.0 GB/s; pinned H2D
// 50.0 GB/s, matching hardware.md's ~50-55). H2D is the copy DDP's input batches make.
constexpr double kDefaultPageableCopy_Bps = 9.2e9;

bool valid_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

// Node, template and instance names: letters, digits, '_', '-', '.'; '/' joins an instance to a
// node and brackets are pattern syntax, so neither may appear in a name itself.
std::string checked_name(const Fields& fields, const std::string& key) {
  const std::string name = fields.text(key);
  if (name.empty()) fields.fail(key, "must not be empty");
  for (char c : name) {
    if (!valid_name_char(c)) {
      fields.fail(key, "'" + name + "' contains '" + std::string(1, c) +
                           "'; names use letters, digits, '_', '-' and '.'");
    }
  }
  return name;
}

// A map whose keys are user-chosen names (gpu_models, servers): returns (name, value, loc) in
// document order and rejects a name given twice.
struct NamedEntry {
  std::string name;
  YAML::Node value;
  SourceLoc loc;
};

std::vector<NamedEntry> named_entries(const Fields& parent, const std::string& key,
                                      const std::string& what) {
  const YAML::Node map = parent.node(key);
  const SourceLoc where = parent.loc(key);
  if (!map.IsMap()) {
    throw InputError(where, key, "must be a map of " + what + " names to their description");
  }
  std::vector<NamedEntry> out;
  std::unordered_map<std::string, SourceLoc> seen;
  for (const auto& entry : map) {
    const SourceLoc loc = yaml::loc_of(entry.first, parent.file(), where);
    const std::string name = yaml::scalar_text(entry.first, key, loc);
    auto [it, inserted] = seen.emplace(name, loc);
    if (!inserted) {
      throw InputError(
          loc, name,
          "duplicate " + what + " name; first defined at line " + std::to_string(it->second.line));
    }
    out.push_back({name, entry.second, loc});
  }
  return out;
}

YAML::Node require_list(const Fields& fields, const std::string& key, const YAML::Node& node) {
  if (!node.IsSequence()) fields.fail(key, "must be a list of entries (lines starting with '-')");
  return node;
}

GpuModel parse_gpu_model(const NamedEntry& entry, const std::string& file) {
  Fields f(entry.value, "gpu model '" + entry.name + "'", entry.name, file, entry.loc,
           {"bf16", "fp16", "fp32", "memory", "memory_bandwidth"});
  GpuModel model;
  model.name = entry.name;
  model.bf16_flops = f.flops("bf16");
  model.fp16_flops = f.flops("fp16");
  model.fp32_flops = f.flops("fp32");
  model.memory_bytes = f.size_bytes("memory");
  model.memory_bandwidth_Bps = f.bandwidth_Bps("memory_bandwidth");
  model.loc = entry.loc;
  return model;
}

spec::NamePatterns parse_patterns(const Fields& f, const std::string& key) {
  spec::NamePatterns out;
  out.key = key;
  out.loc = f.loc(key);
  const YAML::Node node = f.node(key);
  if (node.IsSequence()) {
    for (const auto& item : node) {
      out.patterns.push_back(yaml::scalar_text(item, key, yaml::loc_of(item, f.file(), out.loc)));
    }
    if (out.patterns.empty()) f.fail(key, "an empty list names no node");
  } else {
    out.patterns.push_back(f.text(key));
  }
  return out;
}

spec::LinkProps parse_link_props(const Fields& f) {
  using namespace link_types;
  spec::LinkProps p;
  const std::string type = f.text("type");
  const auto kind = parse_kind(type);
  if (!kind) {
    f.fail("type", "unknown link type '" + type + "'" +
                       names::did_you_mean(
                           type, {"pcie", "nvlink", "socket", "infiniband", "ethernet", "efa"}) +
                       "; valid: " + kValidKinds);
  }
  p.kind = *kind;
  const auto bandwidth = f.optional_bandwidth_Bps("bandwidth");
  switch (p.kind) {
    case LinkKind::pcie: {
      f.forbid({"count", "rate"}, "pcie links", "generation, width");
      p.generation = static_cast<int>(f.integer("generation", 1, 99));
      p.lanes = static_cast<int>(f.optional_integer("width", 1, 64).value_or(16));
      const auto rate = pcie_line_rate_Bps(p.generation, p.lanes);
      if (!rate) {
        f.fail("generation", "PCIe generation " + std::to_string(p.generation) +
                                 " is not modelled; valid: " + kValidPcieGenerations);
      }
      if (!valid_pcie_width(p.lanes)) {
        f.fail("width",
               "x" + std::to_string(p.lanes) + " is not a PCIe width; valid: " + kValidPcieWidths);
      }
      p.bandwidth_Bps = *rate;
      p.efficiency = pcie_efficiency(p.generation);
      p.label = pcie_label(p.generation, p.lanes);
      break;
    }
    case LinkKind::nvlink: {
      f.forbid({"width", "rate"}, "nvlink links", "generation, count");
      p.generation = static_cast<int>(f.integer("generation", 1, 99));
      p.lanes = static_cast<int>(f.integer("count", 1, 1024));
      const auto rate = nvlink_link_rate_Bps(p.generation);
      if (!rate) {
        f.fail("generation", "NVLink generation " + std::to_string(p.generation) +
                                 " is not modelled; valid: " + kValidNvlinkGenerations);
      }
      p.bandwidth_Bps = *rate * p.lanes;
      p.efficiency = nvlink_efficiency(p.generation);
      p.label = nvlink_label(p.generation, p.lanes);
      break;
    }
    case LinkKind::infiniband: {
      f.forbid({"generation", "width", "count"}, "infiniband links", "rate");
      const std::string rate = f.text("rate");
      const auto port = infiniband_rate_Bps(rate);
      if (!port) {
        f.fail("rate", "unknown InfiniBand rate '" + rate + "'; valid: " + kValidInfinibandRates);
      }
      p.bandwidth_Bps = *port;
      p.efficiency = infiniband_efficiency(rate);
      p.label = infiniband_label(rate);
      break;
    }
    case LinkKind::socket:
    case LinkKind::ethernet:
    case LinkKind::efa: {
      const std::string context = std::string(to_string(p.kind)) + " links";
      f.forbid({"generation", "width", "count", "rate"}, context, "bandwidth");
      if (!bandwidth) f.fail("bandwidth", "required for " + context + ", e.g. 100Gbps");
      p.bandwidth_Bps = *bandwidth;
      p.efficiency = unmeasured_efficiency();
      p.label = rate_label(p.kind, p.bandwidth_Bps);
      break;
    }
  }
  if (bandwidth) p.bandwidth_Bps = *bandwidth;
  if (const auto efficiency = f.optional_number("efficiency", 0.0, 1.0)) p.efficiency = *efficiency;
  p.latency = ps_from_seconds(
      f.optional_latency_s("latency").value_or(seconds_from_ps(default_latency(p.kind))));
  if (const auto label = f.optional_text("label")) p.label = *label;
  return p;
}

const std::vector<std::string> kLinkKeys = {"from",       "to",      "mesh",       "type",
                                            "generation", "width",   "count",      "rate",
                                            "bandwidth",  "latency", "efficiency", "label"};

spec::LinkSpec parse_link(const YAML::Node& node, const std::string& file, const SourceLoc& where) {
  Fields f(node, "link entry", "links", file, where, kLinkKeys);
  spec::LinkSpec link;
  link.loc = f.loc();
  if (f.has("mesh")) {
    if (f.has("from") || f.has("to")) {
      f.fail(f.has("from") ? "from" : "to", "a link entry takes either mesh or from/to, not both");
    }
    link.mesh = true;
    link.from = parse_patterns(f, "mesh");
  } else {
    if (!f.has("from") || !f.has("to")) {
      f.fail(f.has("from") ? "to" : "from",
             "missing in link entry; a link needs from and to (or mesh: for every pair)");
    }
    link.from = parse_patterns(f, "from");
    link.to = parse_patterns(f, "to");
  }
  link.props = parse_link_props(f);
  return link;
}

std::vector<spec::LinkSpec> parse_links(const Fields& parent, const std::string& file) {
  std::vector<spec::LinkSpec> out;
  if (!parent.has("links")) return out;
  const YAML::Node list = require_list(parent, "links", parent.node("links"));
  for (const auto& item : list) out.push_back(parse_link(item, file, parent.loc("links")));
  return out;
}

const std::vector<std::string> kNodeKinds = {"gpu",      "cpu", "pcie_switch",
                                             "nvswitch", "nic", "switch"};

spec::NodeSpec parse_node(const YAML::Node& node, const std::string& file, const SourceLoc& where,
                          const std::unordered_map<std::string, int>& models,
                          const std::vector<std::string>& model_names) {
  Fields f(node, "node entry", "nodes", file, where,
           {"name", "kind", "count", "model", "memory_bandwidth", "pageable_copy"});
  spec::NodeSpec n;
  n.loc = f.loc();
  n.name = checked_name(f, "name");
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
    f.forbid({"memory_bandwidth", "pageable_copy"}, "gpu nodes", "model");
    const std::string model = f.text("model");
    auto it = models.find(model);
    if (it == models.end()) {
      f.fail("model",
             "unknown gpu model '" + model + "'" + names::did_you_mean(model, model_names) +
                 "; models defined under gpu_models: " + names::join_truncated(model_names));
    }
    n.gpu_model = it->second;
  } else if (n.kind == NodeKind::cpu) {
    f.forbid({"model"}, "cpu nodes", "memory_bandwidth, pageable_copy");
    n.host_memory_bandwidth_Bps = f.bandwidth_Bps("memory_bandwidth");
    n.pageable_copy_Bps =
        f.optional_bandwidth_Bps("pageable_copy").value_or(kDefaultPageableCopy_Bps);
  } else {
    f.forbid({"model", "memory_bandwidth", "pageable_copy"},
             std::string(to_string(n.kind)) + " nodes", "name, kind, count");
  }
  return n;
}

std::vector<spec::NodeSpec> parse_nodes(const Fields& parent, const std::string& file,
                                        const std::unordered_map<std::string, int>& models,
                                        const std::vector<std::string>& model_names) {
  std::vector<spec::NodeSpec> out;
  const YAML::Node list = require_list(parent, "nodes", parent.node("nodes"));
  for (const auto& item : list) {
    out.push_back(parse_node(item, file, parent.loc("nodes"), models, model_names));
  }
  return out;
}

spec::FabricSpec parse_fabric(const Fields& root, const std::string& file) {
  Fields f(root.node("fabric"), "fabric", "fabric", file, root.loc("fabric"),
           {"kind", "link", "leaf_ports", "oversubscription", "spines"});
  spec::FabricSpec fabric;
  fabric.loc = f.loc();
  const std::string kind = f.text("kind");
  const std::vector<std::string> kinds = {"single_switch", "fat_tree", "rail_optimized"};
  if (kind == "single_switch") {
    fabric.kind = spec::FabricKind::single_switch;
    f.forbid({"leaf_ports", "oversubscription", "spines"}, "a single_switch fabric", "link");
  } else if (kind == "fat_tree") {
    fabric.kind = spec::FabricKind::fat_tree;
  } else if (kind == "rail_optimized") {
    fabric.kind = spec::FabricKind::rail_optimized;
  } else {
    f.fail("kind", "unknown fabric kind '" + kind + "'" + names::did_you_mean(kind, kinds) +
                       "; valid: " + names::join_truncated(kinds));
  }
  if (!f.has("link")) f.fail("link", "missing in fabric: the link of every switch port");
  Fields link(f.node("link"), "fabric link", "link", file, f.loc("link"),
              {"type", "generation", "width", "count", "rate", "bandwidth", "latency", "efficiency",
               "label"});
  fabric.port = parse_link_props(link);
  if (fabric.kind != spec::FabricKind::single_switch) {
    fabric.leaf_ports = static_cast<int>(f.integer("leaf_ports", 2, kMaxCount));
    fabric.leaf_ports_loc = f.loc("leaf_ports");
    fabric.oversubscription = f.optional_number("oversubscription", 0.0, 1e6).value_or(1.0);
    fabric.oversubscription_loc = f.loc("oversubscription");
    fabric.spines = static_cast<int>(f.optional_integer("spines", 1, kMaxCount).value_or(0));
    fabric.spines_loc = f.loc("spines");
  }
  return fabric;
}

spec::InstanceSpec parse_instance(const YAML::Node& node, const std::string& file,
                                  const SourceLoc& where,
                                  const std::vector<spec::ServerTemplate>& templates) {
  Fields f(node, "cluster entry", "cluster", file, where, {"server", "count", "name"});
  spec::InstanceSpec instance;
  instance.loc = f.loc();
  const std::string server = f.text("server");
  std::vector<std::string> known;
  for (std::size_t i = 0; i < templates.size(); ++i) {
    known.push_back(templates[i].name);
    if (templates[i].name == server) instance.template_index = static_cast<int>(i);
  }
  if (instance.template_index < 0) {
    f.fail("server", "unknown server template '" + server + "'" +
                         names::did_you_mean(server, known) +
                         "; templates under servers: " + names::join_truncated(known));
  }
  instance.count = static_cast<int>(f.optional_integer("count", 1, kMaxCount).value_or(1));
  instance.prefix = f.has("name") ? checked_name(f, "name") : std::string("node");
  instance.name_loc = f.loc("name");
  return instance;
}

}  // namespace

spec::TopologySpec parse_topology(const YAML::Node& root, const std::string& file) {
  const SourceLoc top{file, 1};
  Fields f(root, "the topology file", "", file, top,
           {"name", "gpu_models", "servers", "cluster", "fabric", "nodes", "links"});
  spec::TopologySpec out;
  out.file = file;
  out.name = f.optional_text("name").value_or("");

  std::unordered_map<std::string, int> models;
  std::vector<std::string> model_names;
  if (f.has("gpu_models")) {
    for (const auto& entry : named_entries(f, "gpu_models", "gpu model")) {
      models.emplace(entry.name, static_cast<int>(out.gpu_models.size()));
      model_names.push_back(entry.name);
      out.gpu_models.push_back(parse_gpu_model(entry, file));
    }
  }

  if (!f.has("servers")) f.fail("servers", "missing: the file needs at least one server template");
  for (const auto& entry : named_entries(f, "servers", "server template")) {
    Fields t(entry.value, "server template '" + entry.name + "'", entry.name, file, entry.loc,
             {"nodes", "links"});
    spec::ServerTemplate tmpl;
    tmpl.name = entry.name;
    tmpl.loc = entry.loc;
    if (!t.has("nodes")) t.fail("nodes", "missing in server template '" + entry.name + "'");
    tmpl.nodes = parse_nodes(t, file, models, model_names);
    if (tmpl.nodes.empty()) t.fail("nodes", "server template '" + entry.name + "' has no nodes");
    tmpl.links = parse_links(t, file);
    out.templates.push_back(std::move(tmpl));
  }

  if (!f.has("cluster")) {
    f.fail("cluster",
           "missing: list which server templates to instantiate, e.g. "
           "cluster: [{server: dgx, count: 2, name: node}]");
  }
  const YAML::Node instances = require_list(f, "cluster", f.node("cluster"));
  for (const auto& item : instances) {
    out.instances.push_back(parse_instance(item, file, f.loc("cluster"), out.templates));
  }
  if (out.instances.empty()) f.fail("cluster", "the cluster list is empty");

  if (f.has("fabric")) out.fabric = parse_fabric(f, file);
  if (f.has("nodes")) out.nodes = parse_nodes(f, file, models, model_names);
  out.links = parse_links(f, file);
  return out;
}

}  // namespace cs::topo
