// Line rates, efficiencies, latencies and labels of the link types; each figure names its source.
#include "topology/parse/loader_link_types.hpp"

#include <array>
#include <cstdio>

namespace cs::topo::link_types {
namespace {

struct PcieGeneration {
  int generation;
  double transfers_per_s;  // per lane
  double encoding;         // payload bits per transferred bit
  double efficiency;       // achieved / line rate for pinned host-device copies
};

// Transfer rates and line codes from the PCI-SIG base specifications 3.0-6.0 (Gen3-5: 128b/130b;
// Gen6: PAM4 FLIT mode without a line code; its FLIT CRC/FEC overhead is left to efficiency).
// Efficiencies: achieved pinned H2D over the x16 line rate, Gen3 11.5 / 15.75, Gen4 25 / 31.5,
// Gen5 52.5 / 63.0 GB/s (topologies/README.md, "Sources": CUDA bandwidthTest-class results, our
// own Gen5 copies). Gen6 has no measurement and reuses Gen5's fraction.
constexpr std::array<PcieGeneration, 4> kPcie{{
    {3, 8e9, 128.0 / 130.0, 11.5 / 15.754},
    {4, 16e9, 128.0 / 130.0, 25.0 / 31.508},
    {5, 32e9, 128.0 / 130.0, 52.5 / 63.015},
    {6, 64e9, 1.0, 52.5 / 63.015},
}};

const PcieGeneration* find_pcie(int generation) {
  for (const auto& g : kPcie) {
    if (g.generation == generation) return &g;
  }
  return nullptr;
}

struct NvlinkGeneration {
  int generation;
  double link_Bps;    // per link, per direction
  double efficiency;  // achieved / line rate
};

// Per-link rates, per direction (topologies/README.md, "Sources"): NVLink2 (V100 whitepaper) and
// NVLink3 (A100 whitepaper, 12 links) 25 GB/s, NVLink4 (H100 whitepaper, 18 links) 25 GB/s,
// NVLink5 (Blackwell technical brief, 900 GB/s each way over 18 links) 50 GB/s.
// Efficiency: our own measurement, calibrate/data/h200x4/copy.json: a 1 GiB cudaMemcpyPeer over
// NVLink4 x18 moves 396.6 of 450 GB/s = 0.881 (every pair, one way). It is a property of the link
// and its packet overhead, not of NCCL, so collective bandwidth is not fed back into it. Gen2, gen3
// and gen5 have no measurement of ours and reuse it until a node of theirs is calibrated.
constexpr double kNvlinkMeasuredEfficiency = 396.6 / 450.0;
constexpr std::array<NvlinkGeneration, 4> kNvlink{{
    {2, 25e9, kNvlinkMeasuredEfficiency},
    {3, 25e9, kNvlinkMeasuredEfficiency},
    {4, 25e9, kNvlinkMeasuredEfficiency},
    {5, 50e9, kNvlinkMeasuredEfficiency},
}};

struct InfinibandRate {
  std::string_view name;
  double port_Bps;
  double efficiency;
};

// Port rates from the IBTA roadmap: HDR 200, NDR 400, XDR 800 Gb/s. Efficiencies from achieved
// per-NIC figures (topologies/README.md, "Sources"): HDR ~24 of 25 GB/s, NDR ~48.5 of 50 GB/s;
// XDR has no measurement and reuses NDR's fraction.
constexpr std::array<InfinibandRate, 3> kInfiniband{{
    {"HDR", 200e9 / 8, 24.0 / 25.0},
    {"NDR", 400e9 / 8, 48.5 / 50.0},
    {"XDR", 800e9 / 8, 48.5 / 50.0},
}};

const InfinibandRate* find_infiniband(std::string_view rate) {
  for (const auto& r : kInfiniband) {
    if (r.name == rate) return &r;
  }
  return nullptr;
}

std::string format_g(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

}  // namespace

std::optional<LinkKind> parse_kind(std::string_view text) {
  for (LinkKind kind : {LinkKind::pcie, LinkKind::nvlink, LinkKind::socket, LinkKind::infiniband,
                        LinkKind::ethernet, LinkKind::efa}) {
    if (text == to_string(kind)) return kind;
  }
  return std::nullopt;
}

std::optional<double> pcie_line_rate_Bps(int generation, int width) {
  const PcieGeneration* g = find_pcie(generation);
  if (g == nullptr) return std::nullopt;
  return g->transfers_per_s * width * g->encoding / 8.0;
}

bool valid_pcie_width(int width) {
  return width == 1 || width == 2 || width == 4 || width == 8 || width == 16;
}

double pcie_efficiency(int generation) {
  const PcieGeneration* g = find_pcie(generation);
  return g == nullptr ? 1.0 : g->efficiency;
}

std::optional<double> nvlink_link_rate_Bps(int generation) {
  for (const auto& g : kNvlink) {
    if (g.generation == generation) return g.link_Bps;
  }
  return std::nullopt;
}

double nvlink_efficiency(int generation) {
  for (const auto& g : kNvlink) {
    if (g.generation == generation) return g.efficiency;
  }
  return 1.0;
}

std::optional<double> infiniband_rate_Bps(std::string_view rate) {
  const InfinibandRate* r = find_infiniband(rate);
  if (r == nullptr) return std::nullopt;
  return r->port_Bps;
}

double infiniband_efficiency(std::string_view rate) {
  const InfinibandRate* r = find_infiniband(rate);
  return r == nullptr ? 1.0 : r->efficiency;
}

// No achieved figure is kept for socket links, Ethernet or EFA (topologies/README.md, "Sources"):
// line rate until a calibration or the file's `efficiency:` says otherwise.
double unmeasured_efficiency() {
  return 1.0;
}

TimePs default_latency(LinkKind kind) {
  // NCCL's own per-hop latency priors (tuning.cc hwLatencies, Ring LL, the lowest it assigns;
  // sim/collectives/README.md, "NCCL's figures"): NVLink 0.6 us, PCIe 1.0 us, network 2.7 us per
  // GPU-to-GPU hop. A hop there is GPU -> switch -> GPU, two links here, so each link gets half.
  // Socket links sit on PCIe paths (NCCL's SYS paths) and take PCIe's figure. Calibration refines
  // all of them.
  switch (kind) {
    case LinkKind::nvlink:
      return 300 * kPsPerNs;
    case LinkKind::pcie:
    case LinkKind::socket:
      return 500 * kPsPerNs;
    case LinkKind::infiniband:
    case LinkKind::ethernet:
    case LinkKind::efa:
      return 1350 * kPsPerNs;
  }
  return 0;
}

TimePs default_step_latency(LinkKind kind) {
  // The per-step figure that makes NCCL's latency formula meet a small message's time
  // (collectives/tuner/transport.hpp). InfiniBand and RoCE: NCCL's own network hop for Tree LL
  // (tuning.cc hwLatencies[NET][TREE][LL] = 5.0 us, sim/collectives/README.md), the figure NVIDIA
  // prices its bare-metal InfiniBand clusters with. Virtualized Azure NDmv4 (HDR, NCCL 2.17)
  // ran 9.6 us a step (calibrate/published/multinode.yaml, role fit: 2x8 all-reduce 10.3,
  // all-gather 9.7, 2x1 all-reduce 7.3, all-gather 9.5 us at 1 KiB) and sets it in its file. EFA:
  // the AWS p5 pair (median 71.07 us of 8 B - 1 KiB all-reduce, Tree LL: 15.2 us of GPU-side terms
  // + 2 steps) = 27.9 us.
  switch (kind) {
    case LinkKind::infiniband:
    case LinkKind::ethernet:
      return 5000 * kPsPerNs;
    case LinkKind::efa:
      return 27900 * kPsPerNs;
    case LinkKind::nvlink:
    case LinkKind::pcie:
    case LinkKind::socket:
      return 0;
  }
  return 0;
}

std::string pcie_label(int generation, int width) {
  return "PCIe Gen" + std::to_string(generation) + " x" + std::to_string(width);
}

std::string nvlink_label(int generation, int count) {
  return "NVLink" + std::to_string(generation) + " x" + std::to_string(count);
}

std::string infiniband_label(std::string_view rate) {
  return "InfiniBand " + std::string(rate);
}

std::string rate_label(LinkKind kind, double bandwidth_Bps) {
  const double gbps = bandwidth_Bps * 8 / 1e9;
  switch (kind) {
    case LinkKind::ethernet:
      return "Ethernet " + format_g("%gGbps", gbps);
    case LinkKind::efa:
      return "EFA " + format_g("%gGbps", gbps);
    case LinkKind::socket:
      return "Socket " + format_g("%gGB/s", bandwidth_Bps / 1e9);
    default:
      return to_string(kind);
  }
}

}  // namespace cs::topo::link_types
