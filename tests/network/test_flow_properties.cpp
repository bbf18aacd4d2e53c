// Randomized properties of FlowNetwork over time, on small random topologies and flow sets with
// fixed seeds: after every re-solve no channel is over capacity and every active flow is
// bottlenecked (max-min optimal); every flow completes, no sooner than it could alone; every byte
// sent is carried; the same input gives the same output bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cluster_builder.hpp"
#include "core/event_queue.hpp"
#include "max_min_check.hpp"
#include "network/flow_network.hpp"
#include "network/transfer_time.hpp"
#include "topology/graph.hpp"

namespace cs::net {
namespace {

struct Timed {
  TimePs start;
  FlowSpec spec;
};

struct Outcome {
  std::map<int, TimePs> done;
  std::vector<double> channel_bytes;
  std::uint64_t rate_updates = 0;
  bool operator==(const Outcome&) const = default;
};

// Runs the flows, checking max-min fairness after every re-solve.
Outcome run_checked(const std::vector<double>& capacity, const std::vector<Timed>& flows) {
  EventQueue queue;
  FlowNetwork network(queue, capacity);
  network.set_rates_observer([&] {
    std::vector<MaxMinSharing::FlowIndex> indices;
    std::vector<double> caps;
    for (const auto& flow : network.active_flows()) {
      REQUIRE(flow.remaining_bytes >= 0);
      indices.push_back(flow.index);
      caps.push_back(flow.max_rate_Bps);
    }
    test::check_max_min(network.sharing(), indices, caps);
  });
  Outcome outcome;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    queue.schedule(flows[i].start, [&, i] {
      network.start(flows[i].spec,
                    [&outcome, i](TimePs at) { outcome.done[static_cast<int>(i)] = at; });
    });
  }
  queue.run();
  for (int c = 0; c < network.channel_count(); ++c) {
    outcome.channel_bytes.push_back(network.channel_stats(c).bytes);
  }
  outcome.rate_updates = network.rate_updates();
  return outcome;
}

void check_outcome(const std::vector<double>& capacity, const std::vector<Timed>& flows,
                   const Outcome& outcome) {
  REQUIRE(outcome.done.size() == flows.size());  // no flow lost
  std::vector<double> expected_bytes(capacity.size(), 0.0);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const FlowSpec& spec = flows[i].spec;
    const auto uses = count_channel_uses(spec.channels);
    // Never faster than alone (1 ps of slack for rounding each rate change).
    const TimePs alone =
        transfer_time_ps(spec.bytes, solo_rate_Bps(capacity, uses, spec.max_rate_Bps));
    REQUIRE(outcome.done.at(static_cast<int>(i)) >= flows[i].start + spec.latency + alone - 1);
    for (const ChannelUse& use : uses) {
      expected_bytes[static_cast<std::size_t>(use.channel)] += use.multiplicity * spec.bytes;
    }
  }
  for (std::size_t c = 0; c < capacity.size(); ++c) {
    // Every flow credits what it moved to its channels; the sums differ only by float rounding.
    REQUIRE(outcome.channel_bytes[c] == doctest::Approx(expected_bytes[c]).epsilon(1e-12));
  }
}

double random_bytes(std::mt19937& rng) {  // log-uniform over 1 KB .. 1 GB
  return std::round(std::pow(10.0, 3.0 + 6.0 * (rng() % 10'000) / 10'000.0));
}

TEST_CASE("random channel sets with repeated channels and caps") {
  for (std::uint32_t seed = 1; seed <= 25; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    std::vector<double> capacity;
    const int channels = 2 + static_cast<int>(rng() % 8);
    for (int c = 0; c < channels; ++c) capacity.push_back(1e9 * (1 + rng() % 100));
    std::vector<Timed> flows;
    const int count = 5 + static_cast<int>(rng() % 30);
    for (int f = 0; f < count; ++f) {
      Timed timed;
      timed.start = static_cast<TimePs>(rng() % (10 * kPsPerMs));
      const int length = 1 + static_cast<int>(rng() % 4);
      for (int h = 0; h < length; ++h) {
        timed.spec.channels.push_back(static_cast<topo::ChannelId>(rng() % channels));
      }
      timed.spec.bytes = rng() % 10 == 0 ? 0 : random_bytes(rng);
      timed.spec.latency = static_cast<TimePs>(rng() % (5 * kPsPerUs));
      if (rng() % 4 == 0) timed.spec.max_rate_Bps = 1e9 * (1 + rng() % 50);
      flows.push_back(std::move(timed));
    }
    const Outcome first = run_checked(capacity, flows);
    check_outcome(capacity, flows, first);
    CHECK(run_checked(capacity, flows) == first);  // bit for bit
  }
}

TEST_CASE("random small topologies with routed flows") {
  for (std::uint32_t seed = 100; seed < 120; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    // A random tree of 2..5 fabric switches plus a few extra switch-switch links (cycles give
    // routes a choice), and 3..8 GPUs, each in its own server, on a random switch.
    test::ClusterBuilder b;
    const int switches = 2 + static_cast<int>(rng() % 4);
    for (int s = 0; s < switches; ++s) {
      b.node("s" + std::to_string(s), topo::NodeKind::network_switch, -1);
      if (s > 0) {
        b.link(static_cast<int>(rng() % static_cast<unsigned>(s)), s, 1e9 * (5 + rng() % 95),
               static_cast<TimePs>(rng() % 2000) * kPsPerNs);
      }
    }
    for (int extra = static_cast<int>(rng() % 3); extra > 0; --extra) {
      const int x = static_cast<int>(rng() % switches);
      const int y = static_cast<int>(rng() % switches);
      if (x != y) b.link(x, y, 1e9 * (5 + rng() % 95), kPsPerUs);
    }
    const int gpus = 3 + static_cast<int>(rng() % 6);
    std::vector<int> gpu_nodes;
    for (int g = 0; g < gpus; ++g) {
      gpu_nodes.push_back(b.gpu("g" + std::to_string(g), g));
      b.link(gpu_nodes.back(), static_cast<int>(rng() % switches), 1e9 * (10 + rng() % 90),
             static_cast<TimePs>(rng() % 1000) * kPsPerNs, topo::LinkKind::infiniband,
             0.5 + (rng() % 50) / 100.0);
    }
    const topo::ClusterGraph graph(b.cluster);
    const std::vector<double> capacity = graph.capacities_Bps();
    std::vector<Timed> flows;
    const int count = 5 + static_cast<int>(rng() % 40);
    for (int f = 0; f < count; ++f) {
      const int src = gpu_nodes[rng() % gpu_nodes.size()];
      const int dst = gpu_nodes[rng() % gpu_nodes.size()];
      const topo::Route route = graph.route(src, dst);
      Timed timed;
      timed.start = static_cast<TimePs>(rng() % 3) * kPsPerMs;  // many start together
      timed.spec.channels = route.channels;
      timed.spec.latency = route.latency;
      timed.spec.bytes = random_bytes(rng);
      if (src == dst) timed.spec.max_rate_Bps = 1e12;  // a local copy: no channel, a cap
      flows.push_back(std::move(timed));
    }
    const Outcome first = run_checked(capacity, flows);
    check_outcome(capacity, flows, first);
    CHECK(run_checked(capacity, flows) == first);
    // Flows starting at the same instant share one re-solve: at most one per distinct start
    // time and one per distinct drain time, never one per flow start.
    CHECK(first.rate_updates <= 3 + flows.size());
  }
}

}  // namespace
}  // namespace cs::net
