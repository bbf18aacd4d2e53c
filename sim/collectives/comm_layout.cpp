// Communicator layout: group ranks by server, then read the tuner's view of the hardware off the
// graph (one sample server: servers of one communicator are assumed alike).
#include "collectives/comm_layout.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace cs::coll {
namespace {

using topo::LinkKind;
using topo::NodeKind;

bool is_network(LinkKind k) {
  return k == LinkKind::infiniband || k == LinkKind::ethernet || k == LinkKind::efa;
}

// The links touching a node, found by one scan (called for a handful of sample nodes).
std::vector<const topo::Link*> links_of(const topo::Cluster& c, int node) {
  std::vector<const topo::Link*> out;
  for (const topo::Link& l : c.links) {
    if (l.a == node || l.b == node) out.push_back(&l);
  }
  return out;
}

}  // namespace

double nccl_link_GBps(const topo::Link& link, const NcclParams& params) {
  if (link.kind == LinkKind::nvlink && link.lanes > 0)
    return link.lanes * params.nvlink_per_link_GBps;
  if (link.kind == LinkKind::pcie) {
    const double x16 = nccl_pcie_GBps(params, link.generation);
    if (x16 > 0) return link.lanes > 0 ? x16 * link.lanes / 16.0 : x16;
  }
  return link.bandwidth_Bps / 1e9;
}

double net_plugin_latency_us(topo::LinkKind kind) {
  // aws-ofi-nccl reports 75 us for the EFA of p4d, p4de, p5 and p5e (platform-aws.cpp, from
  // v1.7.0; 150 us before); NCCL's own InfiniBand / RoCE transport reports none.
  return kind == LinkKind::efa ? 75.0 : 0.0;
}

GpuArch comm_arch(const topo::Cluster& cluster, const std::vector<int>& ranks) {
  if (ranks.empty() || ranks.front() < 0 ||
      static_cast<std::size_t>(ranks.front()) >= cluster.ranks.size())
    return GpuArch::hopper;
  const topo::Node& gpu =
      cluster
          .nodes[static_cast<std::size_t>(cluster.ranks[static_cast<std::size_t>(ranks.front())])];
  if (gpu.gpu_model < 0) return GpuArch::hopper;
  return arch_from_gpu_name(cluster.gpu_models[static_cast<std::size_t>(gpu.gpu_model)].name);
}

CommLayout make_layout(RouteCache& routes, const std::vector<int>& ranks,
                       const NcclParams& params) {
  const topo::ClusterGraph& graph = routes.graph();
  const topo::Cluster& c = graph.cluster();
  CommLayout out;
  out.ranks = ranks;
  if (ranks.empty()) throw InputError("key 'ranks': a communicator needs at least one rank");
  std::vector<char> seen(c.ranks.size(), 0);
  std::map<int, std::size_t> group_of_server;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    if (r < 0 || static_cast<std::size_t>(r) >= c.ranks.size())
      throw InputError("key 'ranks': rank " + std::to_string(r) + " does not exist; the cluster '" +
                       c.name + "' has ranks 0.." + std::to_string(c.ranks.size() - 1));
    if (seen[static_cast<std::size_t>(r)])
      throw InputError("key 'ranks': rank " + std::to_string(r) + " appears twice");
    seen[static_cast<std::size_t>(r)] = 1;
    const int node = c.ranks[static_cast<std::size_t>(r)];
    out.gpu_nodes.push_back(node);
    const int server = c.nodes[static_cast<std::size_t>(node)].server;
    auto [it, added] = group_of_server.emplace(server, out.groups.size());
    if (added) out.groups.push_back(ServerGroup{server, {}, {}, {}});
    ServerGroup& g = out.groups[it->second];
    g.gpus.push_back(node);
    g.comm_ranks.push_back(static_cast<int>(i));
  }
  // Local GPU order inside each server (the order NCCL's intra-server chains follow).
  for (ServerGroup& g : out.groups) {
    const std::vector<int>& order = c.servers[static_cast<std::size_t>(g.server)].gpus;
    std::vector<std::size_t> idx(g.gpus.size());
    for (std::size_t k = 0; k < idx.size(); ++k) idx[k] = k;
    auto pos = [&](int node) {
      return std::find(order.begin(), order.end(), node) - order.begin();
    };
    std::sort(idx.begin(), idx.end(),
              [&](std::size_t x, std::size_t y) { return pos(g.gpus[x]) < pos(g.gpus[y]); });
    ServerGroup sorted{g.server, {}, {}, {}};
    for (std::size_t k : idx) {
      sorted.gpus.push_back(g.gpus[k]);
      sorted.comm_ranks.push_back(g.comm_ranks[k]);
    }
    g = std::move(sorted);
    const std::vector<int>& all_nics = c.servers[static_cast<std::size_t>(g.server)].nics;
    for (int nic : all_nics) {
      const int gpu = routes.nearest_gpu(nic);
      if (std::find(g.gpus.begin(), g.gpus.end(), gpu) != g.gpus.end()) g.nics.push_back(nic);
    }
    if (g.nics.empty()) g.nics = all_nics;
  }

  CommShape& shape = out.shape;
  shape.n_ranks = static_cast<int>(ranks.size());
  shape.n_nodes = static_cast<int>(out.groups.size());
  SearchInput in;
  in.multi_node = shape.n_nodes > 1;
  for (const ServerGroup& g : out.groups)
    in.gpus_per_node = std::max(in.gpus_per_node, static_cast<int>(g.gpus.size()));

  // Sample server: the first with the most ranks.
  const ServerGroup* sample = &out.groups.front();
  for (const ServerGroup& g : out.groups) {
    if (g.gpus.size() > sample->gpus.size()) sample = &g;
  }
  if (in.multi_node) {  // servers of a multi-server communicator must all reach the network
    for (const ServerGroup& g : out.groups) {
      if (g.nics.empty())
        throw InputError("key 'ranks': the communicator spans " +
                         std::to_string(out.groups.size()) + " servers but server '" +
                         c.servers[static_cast<std::size_t>(g.server)].name + "' has no NIC");
    }
  }
  const int gpu0 = sample->gpus.front();
  double nvlink_total = 0;
  double pcie_figure = 0;
  for (const topo::Link* l : links_of(c, gpu0)) {
    if (l->kind == LinkKind::nvlink) nvlink_total += nccl_link_GBps(*l, params);
    if (l->kind == LinkKind::pcie && pcie_figure == 0) pcie_figure = nccl_link_GBps(*l, params);
  }
  in.gpu_total_GBps = nvlink_total > 0 ? nvlink_total : pcie_figure;

  shape.intra = LinkClass::nvlink;
  bool multicast = true;  // every NVSwitch on the sample server's paths offers multicast
  in.gpu_pair_GBps = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k + 1 < sample->gpus.size(); ++k) {
    const CachedRoute r = routes.route(sample->gpus[k], sample->gpus[k + 1]);
    double path = std::numeric_limits<double>::infinity();
    for (topo::ChannelId ch : r.channels) {
      const topo::Link& l = graph.link_of(ch);
      if (l.kind != LinkKind::nvlink) shape.intra = LinkClass::pcie;
      path = std::min(path, nccl_link_GBps(l, params));
      const topo::Node& to = c.nodes[static_cast<std::size_t>(graph.channel(ch).to)];
      if (to.kind == NodeKind::nvswitch) {
        shape.nvswitch = true;
        multicast = multicast && to.multicast;
      }
    }
    in.gpu_pair_GBps = std::min(in.gpu_pair_GBps, path);
  }
  if (sample->gpus.size() < 2) in.gpu_pair_GBps = in.gpu_total_GBps;

  in.nics_per_node = static_cast<int>(sample->nics.size());
  if (!sample->nics.empty()) {
    double nic = 0;
    double nic_pcie = 0;
    // A NIC with a port on each plane of a multi-plane fabric is one NCCL device of their summed
    // speed (the NIC or its plugin balances the planes).
    for (const topo::Link* l : links_of(c, sample->nics.front())) {
      if (is_network(l->kind) && nic == 0) {
        shape.net_step_latency_us = us_from_ps(l->step_latency);
        shape.net_plugin_latency_us = net_plugin_latency_us(l->kind);
        // aws-ofi-nccl, NCCL's network plugin on EFA, also serves as its tuner; it keys its
        // regions on the instance type, which the server template's name is on AWS files.
        if (l->kind == LinkKind::efa && sample->server >= 0)
          shape.ofi_tuner =
              ofi_platform(c.servers[static_cast<std::size_t>(sample->server)].template_name);
      }
      if (is_network(l->kind)) nic += nccl_link_GBps(*l, params);
      if (l->kind == LinkKind::pcie && nic_pcie == 0) nic_pcie = nccl_link_GBps(*l, params);
    }
    in.nic_GBps = nic;
    const double gpu_side = pcie_figure > 0 ? pcie_figure : nic_pcie;
    in.gpu_nic_GBps = std::min(nic_pcie > 0 ? nic_pcie : nic, gpu_side > 0 ? gpu_side : nic);
    if (shape.net_plugin_latency_us > 0) {
      // aws-ofi-nccl's RDMA protocol (p5 and later) stripes the EFA NICs behind one GPU's PCIe
      // switch as one NCCL device of their summed speed (aws-ofi-nccl nccl_ofi_topo_group, from
      // v1.7.0); where a NIC serves several GPUs (p4d) each NIC stays a device of its own.
      std::map<int, int> nics_of_gpu;
      for (int n : sample->nics) ++nics_of_gpu[routes.nearest_gpu(n)];
      const int rails = nics_of_gpu.begin()->second;
      bool even = true;
      for (const auto& [gpu, count] : nics_of_gpu) even = even && count == rails;
      if (even && rails > 1) {
        in.nics_per_node = static_cast<int>(nics_of_gpu.size());
        in.nic_GBps = nic * rails;
        in.gpu_nic_GBps = std::min(gpu_side > 0 ? gpu_side : in.nic_GBps, in.nic_GBps);
      }
    }
  }

  shape.ring = search_channels(in, params);
  shape.tree = tree_graph(in, shape.ring, params);
  shape.nvls = nvls_graph(in, params);
  // NVLS needs an NVSwitch with multicast in every server and sm90 or newer (NCCL search.cc:
  // no NVLS graph below compute capability 9.0).
  const GpuArch arch = comm_arch(c, ranks);
  shape.multicast = shape.nvswitch && multicast && arch >= GpuArch::hopper;
  shape.sm90 = arch >= GpuArch::hopper;
  // CollNet (tuner/collnet.hpp): a generated fabric with SHARP, its graphs as NCCL's init.cc builds
  // them.
  shape.sharp = in.multi_node && c.fabric.sharp;
  shape.collnet_direct = collnet_direct_graph(in, params);
  shape.collnet_chain =
      GraphInfo{shape.ring.n_channels, shape.tree.bw_intra_GBps, shape.tree.bw_inter_GBps};
  for (const topo::Node& n : c.nodes) {
    if (n.server == sample->server && n.kind == NodeKind::cpu && n.cpu_vendor == "amd")
      shape.amd_cpu = true;
  }
  return out;
}

std::vector<int> first_ranks(int n) {
  std::vector<int> ranks(static_cast<std::size_t>(std::max(n, 0)));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

}  // namespace cs::coll
