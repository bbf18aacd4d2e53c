// The point-to-point fit (alltoall, sendrecv): latency, extra-peer latency, per-channel rate and
// NVLink efficiency of NCCL's p2p path, from the default runs, in the simulator's own regimes.
// The efficiency is what NCCL's p2p kernels get of the NVLink line rate where the link paces
// them; it can differ from the copy engines' peer copy (fit_links.cpp), which sets the
// topology's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "calibration/fit/fit_host_floor.hpp"
#include "calibration/fit/fit_least_squares.hpp"
#include "calibration/fit/fit_nccl.hpp"
#include "collectives/comm_layout.hpp"
#include "collectives/nccl/p2p_plan.hpp"

namespace cs::cal {
namespace {

using coll::Algo;
using coll::Proto;

struct P2pPoint {
  double t_us = 0;
  double extra_peers = 0;  // peers beyond the first
  double channel_kB = 0;   // bytes per peer / rate channels, kB: x 1 / perChannel GB/s -> us
  double ll_kB = 0;        // the same for an LL send (channel_kB 0 then): x 1 / LL perChannel
  double link_kB = 0;      // sends per NVLink port x bytes per peer, kB: times 1 / link GB/s
  double fill_kB = 0;      // a Simple send's last chunk per channel, kB: x 1 / fill GB/s
  double rate_channels = 0;
  int sends = 0;
};

// The misaligned Simple sends' two rates (p2p_plan.hpp: per channel, and one GPU's cap), by
// exhaustive search on a 0.1 GB/s x 1 GB/s grid for the least mean |relative error| with the
// latencies and the fill already fitted (the cap makes the model piecewise, so a linear fit does
// not apply). Ties keep the lowest rates. Returns {0, 0} without points.
std::pair<double, double> fit_unaligned(const std::vector<P2pPoint>& points, double latency_us,
                                        double extra_peer_us, double fill_us_per_kB) {
  std::pair<double, double> best{0.0, 0.0};
  if (points.empty()) return best;
  double best_error = std::numeric_limits<double>::infinity();
  for (int tenths = 5; tenths <= 400; ++tenths) {
    const double channel_GBps = tenths / 10.0;
    for (int gpu_GBps = 10; gpu_GBps <= 500; ++gpu_GBps) {
      double sum = 0;
      for (const P2pPoint& p : points) {
        const double rate =
            std::min(p.rate_channels * channel_GBps, static_cast<double>(gpu_GBps) / p.sends);
        const double peer_kB = p.channel_kB * p.rate_channels;
        const double t = latency_us + p.extra_peers * extra_peer_us + p.fill_kB * fill_us_per_kB +
                         peer_kB / rate;
        sum += std::abs(relative_error(t, p.t_us));
      }
      if (sum < best_error) {
        best_error = sum;
        best = {channel_GBps, static_cast<double>(gpu_GBps)};
      }
    }
  }
  return best;
}

// The GPU's NVLink line rate towards its switch / peers, and the rate the topology's efficiency
// leaves of it, bytes/s (0 without NVLink).
struct NvlinkRate {
  double line_Bps = 0;
  double effective_Bps = 0;
};
NvlinkRate nvlink_rate(const topo::Cluster& c) {
  NvlinkRate rate;
  const int gpu0 = c.ranks.empty() ? -1 : c.ranks.front();
  for (const topo::Link& l : c.links) {
    if (l.kind != topo::LinkKind::nvlink || (l.a != gpu0 && l.b != gpu0)) continue;
    if (l.bandwidth_Bps * l.efficiency > rate.effective_Bps) {
      rate.line_Bps = l.bandwidth_Bps;
      rate.effective_Bps = l.bandwidth_Bps * l.efficiency;
    }
  }
  return rate;
}

// The latencies, when they are not fitted: host-paced data hides the GPUs' latency under the host
// floor at every size (fit_host_floor.hpp), so the priors stand: the measured NVLink send latency
// where the generation has one (Hopper: 6.8 us, from the gated runs calibrate/data/h200x4-run3 and
// -run4), else NCCL's Ring Simple base latency, 8.4 us, without the ring's NVLink hop (a send is
// one hop).
struct FixedLatency {
  bool fixed = false;
  double base_us = 0;
  double extra_peer_us = 0;
};

// Fewer points than this leave LL's rate or the fill at the prior: one or two LL points above a
// host floor fitted LL at 0.05 GB/s per channel.
constexpr int kMinPointsPerTerm = 4;

// Rows of every point: those the channels pace with their channel regressors, the others (the
// NVLink paces them, at its known rate) with their link time as a known part; the flags say which
// points the channels pace. LL's time and the fill are fitted where enough points carry them
// (`fit_ll`, `fit_fill` say so on return), else taken at the prior's rates as known parts.
std::vector<FitRow> channel_bound_rows(const std::vector<P2pPoint>& points, double per_channel_GBps,
                                       double ll_per_channel_ratio, double link_GBps,
                                       const FixedLatency& latency, bool with_fill,
                                       const coll::NcclParams& prior, bool& fit_ll, bool& fit_fill,
                                       std::vector<bool>& channel_bound) {
  channel_bound.clear();
  int ll_points = 0, fill_points = 0;
  for (const P2pPoint& p : points) {
    const bool by_channel =
        (p.channel_kB + p.ll_kB * ll_per_channel_ratio) / per_channel_GBps >= p.link_kB / link_GBps;
    channel_bound.push_back(by_channel);
    ll_points += by_channel && p.ll_kB > 0 ? 1 : 0;
    fill_points += p.fill_kB > 0 ? 1 : 0;
  }
  fit_ll = ll_points >= kMinPointsPerTerm;
  fit_fill = with_fill && fill_points >= kMinPointsPerTerm;
  std::vector<FitRow> rows;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const P2pPoint& p = points[i];
    const bool by_channel = channel_bound[i];
    // A link-paced point's rate term is known (its link time); its latency and fill are fitted
    // with the others'.
    double known = by_channel ? 0.0 : p.link_kB / link_GBps;
    double channel_kB = by_channel ? p.channel_kB : 0.0;
    double ll_kB = by_channel ? p.ll_kB : 0.0;
    double fill_kB = p.fill_kB;
    if (!fit_ll && ll_kB > 0) {
      // LL at the prior's rate, or at the Simple rate's share (p2p_ll_data_fraction).
      if (prior.p2p_ll_per_channel_GBps > 0) {
        known += ll_kB / prior.p2p_ll_per_channel_GBps;
      } else {
        channel_kB += ll_kB * ll_per_channel_ratio;
      }
      ll_kB = 0;
    }
    if (!fit_fill) {
      if (with_fill && prior.p2p_fill_GBps > 0) known += fill_kB / prior.p2p_fill_GBps;
      fill_kB = 0;
    }
    if (latency.fixed) {
      rows.push_back({{0.0, 0.0, channel_kB, fill_kB, ll_kB},
                      p.t_us,
                      1.0,
                      latency.base_us + p.extra_peers * latency.extra_peer_us + known});
    } else {
      rows.push_back({{1.0, p.extra_peers, channel_kB, fill_kB, ll_kB}, p.t_us, 1.0, known});
    }
  }
  return rows;
}

// The channel side fitted with the NVLink at a given rate, and how well the whole model then
// follows every point: mean |relative error| of latency + max(channel time, link time).
struct ChannelFit {
  LinearFit f;
  double per_channel_GBps = 0;
  // An LL kB's time over a Simple kB's on one channel: 1 / p2p_ll_data_fraction until fitted.
  double ll_ratio = 1.0 / coll::p2p_ll_data_fraction;
  double mean_abs_error = 0;
  int link_bound = 0;     // points the link paces
  bool fit_ll = false;    // LL's rate fitted (else the prior's)
  bool fit_fill = false;  // the fill fitted (else the prior's, or none)
};

// `start` gives the per-channel rates the first round's regimes come from; `with_fill` fits the
// fill too (else it stays 0).
ChannelFit fit_channels(const std::vector<P2pPoint>& points, const ChannelFit& start,
                        double link_GBps, double base_prior_us, const FixedLatency& latency,
                        bool with_fill, const coll::NcclParams& prior) {
  // Refit until the set of channel-paced points settles; a flip-flop ends after a fixed number of
  // rounds (the last fit stands).
  ChannelFit out;
  out.per_channel_GBps = start.per_channel_GBps;
  out.ll_ratio = start.ll_ratio;
  out.f.coef = {latency.fixed ? latency.base_us : base_prior_us,
                latency.fixed ? latency.extra_peer_us : 0.0, 0.0, 0.0, 0.0};
  std::vector<bool> regimes;
  std::vector<bool> previous;
  for (int round = 0; round < 16; ++round) {
    const std::vector<FitRow> rows =
        channel_bound_rows(points, out.per_channel_GBps, out.ll_ratio, link_GBps, latency,
                           with_fill, prior, out.fit_ll, out.fit_fill, regimes);
    // Fitted latencies need three points; a fixed one leaves one unknown.
    if ((round > 0 && regimes == previous) || rows.size() < (latency.fixed ? 1u : 3u)) break;
    previous = regimes;
    out.f = fit_relative_robust(rows);
    if (latency.fixed)
      out.f.coef = {latency.base_us, latency.extra_peer_us, out.f.coef[2], out.f.coef[3],
                    out.f.coef[4]};
    if (out.f.coef[2] > 0) out.per_channel_GBps = 1.0 / out.f.coef[2];
    if (out.fit_ll && out.f.coef[2] > 0 && out.f.coef[4] > 0) {
      out.ll_ratio = out.f.coef[4] / out.f.coef[2];
    } else if (!out.fit_ll && prior.p2p_ll_per_channel_GBps > 0) {
      out.ll_ratio = out.per_channel_GBps / prior.p2p_ll_per_channel_GBps;
    }
  }
  // The fill as the model will charge it: fitted, else the prior's (with_fill), else none.
  const double fill_us_per_kB =
      out.fit_fill ? out.f.coef[3]
                   : (with_fill && prior.p2p_fill_GBps > 0 ? 1.0 / prior.p2p_fill_GBps : 0.0);
  double sum = 0;
  for (const P2pPoint& p : points) {
    const double channel_us = (p.channel_kB + p.ll_kB * out.ll_ratio) / out.per_channel_GBps;
    const double link_us = p.link_kB / link_GBps;
    if (link_us > channel_us) ++out.link_bound;
    const double t = out.f.coef[0] + p.extra_peers * out.f.coef[1] + p.fill_kB * fill_us_per_kB +
                     std::max(channel_us, link_us);
    sum += std::abs(relative_error(t, p.t_us));
  }
  out.mean_abs_error = sum / static_cast<double>(points.size());
  return out;
}

}  // namespace

NcclFit fit_nccl_p2p(const Measurements& data, const Split& split, const topo::ClusterGraph& graph,
                     const std::string& op) {
  NcclFit out;
  out.op = op;
  out.params = coll::nccl_priors(coll::arch_from_gpu_name(data.node.gpu_name));
  const coll::NcclParams& prior = out.params;
  const NvlinkRate nvlink = nvlink_rate(graph.cluster());
  if (!(nvlink.effective_Bps > 0)) return out;

  coll::RouteCache routes(graph);
  std::map<int, coll::CommShape> shapes;
  std::vector<P2pPoint> points;
  std::vector<P2pPoint> unaligned;  // misaligned Simple sends, fitted apart
  const coll::Op cop = op == "alltoall" ? coll::Op::all_to_all : coll::Op::send_recv;
  double graph_channel_GBps = 0;
  out.host_floors = fit_host_floors(data, split, op);
  for (const NcclPoint& p : data.nccl) {
    if (p.op != op || !p.is_default() || p.n_ranks < 2) continue;
    if (!device_bound(p, out.host_floors)) continue;
    if (p.n_ranks > static_cast<int>(graph.cluster().ranks.size())) continue;
    if (split.held_out(p.n_ranks, p.bytes, nccl_curve_gap(data, p))) continue;
    auto it = shapes.find(p.n_ranks);
    if (it == shapes.end()) {
      it = shapes
               .emplace(p.n_ranks,
                        coll::make_layout(routes, coll::first_ranks(p.n_ranks), prior).shape)
               .first;
    }
    const coll::TunerChoice ch = coll::choose(it->second, cop, p.bytes, prior, {});
    graph_channel_GBps = it->second.ring.bw_intra_GBps;
    const double peer_bytes = cop == coll::Op::all_to_all ? p.bytes / p.n_ranks : p.bytes;
    const double sends_per_port = cop == coll::Op::all_to_all ? p.n_ranks - 1.0 : 1.0;
    const coll::P2pChannels p2p =
        coll::p2p_channels(ch.comm_channels, p.n_ranks, it->second.n_nodes, prior);
    const int sends = coll::p2p_sends(cop, p.n_ranks);
    const double raw_channels = coll::p2p_rate_channels(ch.n_channels, sends, p2p.comm_channels);
    const double rate_channels = coll::p2p_protocol_channels(raw_channels, ch.estimate.proto);
    const bool ll = ch.estimate.proto == Proto::ll;
    const bool full_packs =
        ch.estimate.proto == Proto::ll || coll::p2p_aligned(cop, p.bytes, p.n_ranks);
    // The fill's regressor: the GPU's last chunks, kB, for Simple sends over NVLink, as time_p2p
    // charges them (p2p_fill_us at 1 GB/s).
    const double fill_kB =
        coll::p2p_fills(it->second.n_nodes, it->second.intra, ch.estimate.proto)
            ? coll::p2p_fill_us(peer_bytes, ch.n_channels, sends, prior.p2p_nvl_chunk_bytes, 1.0)
            : 0.0;
    (full_packs ? points : unaligned)
        .push_back({p.time_us,
                    static_cast<double>(std::max(coll::p2p_peers(cop, p.n_ranks) - 1, 0)),
                    ll ? 0.0 : peer_bytes / rate_channels / 1e3,
                    ll ? peer_bytes / raw_channels / 1e3 : 0.0, sends_per_port * peer_bytes / 1e3,
                    fill_kB, rate_channels, sends});
  }
  if (points.size() < 4 || !(graph_channel_GBps > 0)) return out;

  // The NVLink rate the p2p kernels get is the one whose model follows the points best, searched
  // over 50-100 % of the line rate in 1 % steps (the error is not smooth in it: points change
  // regime), from the top, so a tie keeps the faster link. The topology's own rate (the copy
  // engines' peer copy) is the candidate to beat. The channel side is refitted at each.
  const double base_prior_us =
      prior.p2p_nvlink_latency_us > 0
          ? prior.p2p_nvlink_latency_us
          : prior.base_latency_us[coll::index_of(Algo::ring)][coll::index_of(Proto::simple)];
  double link_GBps = nvlink.effective_Bps / 1e9;
  const FixedLatency latency{!out.host_floors.empty(), base_prior_us,
                             prior.p2p_extra_peer_latency_us};
  // At each link rate: first without the fill (its regressor and the channels' are nearly
  // proportional up to a chunk per channel, so the fill alone could take the channels' part and
  // leave the large points to the link), then with it from the rates that found.
  // The first round takes every point as channel-paced (a start at the graph's speed would leave
  // every Simple point to a link slower than 16 such channels, and the channels unfitted).
  ChannelFit all_channel_paced;
  all_channel_paced.per_channel_GBps = std::numeric_limits<double>::min();
  auto fit_at = [&](double link) {
    const ChannelFit plain =
        fit_channels(points, all_channel_paced, link, base_prior_us, latency, false, prior);
    return fit_channels(points, plain, link, base_prior_us, latency, true, prior);
  };
  ChannelFit best = fit_at(link_GBps);
  for (int percent = 100; percent >= 50; --percent) {
    const double candidate_GBps = nvlink.line_Bps * percent / 100.0 / 1e9;
    const ChannelFit fit = fit_at(candidate_GBps);
    // With fixed latencies a candidate that leaves no point to the channels is a whole model.
    if ((fit.f.points > 0 || latency.fixed) && fit.mean_abs_error < best.mean_abs_error) {
      best = fit;
      link_GBps = candidate_GBps;
    }
  }
  const LinearFit& f = best.f;
  const double per_channel_GBps = best.per_channel_GBps;
  if (f.points == 0 && !latency.fixed) return out;

  out.params.source = "calibrated (" + op + ")";
  out.params.p2p_nvlink_latency_us = f.coef[0];
  out.params.p2p_extra_peer_latency_us = f.coef[1];
  if (f.coef[2] > 0) out.params.p2p_per_channel_GBps = per_channel_GBps;
  // Fitted where enough points carry them (else the priors stand): a fitted fill of 0 is none.
  if (best.fit_fill) out.params.p2p_fill_GBps = f.coef[3] > 0 ? 1.0 / f.coef[3] : 0.0;
  if (best.fit_ll && f.coef[4] > 0) out.params.p2p_ll_per_channel_GBps = 1.0 / f.coef[4];
  if (best.link_bound > 0) out.p2p_nvlink_efficiency = link_GBps * 1e9 / nvlink.line_Bps;
  // Misaligned sends need enough points of their own; without, the priors stand.
  if (unaligned.size() >= 4) {
    const double fill_us_per_kB =
        out.params.p2p_fill_GBps > 0 ? 1.0 / out.params.p2p_fill_GBps : 0.0;
    const auto [channel_GBps, gpu_GBps] =
        fit_unaligned(unaligned, f.coef[0], f.coef[1], fill_us_per_kB);
    out.params.p2p_unaligned_per_channel_GBps = channel_GBps;
    out.params.p2p_unaligned_gpu_GBps = gpu_GBps;
  }
  NcclConfigFit cfg;
  cfg.base_us = f.coef[0];
  cfg.hop_us = f.coef[1];
  cfg.bus_GBps = out.params.p2p_per_channel_GBps;
  cfg.points = f.points;
  cfg.rms_rel_error = f.rms_rel_error;
  cfg.max_rel_error = f.max_rel_error;
  out.configs.push_back(cfg);
  return out;
}

}  // namespace cs::cal
