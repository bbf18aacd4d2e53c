// Speed of the engine and the network model: events per second of the bare event queue, the
// max-min solver (one-shot solves, and a ring collective's few long flows), and FlowNetwork
// re-solves with 1k, 10k and 100k concurrent flows on the 1,024-GPU fat tree
// (topologies/dgx-h100-128node-fattree.yaml).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "core/event_queue.hpp"
#include "network/flow_network.hpp"
#include "network/maxmin/maxmin.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"

namespace {

using cs::EventQueue;
using cs::TimePs;

// Hold model: a queue of `range(0)` pending events; each event schedules one successor at a
// random later time, so every run event costs one pop and one push at a steady queue size.
void BM_EventQueueHold(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  EventQueue queue;
  std::mt19937_64 rng(1);
  std::vector<TimePs> delays(4096);
  for (auto& d : delays) d = static_cast<TimePs>(rng() % 1'000'000);
  std::size_t next = 0;
  std::uint64_t fired = 0;
  struct Reschedule {
    EventQueue* queue;
    std::vector<TimePs>* delays;
    std::size_t* next;
    void operator()() const {
      *next = (*next + 1) & 4095;
      queue->schedule_in((*delays)[*next], *this);
    }
  };
  for (std::size_t i = 0; i < pending; ++i) {
    queue.schedule(delays[i & 4095], Reschedule{&queue, &delays, &next});
  }
  for (auto _ : state) {
    const std::uint64_t before = queue.events_run();
    queue.run_until(queue.now() + 1'000'000);  // about `pending` events per iteration
    fired += queue.events_run() - before;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(fired));
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(fired), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EventQueueHold)->Arg(1'000)->Arg(10'000)->Arg(100'000);

// Schedule N events at random times, then run them all.
void BM_EventQueueScheduleRun(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::mt19937_64 rng(2);
  std::vector<TimePs> times(n);
  for (auto& t : times) t = static_cast<TimePs>(rng() % 1'000'000'000);
  std::uint64_t sum = 0;
  for (auto _ : state) {
    EventQueue queue;
    for (TimePs t : times) queue.schedule(t, [&sum] { ++sum; });
    queue.run();
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * n), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EventQueueScheduleRun)->Arg(1'000'000);

// The 1,024-GPU fat tree and routes between random GPU pairs on different servers.
struct FatTree {
  cs::topo::Cluster cluster;
  std::unique_ptr<cs::topo::ClusterGraph> graph;
  std::vector<std::vector<cs::topo::ChannelId>> routes;

  static FatTree& get(std::size_t route_count) {
    static FatTree tree = [] {
      FatTree t;
      t.cluster = cs::topo::load_cluster(std::string(CLUSTERSIM_SOURCE_DIR) +
                                         "/topologies/dgx-h100-128node-fattree.yaml");
      t.graph = std::make_unique<cs::topo::ClusterGraph>(t.cluster);
      return t;
    }();
    std::mt19937 rng(static_cast<std::uint32_t>(tree.routes.size()) + 7);
    const auto& ranks = tree.cluster.ranks;
    while (tree.routes.size() < route_count) {
      const int src = ranks[rng() % ranks.size()];
      const int dst = ranks[rng() % ranks.size()];
      if (tree.cluster.nodes[static_cast<std::size_t>(src)].server ==
          tree.cluster.nodes[static_cast<std::size_t>(dst)].server) {
        continue;
      }
      tree.routes.push_back(tree.graph->route(src, dst).channels);
    }
    return tree;
  }
};

// One-shot max-min solve of N concurrent inter-server flows.
void BM_MaxMinSolve(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  FatTree& tree = FatTree::get(n);
  const std::vector<double> capacity = tree.graph->capacities_Bps();
  const std::vector<std::vector<cs::topo::ChannelId>> flows(tree.routes.begin(),
                                                            tree.routes.begin() + n);
  for (auto _ : state) {
    benchmark::DoNotOptimize(cs::net::max_min_rates(capacity, flows));
  }
  state.counters["flows"] = static_cast<double>(n);
}
BENCHMARK(BM_MaxMinSolve)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

// The solver alone under the change BM_FlowNetworkChange makes: N flows in flight, then per
// iteration one flow between a random pair added (update) and removed again (update). No bytes,
// drain times or channel accounts: the rate update's own cost, two updates per iteration.
// `narrow_search_limit` as MaxMinSharing takes it, for the restart alone (no sweep), or none for
// the solver's defaults (the sweep, for one change).
void run_change(benchmark::State& state, std::optional<std::size_t> narrow_search_limit) {
  const auto n = static_cast<std::size_t>(state.range(0));
  FatTree& tree = FatTree::get(n + 1024);
  const std::vector<double> capacity = tree.graph->capacities_Bps();
  cs::net::MaxMinSharing sharing(capacity);
  for (std::size_t i = 0; i < n; ++i) sharing.add(tree.routes[i]);
  sharing.update();
  if (narrow_search_limit) {
    sharing.set_narrow_search_limit(*narrow_search_limit);
    sharing.set_sweep_limit(0);
  }
  std::size_t next = n;
  std::uint64_t resolved = 0;
  for (auto _ : state) {
    const auto probe = sharing.add(tree.routes[next]);
    resolved += sharing.update().size();
    sharing.remove(probe);
    resolved += sharing.update().size();
    next = next + 1 < tree.routes.size() ? next + 1 : n;
  }
  state.counters["flows_per_update"] =
      static_cast<double>(resolved) / (2.0 * static_cast<double>(state.iterations()));
  state.counters["followers"] = sharing.follower_count();
}
void BM_MaxMinChange(benchmark::State& state) {
  run_change(state, std::nullopt);
}
BENCHMARK(BM_MaxMinChange)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMicrosecond);
// The restart with the narrow search alone, however many flows it gathers: what it costs per
// re-solved flow against the plain search.
void BM_MaxMinChangeNarrow(benchmark::State& state) {
  run_change(state, std::numeric_limits<std::size_t>::max());
}
BENCHMARK(BM_MaxMinChangeNarrow)->Arg(10'000)->Unit(benchmark::kMicrosecond);
// The restart with the plain search alone: what the sweep saves BM_MaxMinChange/10000.
void BM_MaxMinChangePlain(benchmark::State& state) {
  run_change(state, 0);
}
BENCHMARK(BM_MaxMinChangePlain)->Arg(10'000)->Unit(benchmark::kMicrosecond);

// The shape of a ring collective: `range(0)` rings, each one flow over all 1,024 GPUs of the fat
// tree (servers in order, the GPUs of each server rotated by the ring's number, so rings leave
// their servers through different NICs), all started together and all drained together. Each
// iteration builds the sharing afresh, as a simulated collective does: add, solve, remove, solve.
void BM_MaxMinRings(benchmark::State& state) {
  const auto ring_count = static_cast<std::size_t>(state.range(0));
  FatTree& tree = FatTree::get(0);
  const std::vector<int>& ranks = tree.cluster.ranks;  // server by server, 8 GPUs each
  const std::size_t per_server = 8;
  std::vector<std::vector<cs::topo::ChannelId>> rings(ring_count);
  for (std::size_t r = 0; r < ring_count; ++r) {
    std::vector<int> order;
    for (std::size_t first = 0; first < ranks.size(); first += per_server) {
      for (std::size_t g = 0; g < per_server; ++g) {
        order.push_back(ranks[first + (g + r) % per_server]);
      }
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
      const auto route = tree.graph->route(order[i], order[(i + 1) % order.size()]).channels;
      rings[r].insert(rings[r].end(), route.begin(), route.end());
    }
  }
  const std::vector<double> capacity = tree.graph->capacities_Bps();
  std::size_t uses = 0;
  for (auto _ : state) {
    cs::net::MaxMinSharing sharing(capacity);
    std::vector<cs::net::MaxMinSharing::FlowIndex> flows;
    flows.reserve(rings.size());
    for (const auto& ring : rings) flows.push_back(sharing.add(ring));
    sharing.update();
    benchmark::DoNotOptimize(sharing.rate_Bps(flows.front()));
    uses = 0;
    for (auto flow : flows) uses += sharing.uses(flow).size();
    for (auto flow : flows) sharing.remove(flow);
    sharing.update();
  }
  state.counters["channel_uses"] = static_cast<double>(uses);
}
BENCHMARK(BM_MaxMinRings)->Arg(32)->Unit(benchmark::kMillisecond);

// N long flows in flight; each iteration starts one short flow between a random pair, which joins
// the component of (nearly) all N, and runs until it has drained: two re-solves per iteration
// (its start, its drain), each over the flows the sweep finds moving (or, where update() takes
// the restart, those at or above the restart level; flows_per_update counts them), with every
// changed flow's remaining bytes advanced and its drain time moved.
void BM_FlowNetworkChange(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  FatTree& tree = FatTree::get(n + 1024);
  EventQueue queue;
  cs::net::FlowNetwork network(queue, *tree.graph);
  for (std::size_t i = 0; i < n; ++i) {
    cs::net::FlowSpec spec;
    spec.channels = tree.routes[i];
    spec.bytes = 1e15;  // hours at any share: never drains during the benchmark
    network.start(std::move(spec), nullptr);
  }
  queue.run_until(0);
  const std::uint64_t updates_before = network.rate_updates();
  const std::uint64_t resolved_before = network.flows_resolved();
  const std::uint64_t changes_before = network.rate_changes();
  std::size_t next = n;
  for (auto _ : state) {
    cs::net::FlowSpec probe;
    probe.channels = tree.routes[next];
    probe.bytes = 1e3;
    next = next + 1 < tree.routes.size() ? next + 1 : n;
    network.start(std::move(probe), nullptr);
    queue.run_until(queue.now() + cs::kPsPerMs);
  }
  const auto updates = static_cast<double>(network.rate_updates() - updates_before);
  state.counters["flows_per_update"] =
      static_cast<double>(network.flows_resolved() - resolved_before) / updates;
  state.counters["rate_changes_per_update"] =
      static_cast<double>(network.rate_changes() - changes_before) / updates;
  state.counters["updates_per_iteration"] = updates / static_cast<double>(state.iterations());
}
BENCHMARK(BM_FlowNetworkChange)
    ->Arg(1'000)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
