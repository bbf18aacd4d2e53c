// apply_links: the copy fits as link efficiencies and latencies, staging rate, memory bandwidth.
#include <algorithm>

#include "calibration/calfile/calibration_file.hpp"
#include "network/copies.hpp"
#include "topology/graph.hpp"

namespace cs::cal {
namespace {

// Sets efficiency = bandwidth / line rate (at most 1) and latency = total / hops on every link
// of `kind`.
void set_kind(topo::Cluster& cluster, topo::LinkKind kind, double bandwidth_GBps, double latency_us,
              int hops) {
  for (topo::Link& l : cluster.links) {
    if (l.kind != kind || !(l.bandwidth_Bps > 0)) continue;
    l.efficiency = std::min(1.0, bandwidth_GBps * 1e9 / l.bandwidth_Bps);
    l.latency = ps_from_seconds(latency_us * 1e-6 / std::max(hops, 1));
  }
}

}  // namespace

void apply_links(const Calibration& c, topo::Cluster& cluster) {
  if (cluster.ranks.empty()) return;
  // Hop counts of the measured routes, read before anything changes.
  int peer_hops = 0;
  int host_pcie_hops = 0;
  {
    const topo::ClusterGraph graph(cluster);
    const int gpu0 = cluster.ranks.front();
    if (cluster.ranks.size() > 1) peer_hops = graph.route(gpu0, cluster.ranks[1]).hops();
    const topo::Route host = graph.route(net::host_cpu_of(graph, gpu0), gpu0);
    for (topo::ChannelId ch : host.channels) {
      if (graph.link_of(ch).kind == topo::LinkKind::pcie) ++host_pcie_hops;
    }
  }
  if (const CopyFit* peer = find_copy_fit(c.copies, "peer"); peer && peer_hops > 0)
    set_kind(cluster, topo::LinkKind::nvlink, peer->bandwidth_GBps, peer->latency_us, peer_hops);
  const CopyFit* h2d = find_copy_fit(c.copies, "h2d_pinned");
  const CopyFit* d2h = find_copy_fit(c.copies, "d2h_pinned");
  if (h2d && d2h) {
    set_kind(cluster, topo::LinkKind::pcie, 0.5 * (h2d->bandwidth_GBps + d2h->bandwidth_GBps),
             0.5 * (h2d->latency_us + d2h->latency_us), host_pcie_hops);
  }
  // Pageable copies: each direction's staging rate, and its intercept above the latency the
  // PCIe path was just given (the staging's own fixed cost; never negative).
  const double path_latency_us = h2d && d2h ? 0.5 * (h2d->latency_us + d2h->latency_us) : 0.0;
  const auto staging_cost = [path_latency_us](const CopyFit* pageable) {
    if (pageable == nullptr || !(path_latency_us > 0)) return TimePs{0};
    return ps_from_seconds(std::max(0.0, pageable->latency_us - path_latency_us) * 1e-6);
  };
  const CopyFit* h2d_pageable = find_copy_fit(c.copies, "h2d_pageable");
  const CopyFit* d2h_pageable = find_copy_fit(c.copies, "d2h_pageable");
  for (topo::Node& n : cluster.nodes) {
    if (n.kind != topo::NodeKind::cpu) continue;
    if (h2d_pageable) n.pageable_copy_Bps = h2d_pageable->bandwidth_GBps * 1e9;
    if (d2h_pageable) n.pageable_d2h_copy_Bps = d2h_pageable->bandwidth_GBps * 1e9;
    n.pageable_h2d_latency = staging_cost(h2d_pageable);
    n.pageable_d2h_latency = staging_cost(d2h_pageable);
  }
  // A device-local copy: the fitted rate. Its intercept is not the copy's cost on the GPU but
  // the interval at which one host thread issues back-to-back copies (copy.json: 3.3-3.4 us at
  // 4 KiB - 1 MiB on an H200 whose gated one-rank NCCL calls, the same copy timed on the GPU,
  // take 1.65 us; calibrate/data/h200x1-onerank). So the GPU's fixed cost is the one measured on
  // gated one-rank calls where the data has them (gpu_latency_us), else the prior
  // (network/copies.cpp), and validate floors d2d copies with the intercept, as it floors
  // host-paced NCCL calls with their host floor. Only the measured model, that of the first rank
  // (machine_match.hpp): another model in the same topology keeps its own priors.
  if (const CopyFit* d2d = find_copy_fit(c.copies, "d2d")) {
    const int model = cluster.nodes[static_cast<std::size_t>(cluster.ranks.front())].gpu_model;
    if (model >= 0) {
      topo::GpuModel& m = cluster.gpu_models[static_cast<std::size_t>(model)];
      m.copy_Bps = d2d->bandwidth_GBps * 1e9;
      if (d2d->gpu_latency_us > 0) m.copy_latency = ps_from_seconds(d2d->gpu_latency_us * 1e-6);
    }
  }
}

void apply_op_links(const NcclFit& fit, topo::Cluster& cluster) {
  if (!(fit.p2p_nvlink_efficiency > 0)) return;
  for (topo::Link& l : cluster.links) {
    if (l.kind == topo::LinkKind::nvlink) l.efficiency = fit.p2p_nvlink_efficiency;
  }
}

}  // namespace cs::cal
