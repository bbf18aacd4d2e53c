// A cluster as plain data: the nodes and links of a topology file after its server templates and
// fabric generators have been expanded. The loader fills it; the graph and later layers read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/units.hpp"

namespace cs::topo {

enum class NodeKind { gpu, cpu, pcie_switch, nvswitch, nic, network_switch };

// What a link is made of; decides how `clustersim topo` groups links and which NCCL figures apply.
enum class LinkKind { pcie, nvlink, socket, infiniband, ethernet, efa };

// The YAML spelling: gpu, cpu, pcie_switch, nvswitch, nic, switch.
const char* to_string(NodeKind kind);
const char* to_string(LinkKind kind);  // pcie, nvlink, socket, infiniband, ethernet, efa

// A GPU model's datasheet figures (dense, no sparsity).
struct GpuModel {
  std::string name;
  double bf16_flops = 0;  // FLOP/s
  double fp16_flops = 0;
  double fp32_flops = 0;
  double memory_bytes = 0;
  double memory_bandwidth_Bps = 0;
  // A device-local copy (cudaMemcpy device to device): its rate and its fixed cost on the GPU. Not
  // in the topology file: set by a calibration (calibration_file_apply.cpp, from the d2d copy fit
  // and gated one-rank NCCL calls); unset, network/copies.cpp uses its measured priors.
  std::optional<double> copy_Bps;
  std::optional<TimePs> copy_latency;
  SourceLoc loc;
};

struct Node {
  std::string name;  // globally unique: "<server>/<local>" inside a server, else the fabric name
  // The name inside its server template ("gpu3"); equals name in the fabric.
  std::string local_name;
  NodeKind kind = NodeKind::gpu;
  int server = -1;     // index into Cluster::servers; -1 for fabric switches
  int gpu_model = -1;  // index into Cluster::gpu_models (GPUs only)
  int rank = -1;       // global rank (GPUs only), see Cluster::ranks
  // Host memory of a cpu node (a socket): bandwidth of its DRAM and the rate at which the driver
  // copies pageable memory through its pinned staging buffer (a memcpy on the host).
  double host_memory_bandwidth_Bps = 0;
  double pageable_copy_Bps = 0;
  // Not in the topology file; set by a calibration (calibration_file_apply.cpp). The staging rate
  // of device-to-host pageable copies (0: pageable_copy_Bps, both directions alike), and each
  // direction's fixed cost of staging on top of the PCIe path's latency.
  double pageable_d2h_copy_Bps = 0;
  TimePs pageable_h2d_latency = 0;
  TimePs pageable_d2h_latency = 0;
  // NVSwitch nodes: whether the switch offers multicast objects (in-switch reduction, NCCL's NVLS);
  // gen3 NVSwitch does, but a VM may not expose it (topology key `multicast: false`).
  bool multicast = true;
  // CPU nodes: intel, amd or arm (topology key `vendor`); NCCL's tuner reads it across servers.
  std::string cpu_vendor = "intel";
  SourceLoc loc;
};

// A physical link between two nodes, full duplex: `bandwidth_Bps` in each direction at once.
struct Link {
  int a = -1;  // node index
  int b = -1;  // node index
  LinkKind kind = LinkKind::pcie;
  std::string label;         // "NVLink4 x18", "PCIe Gen5 x16", "InfiniBand NDR", "Ethernet 100Gbps"
  int generation = 0;        // PCIe / NVLink generation (0 where it does not apply)
  int lanes = 0;             // PCIe width or NVLink count (0 where it does not apply)
  double bandwidth_Bps = 0;  // line rate, per direction
  double efficiency = 1.0;   // achievable fraction of line rate for bulk transfers
  TimePs latency = 0;        // one-way latency of the hop
  // Network links (InfiniBand, Ethernet, EFA): one NCCL step across the network, GPU to remote
  // GPU (NIC, switches, the proxy and the transport's software), for the smallest message
  // (collectives/tuner/transport.hpp); 0 elsewhere.
  TimePs step_latency = 0;
  SourceLoc loc;

  double effective_bandwidth_Bps() const { return bandwidth_Bps * efficiency; }
};

// One instance of a server template.
struct Server {
  std::string name;           // instance name, e.g. "node3"
  std::string template_name;  // e.g. "dgx-h100"
  std::vector<int> gpus;      // node indices in local order: the order ranks are assigned
  std::vector<int> nics;      // node indices in local order: NIC i goes to rail i
};

// What a fabric generator built (empty kind when the file has no `fabric:`); the summary prints it.
// Bisection bandwidth is not recorded here: the graph computes it by max-flow.
struct FabricInfo {
  std::string kind;             // "single_switch", "fat_tree", "rail_optimized" or ""
  int leaf_ports = 0;           // switch radix (fat_tree, rail_optimized)
  double oversubscription = 0;  // leaf down:up port ratio (fat_tree, rail_optimized)
  std::vector<int> leaves;      // node indices of leaf (or the single) switches, in order
  std::vector<int> spines;      // node indices of spine switches, in order (pod by pod)
  std::vector<int> cores;       // node indices of core switches (three-level fabrics), in order
  int levels = 0;               // switch levels built: 1 (one switch or leaf), 2 or 3
  int pods = 0;                 // three-level fabrics: leaf-and-spine pods joined by the cores
  // Multi-plane fabrics: `planes` identical copies of the switches, each NIC with one port on
  // every plane; leaves, spines and cores above list plane 0's first, then plane 1's, ...
  // (equal counts per plane); `pods` counts one plane's.
  int planes = 1;
  // `spray`: each level above the leaves is one logical switch per plane (per pod for a third
  // level's spines) standing for this many physical switches of that level
  // (topology/expand/fabric.hpp).
  bool spray = false;
  bool sharp = false;            // the switches reduce in the network (SHARP): NCCL's CollNet
  long long sprayed_spines = 0;  // per plane (per pod with three levels)
  long long sprayed_cores = 0;   // per plane
};

// A server template's rental price: what `clustersim plan` charges per server and hour. From the
// template's `price_per_hour`, or a `--price TEMPLATE=USD` flag (source "--price").
struct ServerPrice {
  std::string template_name;
  double usd_per_hour = 0;
  std::string source;  // where the figure comes from (a price list, a quote)
  std::string date;    // the day it was valid, as the file gives it
  SourceLoc loc;
};

struct Cluster {
  std::string name;
  std::string source_file;
  std::vector<GpuModel> gpu_models;
  std::vector<Node> nodes;
  std::vector<Link> links;
  std::vector<Server> servers;
  // Rank r runs on GPU node ranks[r]. Ranks are numbered server by server in instance order and,
  // inside a server, by the GPU's local order: rank = server_index * gpus_per_server + local_gpu.
  std::vector<int> ranks;
  FabricInfo fabric;
  std::vector<ServerPrice> prices;  // templates that carry a price, in file order

  int find_node(const std::string& name) const;  // -1 when absent
  // The price of a template, or null when it has none.
  const ServerPrice* price_of(const std::string& template_name) const;
};

}  // namespace cs::topo
