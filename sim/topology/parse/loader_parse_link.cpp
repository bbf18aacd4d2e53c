// Link entries -> LinkSpec, declared in loader_parse_link.hpp.
#include "topology/parse/loader_parse_link.hpp"

#include "topology/parse/loader_link_types.hpp"
#include "topology/parse/loader_names.hpp"

namespace cs::topo {

using yaml::Fields;

namespace {

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

const std::vector<std::string> kLinkKeys = {
    "from", "to",        "mesh",    "type",       "generation", "width",       "count",
    "rate", "bandwidth", "latency", "efficiency", "label",      "step_latency"};

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

}  // namespace

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
  const bool network =
      p.kind == LinkKind::infiniband || p.kind == LinkKind::ethernet || p.kind == LinkKind::efa;
  if (network) {
    p.step_latency = ps_from_seconds(f.optional_latency_s("step_latency")
                                         .value_or(seconds_from_ps(default_step_latency(p.kind))));
  } else if (f.has("step_latency")) {
    f.fail("step_latency", "applies to network links only (infiniband, ethernet, efa)");
  }
  return p;
}

std::vector<spec::LinkSpec> parse_links(const Fields& parent, const std::string& file) {
  std::vector<spec::LinkSpec> out;
  if (!parent.has("links")) return out;
  const YAML::Node list = parent.list("links");
  for (const auto& item : list) out.push_back(parse_link(item, file, parent.loc("links")));
  return out;
}

}  // namespace cs::topo
