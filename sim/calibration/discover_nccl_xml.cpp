// parse_nccl_topo_xml: walks <system><cpu><pci>...<gpu><nvlink/></gpu></pci><nic><net/></nic></cpu>
// with Boost.PropertyTree's XML reader (header-only), keeping the PCIe bridges above each device.
#include "calibration/discover_nccl_xml.hpp"

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <sstream>

#include "core/error.hpp"

namespace cs::cal {
namespace {

namespace pt = boost::property_tree;

std::string attribute(const pt::ptree& node, const std::string& name) {
  return node.get<std::string>("<xmlattr>." + name, "");
}

int int_attribute(const pt::ptree& node, const std::string& name, int fallback) {
  const std::string text = attribute(node, name);
  try {
    return text.empty() ? fallback : std::stoi(text, nullptr, 0);
  } catch (const std::exception&) {
    return fallback;
  }
}

struct Walker {
  NcclTopology& out;
  int cpu = -1;
  std::vector<std::string> bridges;  // pci elements above the current one

  void gpu(const pt::ptree& node, const pt::ptree& pci) {
    NcclGpu g;
    g.dev = int_attribute(node, "dev", -1);
    g.sm = int_attribute(node, "sm", 0);
    g.busid = attribute(pci, "busid");
    g.pci_device = attribute(pci, "device");
    g.link_gts = parse_link_speed_gts(attribute(pci, "link_speed"));
    g.link_width = int_attribute(pci, "link_width", 0);
    g.cpu = cpu;
    g.switches = bridges;
    for (const auto& [tag, child] : node) {
      if (tag != "nvlink") continue;
      g.nvlinks.push_back({attribute(child, "target"), attribute(child, "tclass"),
                           int_attribute(child, "count", 0)});
    }
    out.gpus.push_back(std::move(g));
  }

  void nic(const pt::ptree& node) {
    for (const auto& [tag, child] : node) {
      if (tag != "net") continue;
      NcclNet n;
      n.name = attribute(child, "name");
      n.speed_mbps = int_attribute(child, "speed", 0);
      n.cpu = cpu;
      n.switches = bridges;
      out.nets.push_back(std::move(n));
    }
  }

  void pci(const pt::ptree& node) {
    bool holds_device = false;
    for (const auto& [tag, child] : node) {
      if (tag == "gpu") {
        gpu(child, node);
        holds_device = true;
      } else if (tag == "nic") {
        nic(child);
        holds_device = true;
      }
    }
    if (holds_device) return;  // an endpoint's own pci element, not a bridge
    bridges.push_back(attribute(node, "busid"));
    for (const auto& [tag, child] : node) {
      if (tag == "pci") pci(child);
    }
    bridges.pop_back();
  }

  void cpu_element(const pt::ptree& node) {
    cpu = static_cast<int>(out.cpu_numa.size());
    out.cpu_numa.push_back(attribute(node, "numaid"));
    for (const auto& [tag, child] : node) {
      if (tag == "pci") pci(child);
      if (tag == "nic") nic(child);
    }
  }
};

}  // namespace

double parse_link_speed_gts(const std::string& text) {
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    return used > 0 ? value : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

NcclTopology parse_nccl_topo_xml(std::string_view xml, const std::string& source) {
  pt::ptree tree;
  std::istringstream in{std::string(xml)};
  try {
    pt::read_xml(in, tree);
  } catch (const pt::xml_parser_error& e) {
    throw InputError(SourceLoc{source, static_cast<int>(e.line())}, "",
                     "not NCCL topology XML: " + e.message());
  }
  const auto system = tree.get_child_optional("system");
  if (!system)
    throw InputError(SourceLoc{source, 1}, "system",
                     "no <system> element (write it with NCCL_TOPO_DUMP_FILE)");
  NcclTopology topo;
  Walker walker{topo, -1, {}};
  for (const auto& [tag, child] : *system) {
    if (tag == "cpu") walker.cpu_element(child);
  }
  if (topo.gpus.empty()) throw InputError(SourceLoc{source, 1}, "gpu", "the topology lists no GPU");
  return topo;
}

}  // namespace cs::cal
