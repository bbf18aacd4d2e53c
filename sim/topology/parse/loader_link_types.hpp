// The link types a topology file may name and the figures each implies: line rate from the
// generation / width / rate, the achievable fraction, the per-hop latency and the label. Every
// default is sourced in loader_link_types.cpp. Pure functions, no YAML.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/units.hpp"
#include "topology/cluster/cluster.hpp"

namespace cs::topo::link_types {

std::optional<LinkKind> parse_kind(std::string_view text);  // pcie, nvlink, socket, ...
inline constexpr const char* kValidKinds = "pcie, nvlink, socket, infiniband, ethernet, efa";

// PCIe: line rate per direction of a link of `width` lanes; nullopt for an unknown generation.
std::optional<double> pcie_line_rate_Bps(int generation, int width);
inline constexpr const char* kValidPcieGenerations = "3, 4, 5, 6";
bool valid_pcie_width(int width);
inline constexpr const char* kValidPcieWidths = "1, 2, 4, 8, 16";
double pcie_efficiency(int generation);

// NVLink: rate of one link per direction; nullopt for an unknown generation.
std::optional<double> nvlink_link_rate_Bps(int generation);
inline constexpr const char* kValidNvlinkGenerations = "2, 3, 4, 5";
double nvlink_efficiency(int generation);

// InfiniBand: port rate per direction for a data-rate name; nullopt when unknown.
std::optional<double> infiniband_rate_Bps(std::string_view rate);
inline constexpr const char* kValidInfinibandRates = "HDR, NDR, XDR";
double infiniband_efficiency(std::string_view rate);

// Efficiency of socket, Ethernet and EFA links, which have no achieved figure to go by.
double unmeasured_efficiency();

// One-way latency of one hop over a link of this kind.
TimePs default_latency(LinkKind kind);
// One NCCL step across the network over a transport of this kind (0 for links inside a server).
TimePs default_step_latency(LinkKind kind);

// "PCIe Gen5 x16", "NVLink4 x18", "InfiniBand NDR", "Ethernet 100Gbps", "EFA 100Gbps".
std::string pcie_label(int generation, int width);
std::string nvlink_label(int generation, int count);
std::string infiniband_label(std::string_view rate);
std::string rate_label(LinkKind kind, double bandwidth_Bps);  // ethernet, efa, socket

}  // namespace cs::topo::link_types
