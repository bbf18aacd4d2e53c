// parse_nccl_topo_xml: walks <system><cpu><pci>...<gpu><nvlink/></gpu></pci><nic><net/></nic></cpu>
// with Boost.PropertyTree's XML reader (header-only), keeping the PCIe bridges above each device.
#include "calibration/discover/discover_nccl_xml.hpp"

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <limits>
#include <sstream>

#include "core/error.hpp"

namespace cs::cal {
namespace {

namespace pt = boost::property_tree;

std::string attribute(const pt::ptree& node, const std::string& name) {
  return node.get<std::string>("<xmlattr>." + name, "");
}

// The lines on which each <tag ...> element opens, in document order: the property tree keeps no
// lines, and the walker meets elements in that same order.
std::vector<int> element_lines(std::string_view xml, std::string_view tag) {
  std::vector<int> lines;
  int line = 1;
  const std::string open = "<" + std::string(tag);
  for (std::size_t i = 0; i < xml.size(); ++i) {
    if (xml[i] == '\n') ++line;
    if (xml.compare(i, open.size(), open) != 0 || i + open.size() >= xml.size()) continue;
    const char next = xml[i + open.size()];
    if (next == ' ' || next == '>' || next == '/' || next == '\t' || next == '\n' || next == '\r')
      lines.push_back(line);
  }
  return lines;
}

// An integer attribute (decimal or 0x hex, as NCCL writes them) of at least `min`; `fallback`
// when absent. Anything else is an InputError at the element's line.
int int_attribute(const pt::ptree& node, const std::string& name, int fallback, int min,
                  const SourceLoc& loc) {
  const std::string text = attribute(node, name);
  if (text.empty()) return fallback;
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < min || value > std::numeric_limits<int>::max()) {
    throw InputError(loc, name,
                     "'" + text + "' is not an integer of " + std::to_string(min) + " or more");
  }
  return static_cast<int>(value);
}

struct Walker {
  NcclTopology& out;
  std::string source;
  std::vector<int> gpu_lines;  // element_lines of "gpu", "nvlink", "net"
  std::vector<int> nvlink_lines;
  std::vector<int> net_lines;
  int cpu = -1;
  std::vector<std::string> bridges;  // pci elements above the current one
  std::size_t nvlinks_seen = 0;

  SourceLoc loc_of(const std::vector<int>& lines, std::size_t i) const {
    return SourceLoc{source, i < lines.size() ? lines[i] : 0};
  }

  void gpu(const pt::ptree& node, const pt::ptree& pci) {
    NcclGpu g;
    g.loc = loc_of(gpu_lines, out.gpus.size());
    g.dev = int_attribute(node, "dev", -1, 0, g.loc);
    g.sm = int_attribute(node, "sm", 0, 0, g.loc);
    g.busid = attribute(pci, "busid");
    g.pci_device = attribute(pci, "device");
    g.link_gts = parse_link_speed_gts(attribute(pci, "link_speed"));
    g.link_width = int_attribute(pci, "link_width", 0, 0, g.loc);
    g.cpu = cpu;
    g.switches = bridges;
    for (const auto& [tag, child] : node) {
      if (tag != "nvlink") continue;
      const SourceLoc at = loc_of(nvlink_lines, nvlinks_seen++);
      g.nvlinks.push_back({attribute(child, "target"), attribute(child, "tclass"),
                           int_attribute(child, "count", 0, 0, at)});
    }
    out.gpus.push_back(std::move(g));
  }

  void nic(const pt::ptree& node) {
    for (const auto& [tag, child] : node) {
      if (tag != "net") continue;
      NcclNet n;
      n.name = attribute(child, "name");
      n.speed_mbps = int_attribute(child, "speed", 0, 0, loc_of(net_lines, out.nets.size()));
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
  Walker walker{topo,
                source,
                element_lines(xml, "gpu"),
                element_lines(xml, "nvlink"),
                element_lines(xml, "net"),
                -1,
                {},
                0};
  for (const auto& [tag, child] : *system) {
    if (tag == "cpu") walker.cpu_element(child);
  }
  if (topo.gpus.empty()) throw InputError(SourceLoc{source, 1}, "gpu", "the topology lists no GPU");
  for (std::size_t i = 0; i < topo.gpus.size(); ++i) {
    const NcclGpu& g = topo.gpus[i];
    if (g.dev < 0) throw InputError(g.loc, "dev", "missing; each <gpu> names its CUDA device");
    for (std::size_t j = 0; j < i; ++j) {
      if (topo.gpus[j].dev == g.dev) {
        throw InputError(g.loc, "dev",
                         "GPU dev " + std::to_string(g.dev) + " appears twice (first at line " +
                             std::to_string(topo.gpus[j].loc.line) + ")");
      }
    }
  }
  return topo;
}

}  // namespace cs::cal
