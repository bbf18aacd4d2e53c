// Turning a tuned collective into flows: bytes per edge, rate caps and latencies per algorithm.
#include "collectives/communicator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <utility>

#include "collectives/nccl/p2p_plan.hpp"
#include "collectives/nccl/ring_alignment.hpp"
#include "collectives/nccl/ring_passes.hpp"
#include "core/error.hpp"
#include "network/analytical_network.hpp"
#include "network/copies.hpp"
#include "network/flow_network.hpp"

namespace cs::coll {
namespace {

// One pass of flows started together; the next pass starts when all of them have landed.
using Pass = std::vector<net::FlowSpec>;

struct RunState {
  EventQueue* queue = nullptr;
  net::NetworkModel* network = nullptr;
  std::vector<Pass> passes;
  std::size_t next_pass = 0;
  std::size_t in_flight = 0;
  CollectiveResult result;
  Communicator::Done on_done;
};

void start_next_pass(const std::shared_ptr<RunState>& state) {
  if (state->next_pass == state->passes.size()) {
    state->result.finish = state->queue->now();
    state->on_done(state->result);
    return;
  }
  Pass pass = std::move(state->passes[state->next_pass++]);
  state->in_flight = pass.size();
  state->result.flows += static_cast<int>(pass.size());
  if (pass.empty()) {
    start_next_pass(state);
    return;
  }
  for (net::FlowSpec& spec : pass) {
    state->network->start(std::move(spec), [state](TimePs) {
      if (--state->in_flight == 0) start_next_pass(state);
    });
  }
}

TimePs ps_from_us(double us) {
  return ps_from_seconds(us * 1e-6);
}

}  // namespace

Communicator::Communicator(const topo::ClusterGraph& graph, const std::vector<int>& ranks,
                           NcclParams params)
    : routes_(graph),
      params_(std::move(params)),
      layout_(make_layout(routes_, ranks, params_)),
      builder_(layout_, routes_) {
  nccl_params_ = nccl_priors(comm_arch(graph.cluster(), ranks));
  nccl_shape_ = same_search_figures(nccl_params_, params_)
                    ? layout_.shape
                    : make_layout(routes_, ranks, nccl_params_).shape;
}

TunerChoice Communicator::tune(const CollectiveCall& call) const {
  return choose_timed(nccl_shape_, nccl_params_, layout_.shape, params_, call.op, call.bytes,
                      call.options);
}

int Communicator::channel_period() const {
  if (layout_.groups.size() < 2) return 1;
  // Rings repeat every nics channels; trees every 2 * nics (see PathBuilder::tree).
  int period = 1;
  for (const ServerGroup& g : layout_.groups) {
    const int nics = static_cast<int>(g.nics.size());
    if (nics > 0) period = std::lcm(period, nics);
    if (period > 1024) break;
  }
  return 2 * period;
}

int Communicator::planes() const {
  if (layout_.groups.size() < 2) return 1;
  return std::max(1, routes_.graph().cluster().fabric.planes);
}

const ChannelList& Communicator::path(PathKind kind, int channel, int arg, int plane) {
  int key_channel = 0;  // NVLS: one path for every channel
  if (kind == PathKind::nvls_tree || kind == PathKind::collnet) {
    key_channel = channel;  // a tree and a head (tree x kMaxHeads + head), a head: kept whole
  } else if (kind != PathKind::nvls) {
    // NOLINTNEXTLINE(clang-analyzer-core.DivideZero): channel_period() is 1 or 2 x an lcm >= 1
    key_channel = channel % channel_period();
  }
  const auto key = std::make_tuple(static_cast<int>(kind), key_channel, arg, plane);
  auto it = paths_.find(key);
  if (it != paths_.end()) return it->second;
  builder_.set_plane(plane);
  ChannelList list;
  switch (kind) {
    case PathKind::ring:
      list = builder_.ring(key_channel);
      break;
    case PathKind::chain:
      list = builder_.chain(key_channel, arg);
      break;
    case PathKind::tree:
      list = builder_.tree(key_channel);
      break;
    case PathKind::nvls:
      list = builder_.nvls();
      break;
    case PathKind::nvls_tree:
      list = builder_.nvls_tree(key_channel / kMaxHeads, key_channel % kMaxHeads, arg);
      break;
    case PathKind::shift:
      list = builder_.shift(arg, key_channel);
      break;
    case PathKind::collnet:
      list = builder_.collnet(key_channel, arg);
      break;
  }
  return paths_.emplace(key, std::move(list)).first->second;
}

void Communicator::run(EventQueue& queue, net::NetworkModel& network, const CollectiveCall& call,
                       Done on_done) {
  const int n = layout_.shape.n_ranks;
  if (call.root < 0 || call.root >= n)
    throw InputError("key 'root': rank " + std::to_string(call.root) +
                     " is outside the communicator of " + std::to_string(n) + " ranks");
  if (!(call.bytes >= 0) || !std::isfinite(call.bytes))
    throw InputError("key 'bytes': a collective moves a finite, non-negative number of bytes");

  auto state = std::make_shared<RunState>();
  state->queue = &queue;
  state->network = &network;
  state->on_done = std::move(on_done);
  state->result.start = queue.now();
  state->result.choice = tune(call);
  const TunerChoice& ch = state->result.choice;
  const double S = call.bytes;
  const double nc = ch.n_channels;
  const TimePs latency = ps_from_us(ch.run_latency_us);
  // Per-channel rate cap: a channel runs at its graph channel's share of the tuner's bandwidth;
  // the duplicated channels of the communicator split that share, so all channels together never
  // exceed the tuner's figure, while fewer channels (small messages) mean less bandwidth. An LL
  // broadcast or reduce chain runs at its communicator channel's share however few run: measured
  // on 2-4 H200s (calibrate/data/h200x4-run3..5, forced Ring LL), a lone chain channel moves
  // NCCL's 4 KiB LL passes at ~0.6 us each (~6.8 GB/s, near the LL figure / 24 channels) where
  // the graph share (/ 12) made 16-256 KiB broadcasts 9-19 % fast; lone ring channels run at
  // 9.4-9.6 GB/s (all-gather, all-reduce at 16 KiB), near the graph share.
  const bool ll_chain = ch.estimate.proto == Proto::ll && ch.estimate.algo == Algo::ring &&
                        (call.op == Op::broadcast || call.op == Op::reduce);
  const double sharing = std::max(ch.n_channels, ll_chain ? ch.comm_channels : ch.graph_channels);
  const double per_channel_bus_Bps = ch.estimate.bus_bw_GBps * 1e9 / sharing;
  const double per_channel_alg_Bps = ch.estimate.algo_bw_GBps * 1e9 / sharing;
  const double inf = std::numeric_limits<double>::infinity();

  auto spec = [](ChannelList channels, double bytes, TimePs lat, double cap) {
    return net::FlowSpec{std::move(channels), bytes, lat, cap};
  };
  // A multi-plane fabric spreads every NIC's traffic evenly over its planes (the NIC sprays
  // packets, or software balances its per-plane ports): each flow that crosses servers becomes one
  // flow per plane, each with its share of the bytes and of the rate cap.
  // `make(plane)` builds the flow's channels on one plane (-1: no plane to keep to).
  const int planes = this->planes();
  auto split = [&](Pass& out, auto&& make, double bytes, TimePs lat, double cap) {
    for (int p = 0; p < planes; ++p)
      out.push_back(spec(make(planes > 1 ? p : -1), bytes / planes, lat, cap / planes));
  };
  auto add = [&](Pass& out, PathKind kind, int c, int arg, double bytes, TimePs lat, double cap) {
    auto make = [&](int p) -> const ChannelList& { return path(kind, c, arg, p); };
    split(out, make, bytes, lat, cap);
  };
  auto add_p2p = [&](Pass& out, int distance, int rail, double bytes, double cap) {
    auto make = [&](int p) {
      builder_.set_plane(p);
      return builder_.p2p_shift(distance, rail);
    };
    split(out, make, bytes, latency, cap);
  };

  // CollNet's network part: `heads` equal shares, each through every server's head GPU of that
  // index and its NICs' rails to the reducing switches and back, at an equal part of the rate.
  const double ppn = static_cast<double>(n) / std::max(layout_.shape.n_nodes, 1);
  auto add_collnet = [&](Pass& out, int heads) {
    const int rails = builder_.rails();
    const double shares = static_cast<double>(std::max(heads, 1)) * rails;
    for (int h = 0; h < std::max(heads, 1); ++h) {
      for (int r = 0; r < rails; ++r)
        add(out, PathKind::collnet, h, r, S / shares, latency,
            ch.estimate.algo_bw_GBps * 1e9 / shares);
    }
  };
  if (n > 1) {
    Pass pass;
    // Point-to-point: each (rank, peer) send is striped over the tuner's channels, so it runs at
    // most channels x the per-channel rate; the links share what the sends of all peers carry.
    const double p2p_cap_Bps = ch.estimate.bus_bw_GBps > 0 ? ch.estimate.bus_bw_GBps * 1e9 : inf;
    // Across servers a p2p byte takes 1 / p2p_net_wire_efficiency bytes of the NICs' time
    // (nccl/p2p_plan.hpp); every shift of a multi-server communicator has ranks whose peer is
    // remote.
    const double wire = layout_.shape.n_nodes > 1 ? 1.0 / p2p_net_wire_efficiency : 1.0;
    // Each send is striped over the rails of its GPU's own NICs (PathBuilder::p2p_shift).
    const int rails = builder_.rails();
    if (ch.p2p && call.op == Op::send_recv) {  // nccl-tests: every rank sends S to rank + 1
      for (int r = 0; r < rails; ++r)
        add_p2p(pass, 1, 1 + r, wire * S / rails, wire * p2p_cap_Bps / rails);
      state->passes.push_back(std::move(pass));
    } else if (ch.p2p) {  // all-to-all: every rank sends S / n to every other rank at once
      int server_gpus = 0;
      for (const ServerGroup& g : layout_.groups)
        server_gpus = std::max(server_gpus, static_cast<int>(g.gpus.size()));
      // Beyond kExactAllToAllRanks, runs of cross-server distances share one flow, so that the
      // flows list about kAllToAllSends sends (each a route) in all, and at least 16 runs.
      const int groups =
          std::max(16, static_cast<int>(kAllToAllSends / (static_cast<double>(n) * rails)));
      for (const ShiftGroup& g : alltoall_shifts(n, server_gpus, kExactAllToAllRanks, groups)) {
        for (int r = 0; r < rails; ++r)
          add_p2p(pass, g.distance, g.distance + r, wire * g.weight * S / n / rails,
                  wire * g.weight * p2p_cap_Bps / rails);
      }
      state->passes.push_back(std::move(pass));
    } else {
      switch (ch.estimate.algo) {
        case Algo::ring: {
          const bool pipeline = call.op == Op::broadcast || call.op == Op::reduce;
          // Bytes every ring edge carries: nsteps / n of the buffer (2(n-1)/n for all-reduce,
          // (n-1)/n for all-gather / reduce-scatter); a broadcast pipeline carries all of it.
          const double edge_bytes = pipeline                    ? S
                                    : call.op == Op::all_reduce ? S * 2.0 * (n - 1) / n
                                                                : S * (n - 1.0) / n;
          // Misaligned all-gather / reduce-scatter chunks copy with narrower packs, and each
          // loop's receive-only pass adds to the link's steps.
          const Proto proto = ch.estimate.proto;
          const double cap_Bps =
              per_channel_bus_Bps / (ring_misaligned_factor(call.op, proto, S, n, params_) *
                                     ring_pass_factor(call.op, proto, n, params_));
          for (int c = 0; c < ch.n_channels; ++c) {
            add(pass, pipeline ? PathKind::chain : PathKind::ring, c, pipeline ? call.root : 0,
                edge_bytes / nc, latency, cap_Bps);
          }
          break;
        }
        case Algo::tree:  // every tree edge carries the channel's share up and down
          for (int c = 0; c < ch.n_channels; ++c)
            add(pass, PathKind::tree, c, 0, S / nc, latency, per_channel_alg_Bps);
          break;
        case Algo::nvls:  // every GPU sends its share to the switch and reads the sum back
          for (int c = 0; c < ch.n_channels; ++c)
            pass.push_back(
                spec(path(PathKind::nvls, c, 0, -1), S / nc, latency, per_channel_alg_Bps));
          // Across servers (CollNet): every GPU heads its share through the network's switches.
          if (layout_.shape.n_nodes > 1) add_collnet(pass, layout_.shape.nvls.n_channels);
          break;
        case Algo::collnet_direct:  // reduce-scatter, the heads' shares through the switches,
          // all-gather: a GPU sends and receives 2 (ppn - 1) / ppn of the buffer in its server.
          pass.push_back(
              spec(path(PathKind::nvls, 0, 0, -1), 2.0 * (ppn - 1) / ppn * S, latency, inf));
          add_collnet(pass, layout_.shape.collnet_direct.n_channels);
          break;
        case Algo::collnet_chain:  // a chain up to each channel's head and back down: every GPU
          // sends and receives the buffer once in its server, the heads' NICs carry it.
          pass.push_back(spec(path(PathKind::nvls, 0, 0, -1), S, latency, inf));
          add_collnet(pass, ch.n_channels);
          break;
        case Algo::nvls_tree: {
          // Every channel spreads its bytes over the heads (one per GPU of a server, the NVLS
          // graph's channels) and alternates trees: one flow per (tree, head, rail of the head's
          // NICs), an equal share of the bytes and of the rate each.
          int heads = 1;
          for (const ServerGroup& g : layout_.groups)
            heads = std::max(heads, static_cast<int>(g.gpus.size()));
          heads = std::min(heads, kMaxHeads);
          const double shares = 2.0 * heads * rails;
          for (int t = 0; t < 2; ++t) {
            for (int h = 0; h < heads; ++h) {
              for (int r = 0; r < rails; ++r)
                add(pass, PathKind::nvls_tree, t * kMaxHeads + h, r, S / shares, latency,
                    ch.estimate.algo_bw_GBps * 1e9 / shares);
            }
          }
          break;
        }
        case Algo::pat: {
          // Bruck-style doubling, one pass per step: at step k every rank forwards
          // min(2^k, n - 2^k) blocks of S / n to the rank 2^k away; steps run one after another.
          int steps = 0;
          for (int d = 1; d < n; d *= 2) ++steps;
          const double cap = per_channel_alg_Bps * (n - 1.0) / n;
          for (int d = 1; d < n; d *= 2) {
            Pass step;
            const double blocks = std::min(d, n - d);
            for (int c = 0; c < ch.n_channels; ++c)
              add(step, PathKind::shift, c, d, blocks * S / n / nc, latency / steps, cap);
            state->passes.push_back(std::move(step));
          }
          break;
        }
      }
      if (!pass.empty()) state->passes.push_back(std::move(pass));
    }
  }
  if (n == 1 && S > 0) {
    // One rank: NCCL moves nothing between GPUs, but out of place (nccl-tests' first column) it
    // copies the send buffer into the receive buffer (enqueue.cc, ncclLaunchOneRank: a
    // cudaMemcpyAsync device to device; in place nothing), a copy within the GPU's memory.
    const topo::ClusterGraph& graph = routes_.graph();
    const int gpu = graph.cluster().ranks[static_cast<std::size_t>(layout_.ranks.front())];
    state->passes.push_back(Pass{net::device_copy(graph, gpu, S)});
  }
  if (state->passes.empty()) {  // nothing to move (0 bytes)
    queue.schedule(queue.now(), [state] { start_next_pass(state); });
    return;
  }
  start_next_pass(state);
}

CollectiveResult simulate_alone(Communicator& comm, const CollectiveCall& call, Fidelity fidelity) {
  EventQueue queue;
  std::unique_ptr<net::NetworkModel> network;
  if (fidelity == Fidelity::flow) {
    network = std::make_unique<net::FlowNetwork>(queue, comm.routes().graph());
  } else {
    network = std::make_unique<net::AnalyticalNetwork>(queue, comm.routes().graph());
  }
  CollectiveResult out;
  comm.run(queue, *network, call, [&out](const CollectiveResult& r) { out = r; });
  queue.run();
  return out;
}

void run_collective(EventQueue& queue, net::NetworkModel& network, const topo::ClusterGraph& graph,
                    const std::vector<int>& ranks, const CollectiveCall& call,
                    const NcclParams& params, Communicator::Done on_done) {
  auto comm = std::make_shared<Communicator>(graph, ranks, params);
  comm->run(queue, network, call, std::move(on_done));
}

}  // namespace cs::coll
