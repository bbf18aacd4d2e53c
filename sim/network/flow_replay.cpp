// Schedules every request on one event queue, runs it to the end, and reads back the statistics.
#include "network/flow_replay.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>

#include "core/event_queue.hpp"
#include "network/analytical_network.hpp"
#include "network/copies.hpp"
#include "network/flow_network.hpp"

namespace cs::net {
namespace {

FlowSpec spec_for(const topo::ClusterGraph& graph, const FlowRequest& request) {
  const auto& nodes = graph.cluster().nodes;
  const bool gpus = nodes[static_cast<std::size_t>(request.src)].kind == topo::NodeKind::gpu &&
                    nodes[static_cast<std::size_t>(request.dst)].kind == topo::NodeKind::gpu;
  // A GPU to itself is a device-local copy; any other node to itself would cross nothing and
  // finish at once.
  if (request.src == request.dst && !gpus) {
    throw InputError(request.loc, "dst",
                     "'" + nodes[static_cast<std::size_t>(request.dst)].name +
                         "' is also the source; only a GPU copies to itself (a device-local "
                         "copy), other nodes need a destination elsewhere");
  }
  try {
    if (gpus) return peer_copy(graph, request.src, request.dst, request.bytes);
    const topo::Route route = graph.route(request.src, request.dst);
    FlowSpec spec;
    spec.channels = route.channels;
    spec.latency = route.latency;
    spec.bytes = request.bytes;
    return spec;
  } catch (const InputError& e) {
    throw InputError(request.loc, "dst", e.what());
  }
}

// After each re-solve, a sample for every channel the update reached whose utilization moved; a
// second update at the same time overwrites that time's sample.
void record_loads(const EventQueue& queue, FlowNetwork& model, ReplayResult& result) {
  const std::size_t none = std::numeric_limits<std::size_t>::max();
  auto last = std::make_shared<std::vector<std::size_t>>(
      static_cast<std::size_t>(model.channel_count()), none);
  model.set_rates_observer([&queue, &model, &result, last] {
    const MaxMinSharing& sharing = model.sharing();
    for (topo::ChannelId c : sharing.updated_channels()) {
      const double utilization = sharing.load_Bps(c) / sharing.capacity_Bps(c);
      std::size_t& at = (*last)[static_cast<std::size_t>(c)];
      if (at != none && result.loads[at].at == queue.now()) {
        result.loads[at].utilization = utilization;
        continue;
      }
      if (at != none ? result.loads[at].utilization == utilization : utilization == 0) continue;
      at = result.loads.size();
      result.loads.push_back(LoadSample{queue.now(), c, utilization});
    }
  });
}

template <typename Model>
ReplayResult run_on(const topo::ClusterGraph& graph, const std::vector<FlowRequest>& requests,
                    bool with_loads) {
  EventQueue queue;
  Model model(queue, graph);
  ReplayResult result;
  if constexpr (std::is_same_v<Model, FlowNetwork>) {
    if (with_loads) record_loads(queue, model, result);
  }
  result.finish.assign(requests.size(), 0);
  result.begin = requests.empty() ? 0 : requests.front().start;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    result.begin = std::min(result.begin, requests[i].start);
    queue.schedule(requests[i].start, [&model, &result, i, spec = spec_for(graph, requests[i])] {
      model.start(spec, [&result, i](TimePs at) { result.finish[i] = at; });
    });
  }
  queue.run();
  result.end = result.begin;
  for (TimePs t : result.finish) result.end = std::max(result.end, t);
  for (int c = 0; c < model.channel_count(); ++c) result.channels.push_back(model.channel_stats(c));
  // By time, then channel: the order the solver lists a re-solve's channels in is its own.
  std::stable_sort(result.loads.begin(), result.loads.end(),
                   [](const LoadSample& x, const LoadSample& y) {
                     return x.at != y.at ? x.at < y.at : x.channel < y.channel;
                   });
  return result;
}

}  // namespace

Fidelity parse_fidelity(std::string_view text) {
  if (text == "flow") return Fidelity::flow;
  if (text == "analytical") return Fidelity::analytical;
  throw InputError(SourceLoc{}, "fidelity",
                   "'" + std::string(text) + "' is not a fidelity; valid: flow, analytical");
}

ReplayResult replay_flows(const topo::ClusterGraph& graph, const std::vector<FlowRequest>& requests,
                          Fidelity fidelity, bool record_loads) {
  return fidelity == Fidelity::flow ? run_on<FlowNetwork>(graph, requests, record_loads)
                                    : run_on<AnalyticalNetwork>(graph, requests, false);
}

}  // namespace cs::net
