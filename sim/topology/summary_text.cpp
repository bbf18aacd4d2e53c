// Renders a TopologySummary as the text `clustersim topo` prints: fixed-width tables, figures
// through the shared unit formatters, nothing that varies between runs or machines.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "topology/summary.hpp"

namespace cs::topo {
namespace {

std::string pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string pad_left(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

// "line/achievable" in GB/s, e.g. "450/396.6"; "X" for a GPU to itself.
std::string path_bandwidth_cell(const GpuConnection& cell) {
  if (std::isinf(cell.bandwidth_Bps)) return "X";
  char text[48];
  std::snprintf(text, sizeof text, "%.4g/%.4g", cell.line_rate_Bps / kGB, cell.bandwidth_Bps / kGB);
  return text;
}

// Bandwidth for a table cell: "-" where there is none.
std::string bandwidth_cell(double bytes_per_s) {
  return bytes_per_s > 0 ? units::format_bandwidth(bytes_per_s) : "-";
}

std::string gpu_label(const Cluster& cluster, int node) {
  return "GPU" + std::to_string(cluster.nodes[static_cast<std::size_t>(node)].rank);
}

// The generated fabric's shape: "fabric: fat_tree, 2 levels: 32 leaves, 16 spines (64-port
// switches, 1:1)"; a multi-plane fabric gives one plane's counts: "2 planes, each 2 levels: ...".
void write_fabric(std::ostringstream& out, const FabricInfo& f) {
  if (f.kind.empty()) return;
  const auto planes = static_cast<std::size_t>(std::max(1, f.planes));
  auto count = [&](std::size_t n, const char* one, const char* many) {
    n /= planes;
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  out << "  fabric: " << f.kind << ", ";
  if (planes > 1) out << planes << " planes, each ";
  out << std::to_string(f.levels) << (f.levels == 1 ? " level" : " levels") << ": "
      << count(f.leaves.size(), f.kind == "single_switch" ? "switch" : "leaf",
               f.kind == "single_switch" ? "switches" : "leaves");
  if (!f.spines.empty() && f.spray) {
    out << ", 1 logical spine (spraying over "
        << count(static_cast<std::size_t>(f.sprayed_spines) * planes, "spine", "spines") << ")";
  } else if (!f.spines.empty()) {
    out << ", " << count(f.spines.size(), "spine", "spines");
  }
  if (f.pods > 1) out << " in " << f.pods << " pods";
  if (!f.cores.empty()) out << ", " << count(f.cores.size(), "core", "cores");
  if (f.leaf_ports > 0) {
    out << " (" << f.leaf_ports << "-port switches, " << f.oversubscription << ":1)";
  }
  if (f.sharp) out << "; SHARP (in-network reduction, NCCL's CollNet)";
  out << "\n";
}

void write_matrix(std::ostringstream& out, const Cluster& cluster, const GpuMatrix& matrix,
                  bool bandwidth) {
  auto cell_text = [&](const GpuConnection& cell) {
    return bandwidth ? path_bandwidth_cell(cell) : to_string(cell);
  };
  std::size_t width = 6;
  for (int c : matrix.columns) width = std::max(width, gpu_label(cluster, c).size() + 2);
  for (const auto& row : matrix.cells) {
    for (const GpuConnection& cell : row) width = std::max(width, cell_text(cell).size() + 2);
  }
  out << "  " << matrix.title << "\n" << pad("", 10);
  for (int c : matrix.columns) out << pad_left(gpu_label(cluster, c), width);
  out << "  node\n";
  for (std::size_t i = 0; i < matrix.rows.size(); ++i) {
    out << pad(gpu_label(cluster, matrix.rows[i]), 10);
    for (const GpuConnection& cell : matrix.cells[i]) out << pad_left(cell_text(cell), width);
    out << "  " << cluster.nodes[static_cast<std::size_t>(matrix.rows[i])].name << "\n";
  }
}

void write_servers(std::ostringstream& out, const TopologySummary& s, const FabricInfo& fabric) {
  out << "Servers\n";
  for (const ServerGroup& g : s.servers) {
    out << "  " << g.count << " x " << g.template_name << ": " << g.gpus_per_server << " GPUs"
        << (g.gpu_model.empty() ? "" : " " + g.gpu_model) << ", " << g.nics_per_server << " NICs\n";
    if (g.price) {
      out << "    " << g.price->usd_per_hour << " USD per server-hour (" << g.price->source << ", "
          << g.price->date << ")\n";
    }
  }
  out << "  " << s.gpu_count << " GPUs, " << s.node_count << " nodes, " << s.fabric_switches
      << " network switches\n";
  write_fabric(out, fabric);
  out << "\n";
  out << "GPU models\n";
  for (const GpuModel& m : s.gpu_models) {
    out << "  " << m.name << ": bf16 " << m.bf16_flops / 1e12 << " TFLOP/s, fp16 "
        << m.fp16_flops / 1e12 << " TFLOP/s, fp32 " << m.fp32_flops / 1e12 << " TFLOP/s, "
        << m.memory_bytes / kGB << " GB at " << units::format_bandwidth(m.memory_bandwidth_Bps)
        << "\n";
  }
  out << "\n";
}

void write_links(std::ostringstream& out, const TopologySummary& s) {
  using units::format_bandwidth;
  out << "Links by type (line rate per direction)\n";
  out << "  " << pad("kind", 12) << pad("link", 24) << pad_left("count", 7) << pad_left("each", 12)
      << pad_left("total", 12) << "\n";
  for (const LinkGroup& g : s.links) {
    out << "  " << pad(to_string(g.kind), 12) << pad(g.label, 24)
        << pad_left(std::to_string(g.count), 7)
        << pad_left(format_bandwidth(g.bandwidth_Bps / g.count), 12)
        << pad_left(format_bandwidth(g.bandwidth_Bps), 12) << "\n";
  }
  out << "\n";
  out << "Per-GPU bandwidth (line rate per direction; network = server's NIC links / its GPUs)\n";
  out << "  " << pad("server", 24) << pad_left("NVLink", 12) << pad_left("PCIe", 12)
      << pad_left("network", 12) << "\n";
  for (const GpuBandwidth& b : s.per_gpu) {
    out << "  " << pad(b.template_name, 24) << pad_left(bandwidth_cell(b.nvlink_Bps), 12)
        << pad_left(bandwidth_cell(b.pcie_Bps), 12) << pad_left(bandwidth_cell(b.network_Bps), 12)
        << "\n";
  }
  out << "\n";
}

void write_bisection(std::ostringstream& out, const Bisection& b) {
  using units::format_bandwidth;
  out << "Bisection bandwidth (max flow between two halves of the GPUs, line rate)\n";
  if (b.gpus_a == 0 || b.gpus_b == 0) {
    out << "  fewer than two GPUs: no bisection\n\n";
    return;
  }
  out << "  split " << b.split << " (" << b.gpus_a << " | " << b.gpus_b << " GPUs)\n";
  out << "  A -> B " << format_bandwidth(b.a_to_b_Bps) << ", B -> A "
      << format_bandwidth(b.b_to_a_Bps) << "\n";
  if (b.across_servers) {
    out << "  NIC injection: A " << format_bandwidth(b.injection_a_Bps) << ", B "
        << format_bandwidth(b.injection_b_Bps);
    const double injection = std::min(b.injection_a_Bps, b.injection_b_Bps);
    if (injection > 0) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.3g", std::min(b.a_to_b_Bps, b.b_to_a_Bps) / injection);
      out << " (bisection / injection = " << ratio << ")";
    }
    out << "\n";
  }
  out << "\n";
}

void write_matrices(std::ostringstream& out, const TopologySummary& s, const Cluster& cluster) {
  out << "GPU connections (like nvidia-smi topo -m)";
  if (s.matrix_truncated) {
    out << ": " << s.gpu_count << " GPUs, showing the first server and one inter-server row";
  }
  out << "\n";
  for (const GpuMatrix& m : s.matrices) write_matrix(out, cluster, m, false);
  out << "\nPath bandwidth in GB/s per direction, line rate/achievable (the route's narrowest "
         "link,\n"
         "before/after link efficiency; transfers in the simulator get the achievable figure)\n";
  for (const GpuMatrix& m : s.matrices) write_matrix(out, cluster, m, true);
  out << "\nLegend:\n"
         "  X    = self\n"
         "  NV#  = NVLink only (direct or through NVSwitch); # = fewest NVLinks on the path\n"
         "  PIX  = through one PCIe switch\n"
         "  PXB  = through several PCIe switches, no host bridge\n"
         "  PHB  = through a CPU's PCIe host bridge\n"
         "  SYS  = across the link between CPU sockets (UPI / Infinity Fabric)\n"
         "  NET  = across the network\n";
}

}  // namespace

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string format_summary(const TopologySummary& s, const Cluster& cluster) {
  std::ostringstream out;
  out << "Topology " << s.name;
  if (!s.source_file.empty()) out << " (" << base_name(s.source_file) << ")";
  out << "\n\n";
  write_servers(out, s, cluster.fabric);
  write_links(out, s);
  write_bisection(out, s.bisection);
  write_matrices(out, s, cluster);
  return out.str();
}

}  // namespace cs::topo
