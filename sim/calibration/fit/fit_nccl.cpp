// The NCCL fit: regressors from the tuner's own view of each call, a joint relative least squares
// per (algorithm, protocol), then the mapping onto NcclParams' fields.
#include "calibration/fit/fit_nccl.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "calibration/fit/fit_host_floor.hpp"
#include "calibration/fit/fit_least_squares.hpp"
#include "calibration/predict/predictor.hpp"
#include "collectives/comm_layout.hpp"
#include "collectives/nccl/ring_alignment.hpp"
#include "collectives/nccl/ring_passes.hpp"
#include "collectives/tuner/tuner.hpp"

namespace cs::cal {
namespace {

using coll::Algo;
using coll::Proto;

// The hop count NCCL's latency formula multiplies on one node.
int latency_steps(coll::Op op, Algo algo, int n) {
  if (algo == Algo::tree) return 2 * (n - 1);
  switch (op) {
    case coll::Op::all_reduce:
      return 2 * (n - 1);
    case coll::Op::all_gather:
    case coll::Op::reduce_scatter:
      return n - 1;
    default:
      return n;
  }
}

struct Shapes {
  std::map<int, coll::CommShape> by_ranks;
};

Shapes shapes_for(const topo::ClusterGraph& graph, const std::vector<int>& counts,
                  const coll::NcclParams& params) {
  Shapes s;
  coll::RouteCache routes(graph);
  for (int n : counts) {
    if (n < 2 || n > static_cast<int>(graph.cluster().ranks.size())) continue;
    s.by_ranks[n] = coll::make_layout(routes, coll::first_ranks(n), params).shape;
  }
  return s;
}

// Training rows of one (algo, proto): x = {1, steps, B * busBw, the ring fill's kB}, t in us,
// where B is the bandwidth part of the simulator's own time for the call under the current
// constants (its time less the call's run latency; a misaligned all-gather's added time is known,
// not fitted). B * busBw is the byte count the simulator moves at busBw (busBw / algBw and the
// small-message channel shrink included), so the third coefficient is 1 / busBw.
// Host-paced points the host floor of their collective hides are left out. Host-paced data
// shows the GPUs' latency nowhere (the floor hides it at every size it would show), so with
// `fixed_latency` the latency stays the simulator's (NCCL's own figures, which the gated runs
// match: 7-11 us on 2-4 H200s, calibrate/data/h200x4-run3) and only busBw is fitted.
using FloorsByOp = std::map<std::string, HostFloors>;
std::vector<FitRow> rows_for(const Measurements& data, const Split& split, const std::string& only,
                             Algo algo, Proto proto, Predictor& simulator, const FloorsByOp& floors,
                             bool fixed_latency) {
  std::vector<FitRow> rows;
  for (const NcclPoint& p : data.nccl) {
    if (!only.empty() && p.op != only) continue;
    if (!device_bound(p, floors.at(p.op))) continue;
    auto options = forced_options(p);
    if (p.is_default()) {
      // A default run is a measurement of whatever NCCL logged it chose.
      const auto a = coll::parse_algo(p.algo);
      const auto q = coll::parse_proto(p.proto);
      if (!a || !q) continue;
      options->algo_mask = 1u << coll::index_of(*a);
      options->proto_mask = 1u << coll::index_of(*q);
    }
    const auto op = coll::parse_op(p.op);
    if (!options || !op) continue;
    if (options->algo_mask != (1u << coll::index_of(algo)) ||
        options->proto_mask != (1u << coll::index_of(proto)))
      continue;
    if (p.n_ranks < 2 || p.n_ranks > simulator.gpu_count()) continue;
    if (split.held_out(p.n_ranks, p.bytes, nccl_curve_gap(data, p))) continue;
    const coll::CollectiveResult r = simulator.collective(*op, p.n_ranks, p.bytes, *options);
    const coll::Estimate& e = r.choice.estimate;
    if (r.choice.p2p || e.algo != algo || e.proto != proto || !(e.bus_bw_GBps > 0)) continue;
    const double latency_us = r.choice.run_latency_us;
    const double bandwidth_us = std::max(r.time_us() - latency_us, 0.0);
    // A ring's fill is fitted on its own (its kB at 1 GB/s), apart from the latency.
    auto fill_us = [&](double rate) {
      return coll::ring_fill_us(*op, algo, proto, p.bytes, p.n_ranks, r.choice.n_channels, 1, rate);
    };
    const double fill_kB = fill_us(1.0);
    const double latency_less_fill = latency_us - fill_us(simulator.params().ring_fill_GBps);
    if (fixed_latency) {
      rows.push_back(
          {{0.0, 0.0, bandwidth_us * e.bus_bw_GBps, fill_kB}, p.time_us, 1.0, latency_less_fill});
      continue;
    }
    const double steps = latency_steps(*op, algo, p.n_ranks);
    const double misaligned_us = coll::ring_misaligned_us(
        *op, algo, proto, p.bytes, p.n_ranks, r.choice.n_channels, 1, simulator.params());
    rows.push_back(
        {{1.0, steps, bandwidth_us * e.bus_bw_GBps, fill_kB}, p.time_us, 1.0, misaligned_us});
  }
  return rows;
}

// NCCL's per-NVLink figure at which the channel search yields a ring bus bandwidth nearest to
// `bus_GBps` (searched over 0.01 GB/s steps around bus / lanes). Returns the prior when the
// machine's GPUs do not meet over NVLink.
double nvlink_figure_for(double bus_GBps, const topo::ClusterGraph& graph, int n,
                         coll::NcclParams params) {
  int lanes = 0;
  const topo::Cluster& c = graph.cluster();
  const int gpu0 = c.ranks.empty() ? -1 : c.ranks.front();
  for (const topo::Link& l : c.links) {
    if (l.kind == topo::LinkKind::nvlink && (l.a == gpu0 || l.b == gpu0)) lanes += l.lanes;
  }
  if (lanes == 0) return params.nvlink_per_link_GBps;
  const double center = bus_GBps / lanes;
  double best = params.nvlink_per_link_GBps;
  double best_gap = -1;
  coll::RouteCache routes(graph);
  for (int i = -200; i <= 200; ++i) {
    params.nvlink_per_link_GBps = center + 0.01 * i;
    if (params.nvlink_per_link_GBps <= 0) continue;
    const coll::CommShape s = coll::make_layout(routes, coll::first_ranks(n), params).shape;
    const double gap = std::fabs(s.ring.n_channels * s.ring.bw_intra_GBps - bus_GBps);
    if (best_gap < 0 || gap < best_gap - 1e-9) {
      best_gap = gap;
      best = params.nvlink_per_link_GBps;
    }
  }
  return best;
}

// Whether enough rows carry a ring fill to fit it (four or more). If not, their fill is taken at
// the prior's rate as a known part and the column goes.
bool fit_fill(std::vector<FitRow>& rows, double prior_fill_GBps) {
  const auto carrying =
      std::count_if(rows.begin(), rows.end(), [](const FitRow& r) { return r.x[3] > 0; });
  if (carrying >= 4) return true;
  for (FitRow& r : rows) {
    if (prior_fill_GBps > 0) r.known += r.x[3] / prior_fill_GBps;
    r.x[3] = 0;
  }
  return false;
}

// Whether every row crosses the same number of latency steps: then base and per-hop latency
// cannot be told apart.
bool one_step_count(const std::vector<FitRow>& rows) {
  return !rows.empty() && rows.front().x.size() == 4 &&
         std::all_of(rows.begin(), rows.end(),
                     [&](const FitRow& r) { return r.x[1] == rows.front().x[1]; });
}

// The fit with the per-hop latency held at the prior: base and busBw only. A machine measured at
// one rank count says nothing of how latency grows with ranks (ops of different step counts at
// that count mix up their own differences), so another count keeps NCCL's per-hop figure
// (fitting both made the 2-rank fits 12-15% off at 3-4 ranks below 1 MiB).
NcclConfigFit fit_config_prior_hop(std::vector<FitRow> rows, Algo algo, Proto proto,
                                   double prior_hop_us, double prior_fill_GBps) {
  const bool fill = fit_fill(rows, prior_fill_GBps);
  for (FitRow& r : rows) {
    r.known += prior_hop_us * r.x[1];
    r.x = {r.x[0], r.x[2], r.x[3]};
  }
  const LinearFit f = fit_relative_robust(rows);
  NcclConfigFit out;
  out.algo = algo;
  out.proto = proto;
  out.base_us = f.coef[0];
  out.hop_us = prior_hop_us;
  out.bus_GBps = f.coef[1] > 0 ? 1.0 / f.coef[1] : 0.0;
  if (fill) out.ring_fill_GBps = f.coef[2] > 0 ? 1.0 / f.coef[2] : 0.0;
  out.points = f.points;
  out.rms_rel_error = f.rms_rel_error;
  out.max_rel_error = f.max_rel_error;
  return out;
}

NcclConfigFit fit_config(std::vector<FitRow> rows, Algo algo, Proto proto, double prior_fill_GBps) {
  const bool fill = fit_fill(rows, prior_fill_GBps);
  const LinearFit f = fit_relative_robust(rows);
  NcclConfigFit out;
  out.algo = algo;
  out.proto = proto;
  out.base_us = f.coef[0];
  out.hop_us = f.coef[1];
  out.bus_GBps = f.coef[2] > 0 ? 1.0 / f.coef[2] : 0.0;  // coefficient of B * busBw
  if (fill) out.ring_fill_GBps = f.coef[3] > 0 ? 1.0 / f.coef[3] : 0.0;
  out.points = f.points;
  out.rms_rel_error = f.rms_rel_error;
  out.max_rel_error = f.max_rel_error;
  return out;
}

// Puts one fitted configuration into the parameter struct (see the header for the mapping).
void apply_config(const NcclConfigFit& f, const coll::CommShape& shape, coll::NcclParams& p) {
  const int a = coll::index_of(f.algo);
  const int q = coll::index_of(f.proto);
  p.base_latency_us[a][q] = f.base_us;
  p.hop_latency_us[coll::index_of(shape.intra)][a][q] = f.hop_us;
  if (f.ring_fill_GBps >= 0) p.ring_fill_GBps = f.ring_fill_GBps;
  if (!(f.bus_GBps > 0)) return;
  const double nch = shape.ring.n_channels;
  const double raw = nch * shape.ring.bw_intra_GBps;
  const double per_channel = f.bus_GBps / nch;
  if (f.algo == Algo::ring && f.proto == Proto::ll) {
    p.ring_ll_efficiency = f.bus_GBps / raw;
    p.ll_max_bw_GBps[0] = std::max(p.ll_max_bw_GBps[0], f.bus_GBps);
  } else if (f.algo == Algo::ring && f.proto == Proto::ll128) {
    p.ll128_efficiency = f.bus_GBps / raw;
    p.ring_ll128_max_per_channel_GBps = std::max(p.ring_ll128_max_per_channel_GBps, per_channel);
  } else if (f.algo == Algo::tree) {
    // Tree all-reduce: every protocol starts from min(raw * treeEff, nch * perChTree).
    const double tree_simple =
        std::min(raw * p.tree_efficiency, nch * p.tree_max_per_channel_GBps[0]);
    if (f.proto == Proto::simple) {
      p.tree_efficiency = f.bus_GBps / raw;
      p.tree_max_per_channel_GBps[0] = std::max(p.tree_max_per_channel_GBps[0], per_channel);
    } else if (f.proto == Proto::ll) {
      p.tree_ll_efficiency = f.bus_GBps / tree_simple;
      p.ll_max_bw_GBps[0] = std::max(p.ll_max_bw_GBps[0], f.bus_GBps);
    } else {
      p.tree_ll128_efficiency_one_node = f.bus_GBps / tree_simple;
      p.tree_ll128_max_per_channel_GBps[0] =
          std::max(p.tree_ll128_max_per_channel_GBps[0], per_channel);
    }
  }
}

}  // namespace

std::optional<coll::TunerOptions> forced_options(const NcclPoint& point) {
  coll::TunerOptions o;
  o.nvls = point.nvls;
  if (point.forced_algo != "default") {
    const auto a = coll::parse_algo(point.forced_algo);
    if (!a) return std::nullopt;
    o.algo_mask = 1u << coll::index_of(*a);
  }
  if (point.forced_proto != "default") {
    const auto p = coll::parse_proto(point.forced_proto);
    if (!p) return std::nullopt;
    o.proto_mask = 1u << coll::index_of(*p);
  }
  return o;
}

std::vector<int> nccl_rank_counts(const Measurements& data) {
  std::vector<int> counts;
  for (const NcclPoint& p : data.nccl) counts.push_back(p.n_ranks);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

int nccl_curve_gap(const Measurements& data, const NcclPoint& point) {
  std::vector<double> sizes;
  for (const NcclPoint& p : data.nccl) {
    if (p.op == point.op && p.n_ranks == point.n_ranks && p.forced_algo == point.forced_algo &&
        p.forced_proto == point.forced_proto)
      sizes.push_back(p.bytes);
  }
  return ladder_gap(sizes);
}

NcclFit fit_nccl(const Measurements& data, const Split& split, const topo::ClusterGraph& graph,
                 const std::string& op) {
  const coll::GpuArch arch = coll::arch_from_gpu_name(data.node.gpu_name);
  NcclFit out;
  out.op = op;
  out.params = coll::nccl_priors(arch);
  const std::vector<int> counts = nccl_rank_counts(data);
  if (counts.empty()) return out;
  // The floors of the collectives this fit reads (rows_for()): `op`'s, or every op's. One-rank
  // records have floors too (NCCL's launch of a copy), even where no constant can be fitted.
  FloorsByOp floors;
  for (const NcclPoint& p : data.nccl) {
    if ((op.empty() || p.op == op) && !floors.count(p.op))
      floors[p.op] = fit_host_floors(data, split, p.op);
  }
  if (!op.empty() && floors.count(op)) out.host_floors = floors.at(op);
  int largest_training = 0;
  int training_counts = 0;  // rank counts of two or more the fit reads
  for (int n : counts) {
    if (n >= 2 && !split.rank_held_out(n)) {
      largest_training = std::max(largest_training, n);
      ++training_counts;
    }
  }
  if (largest_training == 0) return out;
  const bool fixed_latency =
      std::any_of(floors.begin(), floors.end(), [](const auto& f) { return !f.second.empty(); });

  // Ring Simple first: its bus bandwidth sets the channel search, which the others are relative
  // to. Twice, because the channels the search finds change the small-message shrink.
  coll::NcclParams params = out.params;
  for (int pass = 0; pass < 2; ++pass) {
    Predictor simulator(graph.cluster(), params);
    const auto rows =
        rows_for(data, split, op, Algo::ring, Proto::simple, simulator, floors, fixed_latency);
    if (rows.empty()) break;
    const NcclConfigFit f = fit_config(rows, Algo::ring, Proto::simple, params.ring_fill_GBps);
    if (f.bus_GBps > 0)
      params.nvlink_per_link_GBps = nvlink_figure_for(f.bus_GBps, graph, largest_training, params);
  }
  const Shapes shapes = shapes_for(graph, counts, params);
  const coll::CommShape& reference = shapes.by_ranks.at(largest_training);
  out.channels_ring = reference.ring.n_channels;
  out.channel_GBps = reference.ring.bw_intra_GBps;

  // Tree's LL / LL128 efficiencies are relative to Tree Simple: fit that first.
  const std::pair<Algo, Proto> order[] = {{Algo::ring, Proto::simple}, {Algo::ring, Proto::ll},
                                          {Algo::ring, Proto::ll128},  {Algo::tree, Proto::simple},
                                          {Algo::tree, Proto::ll},     {Algo::tree, Proto::ll128}};
  coll::NcclParams fitted = params;
  Predictor simulator(graph.cluster(), params);
  fitted.source = "calibrated (" + (op.empty() ? std::string("every op") : op) + ")";
  for (const auto& [algo, proto] : order) {
    const auto rows = rows_for(data, split, op, algo, proto, simulator, floors, fixed_latency);
    if (rows.size() < 3) continue;
    const double prior_hop = params.hop_latency_us[coll::index_of(reference.intra)]
                                                  [coll::index_of(algo)][coll::index_of(proto)];
    NcclConfigFit f =
        !fixed_latency && (training_counts == 1 || one_step_count(rows))
            ? fit_config_prior_hop(rows, algo, proto, prior_hop, params.ring_fill_GBps)
            : fit_config(rows, algo, proto, params.ring_fill_GBps);
    if (fixed_latency) {
      f.base_us = params.base_latency_us[coll::index_of(algo)][coll::index_of(proto)];
      f.hop_us = params.hop_latency_us[coll::index_of(reference.intra)][coll::index_of(algo)]
                                      [coll::index_of(proto)];
    }
    out.configs.push_back(f);
    apply_config(f, reference, fitted);
  }
  out.params = fitted;
  return out;
}

bool is_p2p_op(const std::string& op) {
  return op == "alltoall" || op == "sendrecv";
}

}  // namespace cs::cal
