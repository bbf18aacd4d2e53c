// Benchmarks of the topology layer: loading plus graph building for the shipped 1,024-GPU fat tree
// and a generated 16,384-GPU one, route queries per second (random GPU pairs with a fixed seed, and
// ring neighbours), and the whole `clustersim topo` summary, also on the shipped three-level
// 16,384- and 131,072-GPU files (wall time: load, graph, summary with its bisection max flow), and
// how fast a cluster too large to hold is refused (a million servers, counted, never built).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "bench/bench_support.hpp"
#include "core/error.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"
#include "topology/summary.hpp"

namespace {

using cs::topo::Cluster;
using cs::topo::ClusterGraph;

const std::string kTopologies = std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// 2,048 DGX H100 servers on a two-level NDR fat tree, in the shipped file format: the server
// template and GPU model are taken verbatim from topologies/dgx-h100.yaml (everything before its
// `cluster:` section), then the instances and the fabric are appended. Two levels of radix-k
// switches reach at most k * k / 2 NICs, so 16,384 NICs need 256-port (logical) switches: 128
// leaves of 128 down + 128 up ports, and 64 spines that each meet every leaf with 2 ports.
std::string generated_16k_yaml() {
  std::string dgx = read_text(kTopologies + "dgx-h100.yaml");
  const auto cluster_at = dgx.find("\ncluster:");
  if (cluster_at == std::string::npos) return "";
  dgx.resize(cluster_at + 1);
  dgx += "cluster:\n  - {server: dgx-h100, count: 2048, name: node}\n";
  dgx +=
      "fabric: {kind: fat_tree, link: {type: infiniband, rate: NDR}, leaf_ports: 256, "
      "oversubscription: 1}\n";
  return dgx;
}

const std::string& yaml_16k() {
  static const std::string text = generated_16k_yaml();
  return text;
}

// The cluster of a shipped file, or of the generated YAML when `file` is empty; on bad input the
// benchmark is skipped with the loader's message rather than aborting the whole program.
std::optional<Cluster> load_or_skip(benchmark::State& state, const std::string& file) {
  try {
    return file.empty() ? cs::topo::load_cluster_from_string(yaml_16k(), "generated-16k.yaml")
                        : cs::topo::load_cluster(kTopologies + file);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return std::nullopt;
  }
}

constexpr const char* k1024File = "dgx-h100-128node-fattree.yaml";

void BM_LoadAndBuild_1024Gpus(benchmark::State& state) {
  if (!load_or_skip(state, k1024File)) return;
  for (auto _ : state) {
    const Cluster cluster = cs::topo::load_cluster(kTopologies + k1024File);
    const ClusterGraph graph(cluster);
    benchmark::DoNotOptimize(graph.channel_count());
  }
}
BENCHMARK(BM_LoadAndBuild_1024Gpus)->Unit(benchmark::kMillisecond);

void BM_LoadAndBuild_16384Gpus(benchmark::State& state) {
  if (!load_or_skip(state, "")) return;
  for (auto _ : state) {
    const Cluster cluster = cs::topo::load_cluster_from_string(yaml_16k(), "generated-16k.yaml");
    const ClusterGraph graph(cluster);
    benchmark::DoNotOptimize(graph.channel_count());
  }
}
BENCHMARK(BM_LoadAndBuild_16384Gpus)->Unit(benchmark::kMillisecond);

void BM_BuildGraphOnly_16384Gpus(benchmark::State& state) {
  const auto cluster = load_or_skip(state, "");
  if (!cluster) return;
  for (auto _ : state) {
    const ClusterGraph graph(*cluster);
    benchmark::DoNotOptimize(graph.channel_count());
  }
  state.counters["nodes"] = static_cast<double>(cluster->nodes.size());
  state.counters["channels"] = static_cast<double>(2 * cluster->links.size());
}
BENCHMARK(BM_BuildGraphOnly_16384Gpus)->Unit(benchmark::kMillisecond);

// Route queries between random GPU pairs (std::mt19937_64, seed 42); items/s = queries/s.
void route_random_pairs(benchmark::State& state, const Cluster& cluster) {
  const ClusterGraph graph(cluster);
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::size_t> pick(0, cluster.ranks.size() - 1);
  std::int64_t hops = 0;
  for (auto _ : state) {
    const auto route = graph.route(cluster.ranks[pick(rng)], cluster.ranks[pick(rng)]);
    hops += route.hops();
    benchmark::DoNotOptimize(route.latency);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["mean_hops"] = static_cast<double>(hops) /
                                static_cast<double>(std::max<std::int64_t>(1, state.iterations()));
}

void BM_RouteRandomPairs_1024Gpus(benchmark::State& state) {
  if (const auto cluster = load_or_skip(state, k1024File)) route_random_pairs(state, *cluster);
}
BENCHMARK(BM_RouteRandomPairs_1024Gpus);

void BM_RouteRandomPairs_16384Gpus(benchmark::State& state) {
  if (const auto cluster = load_or_skip(state, "")) route_random_pairs(state, *cluster);
}
BENCHMARK(BM_RouteRandomPairs_16384Gpus);

// The routes of one ring over every rank (rank r to r + 1), as a ring collective needs them.
void BM_RouteRing_16384Gpus(benchmark::State& state) {
  const auto cluster = load_or_skip(state, "");
  if (!cluster) return;
  const ClusterGraph graph(*cluster);
  const std::size_t n = cluster->ranks.size();
  for (auto _ : state) {
    for (std::size_t r = 0; r < n; ++r) {
      benchmark::DoNotOptimize(graph.route(cluster->ranks[r], cluster->ranks[(r + 1) % n]).latency);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_RouteRing_16384Gpus)->Unit(benchmark::kMillisecond);

// Everything `clustersim topo` computes for the 1,024-GPU file, bisection max flow included.
void BM_Summary_1024Gpus(benchmark::State& state) {
  const auto cluster = load_or_skip(state, k1024File);
  if (!cluster) return;
  const ClusterGraph graph(*cluster);
  for (auto _ : state) benchmark::DoNotOptimize(cs::topo::summarize(graph).bisection.a_to_b_Bps);
}
BENCHMARK(BM_Summary_1024Gpus)->Unit(benchmark::kMillisecond);

// `clustersim topo` on a shipped three-level file from the start: read, expand, build the graph,
// summarize (bisection included). Random routes on the same graph: cross-pod pairs dominate.
const char* const kThreeLevelFiles[] = {"dgx-h100-2048node-superpod.yaml",
                                        "dgx-h100-16384node-roce.yaml"};

void BM_TopoThreeLevel(benchmark::State& state) {
  const std::string file = kThreeLevelFiles[state.range(0)];
  for (auto _ : state) {
    const auto cluster = load_or_skip(state, file);
    if (!cluster) return;
    const ClusterGraph graph(*cluster);
    benchmark::DoNotOptimize(cs::topo::summarize(graph).bisection.a_to_b_Bps);
    state.counters["gpus"] = static_cast<double>(cluster->ranks.size());
  }
}
BENCHMARK(BM_TopoThreeLevel)->Arg(0)->Arg(1)->Unit(benchmark::kSecond)->UseRealTime();

void BM_RouteRandomPairsThreeLevel(benchmark::State& state) {
  if (const auto cluster = load_or_skip(state, kThreeLevelFiles[state.range(0)])) {
    route_random_pairs(state, *cluster);
  }
}
BENCHMARK(BM_RouteRandomPairsThreeLevel)->Arg(0)->Arg(1);

// Loads `path` at a million servers, which the loader must refuse, each iteration; run alone
// (--benchmark_filter=Refuse) for peak_rss_MB to be the refusal's own.
void refuse_million_servers(benchmark::State& state, const std::string& path,
                            std::uint64_t memory_bytes) {
  for (auto _ : state) {
    try {
      cs::topo::load_cluster(path, {1'000'000, memory_bytes});
      state.SkipWithError("a million servers loaded");
      return;
    } catch (const cs::InputError& e) {
      benchmark::DoNotOptimize(e.what());
    }
  }
  state.counters["peak_rss_MB"] = cs::bench::peak_rss_MB();
}

// `topo --nodes 1000000` / `scale --nodes 1000000` on dgx-h100-2node.yaml until the refusal:
// 250,000 rail leaves are more than one spine layer joins. The fabric is counted from the spec (the
// refusal used to come after building 23 million server nodes: 66 s, 15 GB).
void BM_RefuseMillionServersFabric(benchmark::State& state) {
  refuse_million_servers(state, kTopologies + "dgx-h100-2node.yaml", 0);
}
BENCHMARK(BM_RefuseMillionServersFabric)->Unit(benchmark::kMillisecond)->UseRealTime();

// A million servers on one switch (tests/data/topologies/one-switch.yaml: any count fits it),
// refused by the memory estimate: 2,000,001 nodes and 2,000,000 links, about 1.74 GB, against
// 1 GB given.
void BM_RefuseMillionServersMemory(benchmark::State& state) {
  refuse_million_servers(
      state, std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/data/topologies/one-switch.yaml",
      1'000'000'000);
}
BENCHMARK(BM_RefuseMillionServersMemory)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
