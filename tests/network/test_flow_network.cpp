// FlowNetwork and AnalyticalNetwork on clusters written in code: completion times derived by hand,
// agreement of the two fidelities where nothing is shared, and channel accounting.
#include <doctest/doctest.h>

#include <map>
#include <vector>

#include "cluster_builder.hpp"
#include "core/event_queue.hpp"
#include "network/analytical_network.hpp"
#include "network/flow_network.hpp"
#include "topology/graph.hpp"

namespace cs::net {
namespace {

using test::ClusterBuilder;
using topo::NodeKind;

constexpr double kGBps = 1e9;  // decimal, as link datasheets count

// Starts `spec` at `at` on `model` and records its completion time under `key`.
void start_at(EventQueue& queue, NetworkModel& model, TimePs at, FlowSpec spec,
              std::map<int, TimePs>& done, int key) {
  queue.schedule(at, [&model, &done, key, spec = std::move(spec)]() mutable {
    model.start(std::move(spec), [&done, key](TimePs finished) { done[key] = finished; });
  });
}

FlowSpec along(const topo::ClusterGraph& graph, int src, int dst, double bytes) {
  const topo::Route route = graph.route(src, dst);
  FlowSpec spec;
  spec.channels = route.channels;
  spec.latency = route.latency;
  spec.bytes = bytes;
  return spec;
}

// Three GPUs g0, g1, g2 around one switch, each linked to it at its own bandwidth (GB/s) with
// 1 us, and a FlowNetwork on them that records completions by key.
struct Star {
  static constexpr int g0 = 1, g1 = 2, g2 = 3;  // the switch is node 0
  topo::Cluster cluster;
  topo::ClusterGraph graph;
  EventQueue queue;
  FlowNetwork network;
  std::map<int, TimePs> done;

  Star(double g0_GBps, double g1_GBps, double g2_GBps)
      : cluster(build(g0_GBps, g1_GBps, g2_GBps)), graph(cluster), network(queue, graph) {}
  void start(TimePs at, int src, int dst, double bytes, int key) {
    start_at(queue, network, at, along(graph, src, dst, bytes), done, key);
  }

 private:
  static topo::Cluster build(double g0_GBps, double g1_GBps, double g2_GBps) {
    ClusterBuilder b;
    const int sw = b.node("sw", NodeKind::nvswitch);
    REQUIRE(std::vector<int>{b.gpu("g0"), b.gpu("g1"), b.gpu("g2")} ==
            std::vector<int>{g0, g1, g2});
    b.link(g0, sw, g0_GBps * kGBps, kPsPerUs);
    b.link(g1, sw, g1_GBps * kGBps, kPsPerUs);
    b.link(g2, sw, g2_GBps * kGBps, kPsPerUs);
    return b.cluster;
  }
};

TEST_CASE("one flow on one link: latency + bytes / (bandwidth x efficiency)") {
  ClusterBuilder b;
  const int g0 = b.gpu("g0");
  const int g1 = b.gpu("g1");
  b.link(g0, g1, 100 * kGBps, 2 * kPsPerUs);
  SUBCASE("full efficiency") {
    const topo::ClusterGraph graph(b.cluster);
    EventQueue queue;
    FlowNetwork network(queue, graph);
    std::map<int, TimePs> done;
    start_at(queue, network, 0, along(graph, g0, g1, 1e9), done, 0);
    queue.run();
    // 1 GB / 100 GB/s = 10 ms, plus 2 us of latency.
    CHECK(done.at(0) == 10 * kPsPerMs + 2 * kPsPerUs);
  }
  SUBCASE("80% efficiency") {
    b.cluster.links[0].efficiency = 0.8;
    const topo::ClusterGraph graph(b.cluster);
    EventQueue queue;
    FlowNetwork network(queue, graph);
    std::map<int, TimePs> done;
    start_at(queue, network, 0, along(graph, g0, g1, 1e9), done, 0);
    queue.run();
    // 1 GB / (100 x 0.8 = 80 GB/s) = 12.5 ms, plus 2 us.
    CHECK(done.at(0) == 12'500 * kPsPerUs + 2 * kPsPerUs);
  }
}

TEST_CASE("two flows sharing a bottleneck each get half") {
  // g0 and g1 both send 1 GB to g2 through one switch; every link 100 GB/s, 1 us.
  Star star(100, 100, 100);
  star.start(0, Star::g0, Star::g2, 1e9, 0);
  star.start(0, Star::g1, Star::g2, 1e9, 1);
  star.queue.run();
  // sw -> g2 carries both at 50 GB/s: 1 GB / 50 GB/s = 20 ms, plus 2 hops x 1 us.
  CHECK(star.done.at(0) == 20 * kPsPerMs + 2 * kPsPerUs);
  CHECK(star.done.at(1) == 20 * kPsPerMs + 2 * kPsPerUs);
  // Both started at the same instant: one re-solve for the pair, one when both drain together.
  CHECK(star.network.rate_updates() == 2);
}

TEST_CASE("different bottlenecks, and a finishing flow releasing bandwidth") {
  // Star around one switch, 1 us per link:
  //   A: g0 - sw 100 GB/s,  B: g1 - sw 50 GB/s,  C: g2 - sw 100 GB/s.
  // f0: g0 -> g1 0.25 GB (A up, B down); f1: g2 -> g1 1 GB (C up, B down);
  // f2: g2 -> g0 1.25 GB (C up, A down).
  // Phase 1: B down has share 50/2 = 25, C up 100/2 = 50: B binds first, f0 = f1 = 25 GB/s;
  //   C up keeps 100 - 25 = 75 for f2. f0 drains 0.25 GB / 25 GB/s = 10 ms.
  //   By then f1 moved 0.25 GB (0.75 left), f2 moved 0.75 GB (0.5 left).
  // Phase 2 (from 10 ms): B down 50/1 = 50, C up 100/2 = 50: f1 = f2 = 50 GB/s. f1 gains what f0
  //   released, f2 loses (C up is now shared evenly). f2 drains 0.5 / 50 = 10 ms -> at 20 ms.
  //   f1 has 0.75 - 0.5 = 0.25 GB left at 20 ms.
  // Phase 3: f1 alone, B down 50 GB/s: 0.25 / 50 = 5 ms -> at 25 ms.
  // Every route is 2 hops: + 2 us.
  Star star(100, 50, 100);
  star.start(0, Star::g0, Star::g1, 0.25e9, 0);
  star.start(0, Star::g2, Star::g1, 1e9, 1);
  star.start(0, Star::g2, Star::g0, 1.25e9, 2);
  std::map<FlowId, double> phase1;
  std::map<FlowId, double> phase2;
  star.queue.schedule(5 * kPsPerMs, [&] {
    for (const auto& flow : star.network.active_flows()) phase1[flow.id] = flow.rate_Bps;
  });
  star.queue.schedule(15 * kPsPerMs, [&] {
    for (const auto& flow : star.network.active_flows()) phase2[flow.id] = flow.rate_Bps;
  });
  star.queue.run();
  CHECK(phase1 == std::map<FlowId, double>{{0, 25 * kGBps}, {1, 25 * kGBps}, {2, 75 * kGBps}});
  CHECK(phase2 == std::map<FlowId, double>{{1, 50 * kGBps}, {2, 50 * kGBps}});
  CHECK(star.done.at(0) == 10 * kPsPerMs + 2 * kPsPerUs);
  CHECK(star.done.at(2) == 20 * kPsPerMs + 2 * kPsPerUs);
  CHECK(star.done.at(1) == 25 * kPsPerMs + 2 * kPsPerUs);
}

TEST_CASE("a flow joining later slows the first, which then frees the link") {
  // One 100 GB/s link, no latency. f0: 1 GB at 0; f1: 1 GB at 5 ms.
  // 0-5 ms: f0 alone at 100 GB/s moves 0.5 GB. From 5 ms both at 50: f0's 0.5 GB take 10 ms ->
  // f0 at 15 ms; f1 moved 0.5 GB by then and finishes its other 0.5 GB alone at 100 GB/s in
  // 5 ms -> 20 ms. The link carried 2 GB, busy 0-20 ms, saturated throughout (peak 1).
  ClusterBuilder b;
  const int g0 = b.gpu("g0");
  const int g1 = b.gpu("g1");
  b.link(g0, g1, 100 * kGBps, 0);
  const topo::ClusterGraph graph(b.cluster);
  EventQueue queue;
  FlowNetwork network(queue, graph);
  std::map<int, TimePs> done;
  start_at(queue, network, 0, along(graph, g0, g1, 1e9), done, 0);
  start_at(queue, network, 5 * kPsPerMs, along(graph, g0, g1, 1e9), done, 1);
  queue.run();
  CHECK(done.at(0) == 15 * kPsPerMs);
  CHECK(done.at(1) == 20 * kPsPerMs);
  const ChannelStats used = network.channel_stats(test::forward(0));
  CHECK(used.bytes == doctest::Approx(2e9).epsilon(1e-12));
  CHECK(used.busy_ps == 20 * kPsPerMs);
  CHECK(used.peak_utilization == 1.0);
  const ChannelStats idle = network.channel_stats(test::backward(0));
  CHECK(idle.bytes == 0);
  CHECK(idle.busy_ps == 0);
}

TEST_CASE("latency-dominated and bandwidth-dominated sizes") {
  // One 100 GB/s link with 5 us latency.
  // 1 KB: 1000 B / 100 GB/s = 10 ns, so 5.01 us, 99.8% of it latency.
  // 1 GB: 10 ms + 5 us, 0.05% of it latency.
  ClusterBuilder b;
  const int g0 = b.gpu("g0");
  const int g1 = b.gpu("g1");
  b.link(g0, g1, 100 * kGBps, 5 * kPsPerUs);
  const topo::ClusterGraph graph(b.cluster);
  EventQueue queue;
  FlowNetwork network(queue, graph);
  std::map<int, TimePs> done;
  start_at(queue, network, 0, along(graph, g0, g1, 1e3), done, 0);
  start_at(queue, network, 20 * kPsPerMs, along(graph, g0, g1, 1e9), done, 1);
  queue.run();
  CHECK(done.at(0) == 5 * kPsPerUs + 10 * kPsPerNs);
  CHECK(done.at(1) - 20 * kPsPerMs == 10 * kPsPerMs + 5 * kPsPerUs);
}

TEST_CASE("zero-byte flows finish after their latency, channel-less flows run at their cap") {
  EventQueue queue;
  FlowNetwork network(queue, std::vector<double>{100 * kGBps});
  std::map<int, TimePs> done;
  start_at(queue, network, 0, FlowSpec{{0}, 0, 3 * kPsPerUs}, done, 0);
  // 1 GB capped at 50 GB/s on no channel (a copy inside one device): 20 ms.
  start_at(queue, network, 0, FlowSpec{{}, 1e9, 0, 50 * kGBps}, done, 1);
  // Uncapped and channel-less: infinitely fast, done after its latency.
  start_at(queue, network, 0, FlowSpec{{}, 1e9, 7}, done, 2);
  queue.run();
  CHECK(done.at(0) == 3 * kPsPerUs);
  CHECK(done.at(1) == 20 * kPsPerMs);
  CHECK(done.at(2) == 7);
}

TEST_CASE("a channel listed twice carries the flow twice") {
  // A ring step over two channels of 100 GB/s where the flow crosses channel 0 twice: it runs at
  // 100 / 2 = 50 GB/s; 1 GB takes 20 ms, and channel 0 carries 2 GB.
  EventQueue queue;
  FlowNetwork network(queue, std::vector<double>{100 * kGBps, 100 * kGBps});
  std::map<int, TimePs> done;
  start_at(queue, network, 0, FlowSpec{{0, 1, 0}, 1e9, 0}, done, 0);
  queue.run();
  CHECK(done.at(0) == 20 * kPsPerMs);
  CHECK(network.channel_stats(0).bytes == doctest::Approx(2e9).epsilon(1e-12));
  CHECK(network.channel_stats(1).bytes == doctest::Approx(1e9).epsilon(1e-12));
}

TEST_CASE("flow and analytical fidelities agree exactly where no channel is shared") {
  // A chain g0 - s0 - s1 - g1 plus a spur g2 - s0, links of differing bandwidth, efficiency and
  // latency. Flows in disjoint directions or at disjoint times never share a channel.
  ClusterBuilder b;
  const int s0 = b.node("s0", NodeKind::network_switch, -1);
  const int s1 = b.node("s1", NodeKind::network_switch, -1);
  const int g0 = b.gpu("g0", 0);
  const int g1 = b.gpu("g1", 1);
  const int g2 = b.gpu("g2", 2);
  b.link(g0, s0, 48 * kGBps, 700 * kPsPerNs, topo::LinkKind::infiniband, 0.97);
  b.link(s0, s1, 50 * kGBps, 600 * kPsPerNs, topo::LinkKind::infiniband, 0.9);
  b.link(s1, g1, 25 * kGBps, 650 * kPsPerNs, topo::LinkKind::infiniband, 1.0);
  b.link(g2, s0, 12.3 * kGBps, 333 * kPsPerNs, topo::LinkKind::ethernet, 0.81);
  const topo::ClusterGraph graph(b.cluster);

  auto run = [&](auto& model, EventQueue& queue) {
    std::map<int, TimePs> done;
    start_at(queue, model, 0, along(graph, g0, g1, 3.3e9), done, 0);         // g0 -> g1
    start_at(queue, model, 17, along(graph, g1, g2, 123'456'789), done, 1);  // opposite direction
    FlowSpec capped = along(graph, g2, g0, 7.77e8);
    capped.max_rate_Bps = 9.1 * kGBps;
    start_at(queue, model, 3, capped, done, 2);                             // g2 -> s0 -> g0
    start_at(queue, model, kPsPerS, along(graph, g0, g2, 1), done, 3);      // long after: alone
    start_at(queue, model, kPsPerS, FlowSpec{{}, 5e8, 11, 2e12}, done, 4);  // on no channel
    queue.run();
    return done;
  };
  EventQueue flow_queue;
  FlowNetwork flow(flow_queue, graph);
  EventQueue analytical_queue;
  AnalyticalNetwork analytical(analytical_queue, graph);
  const auto by_flow = run(flow, flow_queue);
  const auto by_formula = run(analytical, analytical_queue);
  REQUIRE(by_flow.size() == 5);
  CHECK(by_flow == by_formula);
  // Spot check one by hand: g0 -> g1 runs at min(46.56, 45, 25) = 25 GB/s:
  // 3.3 GB / 25 GB/s = 132 ms, plus 0.7 + 0.6 + 0.65 = 1.95 us.
  CHECK(by_flow.at(0) == 132 * kPsPerMs + 1950 * kPsPerNs);
}

TEST_CASE("where flows share a channel the analytical fidelity is optimistic") {
  // Two 1 GB flows on one 100 GB/s channel: analytical 10 ms each, flow model 20 ms each.
  EventQueue flow_queue;
  FlowNetwork flow(flow_queue, std::vector<double>{100 * kGBps});
  EventQueue analytical_queue;
  AnalyticalNetwork analytical(analytical_queue, std::vector<double>{100 * kGBps});
  std::map<int, TimePs> by_flow;
  std::map<int, TimePs> by_formula;
  for (int i = 0; i < 2; ++i) {
    start_at(flow_queue, flow, 0, FlowSpec{{0}, 1e9, 0}, by_flow, i);
    start_at(analytical_queue, analytical, 0, FlowSpec{{0}, 1e9, 0}, by_formula, i);
  }
  flow_queue.run();
  analytical_queue.run();
  CHECK(by_flow.at(1) == 20 * kPsPerMs);
  CHECK(by_formula.at(1) == 10 * kPsPerMs);
  // The analytical busy time sums both transfers: 20 ms of busy over a 10 ms run shows the overlap.
  CHECK(analytical.channel_stats(0).busy_ps == 20 * kPsPerMs);
}

}  // namespace
}  // namespace cs::net
