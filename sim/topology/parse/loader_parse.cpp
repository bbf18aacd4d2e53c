// YAML -> TopologySpec: the key-by-key reading of a topology file (format: topologies/README.md).
#include "topology/parse/loader_parse.hpp"

#include <algorithm>
#include <unordered_map>

#include "topology/parse/loader_names.hpp"
#include "topology/parse/loader_parse_link.hpp"
#include "topology/parse/loader_parse_node.hpp"
#include "topology/parse/yaml_fields.hpp"

namespace cs::topo {
namespace {

using yaml::Fields;

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

// `price_per_hour: {usd: 55.04, source: "...", date: 2025-06-05}`: a figure says where it came from
// and when it held, since prices move.
ServerPrice parse_price(const Fields& server, const std::string& template_name,
                        const std::string& file) {
  Fields f(server.node("price_per_hour"), "price_per_hour", "price_per_hour", file,
           server.loc("price_per_hour"), {"usd", "source", "date"});
  ServerPrice price;
  price.template_name = template_name;
  price.loc = f.loc();
  if (!f.has("usd")) f.fail("usd", "missing: the price in US dollars per server and hour");
  price.usd_per_hour = *f.optional_number("usd", 0.0, 1e6);
  if (!f.has("source"))
    f.fail("source", "missing: where the price comes from (a price list, a quote)");
  price.source = f.text("source");
  if (!f.has("date")) f.fail("date", "missing: the day the price held, YYYY-MM-DD");
  price.date = f.text("date");
  const std::string& d = price.date;
  const bool digits =
      d.size() == 10 && d[4] == '-' && d[7] == '-' &&
      std::all_of(d.begin(), d.end(), [](char c) { return c == '-' || (c >= '0' && c <= '9'); });
  if (!digits) f.fail("date", "'" + d + "' is not a date; valid: YYYY-MM-DD");
  return price;
}

spec::FabricSpec parse_fabric(const Fields& root, const std::string& file) {
  Fields f(root.node("fabric"), "fabric", "fabric", file, root.loc("fabric"),
           {"kind", "link", "leaf_ports", "oversubscription", "spines", "levels", "pod_leaves",
            "planes", "spray", "sharp"});
  spec::FabricSpec fabric;
  fabric.loc = f.loc();
  const std::string kind = f.text("kind");
  const std::vector<std::string> kinds = {"single_switch", "fat_tree", "rail_optimized"};
  if (kind == "single_switch") {
    fabric.kind = spec::FabricKind::single_switch;
    f.forbid({"leaf_ports", "oversubscription", "spines", "levels", "pod_leaves", "spray"},
             "a single_switch fabric", "link");
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
              {"type", "generation", "width", "count", "rate", "bandwidth", "latency",
               "step_latency", "efficiency", "label"});
  fabric.port = parse_link_props(link);
  fabric.sharp = f.optional_bool("sharp").value_or(false);
  if (fabric.sharp && fabric.port.kind != LinkKind::infiniband) {
    f.fail("sharp",
           "SHARP reduces in InfiniBand switches (NVIDIA Quantum); this fabric's link is " +
               std::string(to_string(fabric.port.kind)) + "; remove sharp");
  }
  fabric.planes = static_cast<int>(f.optional_integer("planes", 1, kMaxPlanes).value_or(1));
  fabric.planes_loc = f.loc("planes");
  if (fabric.kind != spec::FabricKind::single_switch) {
    fabric.leaf_ports = static_cast<int>(f.integer("leaf_ports", 2, kMaxCount));
    fabric.leaf_ports_loc = f.loc("leaf_ports");
    fabric.oversubscription = f.optional_number("oversubscription", 0.0, 1e6).value_or(1.0);
    fabric.oversubscription_loc = f.loc("oversubscription");
    fabric.spines = static_cast<int>(f.optional_integer("spines", 1, kMaxCount).value_or(0));
    fabric.spines_loc = f.loc("spines");
    fabric.levels = static_cast<int>(f.optional_integer("levels", 2, 3).value_or(2));
    fabric.levels_loc = f.loc("levels");
    if (fabric.levels == 2 && f.has("pod_leaves")) {
      f.fail("pod_leaves", "pods exist only in a three-level fabric; add levels: 3 or remove it");
    }
    fabric.pod_leaves =
        static_cast<int>(f.optional_integer("pod_leaves", 1, kMaxCount).value_or(0));
    fabric.pod_leaves_loc = f.loc("pod_leaves");
    fabric.spray = f.optional_bool("spray").value_or(false);
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
  instance.prefix = f.has("name") ? parse_name(f, "name") : std::string("node");
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
             {"nodes", "links", "price_per_hour"});
    spec::ServerTemplate tmpl;
    tmpl.name = entry.name;
    tmpl.loc = entry.loc;
    if (!t.has("nodes")) t.fail("nodes", "missing in server template '" + entry.name + "'");
    tmpl.nodes = parse_nodes(t, file, models, model_names);
    if (tmpl.nodes.empty()) t.fail("nodes", "server template '" + entry.name + "' has no nodes");
    tmpl.links = parse_links(t, file);
    if (t.has("price_per_hour")) tmpl.price = parse_price(t, entry.name, file);
    out.templates.push_back(std::move(tmpl));
  }

  if (!f.has("cluster")) {
    f.fail("cluster",
           "missing: list which server templates to instantiate, e.g. "
           "cluster: [{server: dgx, count: 2, name: node}]");
  }
  const YAML::Node instances = f.list("cluster");
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
