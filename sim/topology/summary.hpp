// What `clustersim topo` reports about a cluster, as plain data computed from its graph: servers,
// links by type, per-GPU bandwidth, bisection bandwidth and a GPU-to-GPU connection matrix in the
// manner of `nvidia-smi topo -m`. Rendering (text, JSON) lives with the command.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topology/bisection.hpp"
#include "topology/graph.hpp"

namespace cs::topo {

// How two GPUs reach each other, in nvidia-smi's words, judged from the route the simulator uses.
enum class ConnectionType {
  self,    // X: the GPU itself
  nvlink,  // NV<n>: NVLink only, direct or through NVSwitch; n = fewest lanes on the path
  pix,     // PIX: through one PCIe switch
  pxb,     // PXB: through several PCIe switches, no host bridge
  phb,     // PHB: through a CPU's PCIe host bridge
  sys,     // SYS: across the link between CPU sockets
  net,     // NET: across the network (another server, or a NIC-to-network hop)
};

struct GpuConnection {
  ConnectionType type = ConnectionType::self;
  int nvlink_lanes = 0;      // for nvlink
  double bandwidth_Bps = 0;  // route bottleneck after link efficiency; inf for self
  double line_rate_Bps = 0;  // route bottleneck at line rate; inf for self
  TimePs latency = 0;
  int hops = 0;
};

std::string to_string(const GpuConnection& connection);  // "X", "NV18", "PIX", ..., "NET"

// Classifies the route between two GPU nodes.
GpuConnection classify_connection(const ClusterGraph& graph, int gpu_a, int gpu_b);

// A block of the matrix: cells[i][j] connects row GPU i to column GPU j (node indices).
struct GpuMatrix {
  std::string title;
  std::vector<int> rows;
  std::vector<int> columns;
  std::vector<std::vector<GpuConnection>> cells;
};

// Servers of one template, instantiated `count` times.
struct ServerGroup {
  std::string template_name;
  int count = 0;
  int gpus_per_server = 0;
  int nics_per_server = 0;
  std::string gpu_model;  // model of the first GPU; "" for a server without GPUs
  std::optional<ServerPrice> price;
};

// Links of one kind and label ("NVLink4 x18"), with their summed per-direction line rate.
struct LinkGroup {
  LinkKind kind = LinkKind::pcie;
  std::string label;
  int count = 0;
  double bandwidth_Bps = 0;
};

// Line-rate bandwidth per direction a GPU of a template has on each kind of link: the sum of its
// NVLink links, the sum of its PCIe links, and its share of the server's NIC network links (their
// sum divided by the server's GPU count). Minimum over the template's GPUs for NVLink and PCIe.
struct GpuBandwidth {
  std::string template_name;
  double nvlink_Bps = 0;
  double pcie_Bps = 0;
  double network_Bps = 0;
};

struct TopologySummary {
  std::string name;
  std::string source_file;
  int gpu_count = 0;
  int node_count = 0;
  std::vector<ServerGroup> servers;   // in order of first instance
  std::vector<GpuModel> gpu_models;   // models that GPUs use
  std::vector<LinkGroup> links;       // by kind, then label
  std::vector<GpuBandwidth> per_gpu;  // one per template with GPUs
  int fabric_switches = 0;            // network switch nodes
  Bisection bisection;
  // Up to 16 GPUs (or one server): one block with every GPU. More: the first server's GPUs among
  // themselves, then rank 0 against the GPUs of the last server (a representative inter-server
  // row).
  bool matrix_truncated = false;
  std::vector<GpuMatrix> matrices;
};

inline constexpr int kFullMatrixMaxGpus = 16;

TopologySummary summarize(const ClusterGraph& graph);

// The summary as text a person reads; deterministic (the file appears by its base name only).
std::string format_summary(const TopologySummary& summary, const Cluster& cluster);

// The file name without its directories, as the summary prints it.
std::string base_name(const std::string& path);

}  // namespace cs::topo
