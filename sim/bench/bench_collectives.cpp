// One 1 GiB all-reduce on 8, 1,024 and 16,384 simulated H100s (DGX H100 servers on a two-level
// fat tree): wall time to plan and simulate it, and the same with the communicator's paths
// already built; then on the shipped three-level files of 16,384 and 131,072 GPUs. Peak memory:
// run one at a time (--benchmark_filter) and read the peak_rss_MB counter (the process's
// high-water mark so far, topology included).
#include <benchmark/benchmark.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "bench/bench_support.hpp"
#include "collectives/communicator.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"

namespace {

using namespace cs;
using bench::dgx_fat_tree_yaml;
using bench::peak_rss_MB;

struct Fixture {
  explicit Fixture(int servers)
      : cluster(topo::load_cluster_from_string(dgx_fat_tree_yaml(servers), "generated")),
        graph(cluster) {
    for (int r = 0; r < static_cast<int>(cluster.ranks.size()); ++r) ranks.push_back(r);
  }
  explicit Fixture(const std::string& shipped_file)
      : cluster(
            topo::load_cluster(std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/" + shipped_file)),
        graph(cluster) {
    for (int r = 0; r < static_cast<int>(cluster.ranks.size()); ++r) ranks.push_back(r);
  }
  topo::Cluster cluster;
  topo::ClusterGraph graph;
  std::vector<int> ranks;
};

coll::CollectiveCall allreduce_1GiB() {
  coll::CollectiveCall call;
  call.op = coll::Op::all_reduce;
  call.bytes = kGiB;
  return call;
}

// Communicator built inside the loop: layout, channel search, routes and paths, then the flows.
void plan_and_simulate(benchmark::State& state, const Fixture& f) {
  const coll::NcclParams params = coll::nccl_priors(coll::GpuArch::hopper);
  coll::CollectiveResult r;
  for (auto _ : state) {
    coll::Communicator comm(f.graph, f.ranks, params);
    r = coll::simulate_alone(comm, allreduce_1GiB(), coll::Fidelity::flow);
    benchmark::DoNotOptimize(r);
  }
  state.counters["gpus"] = static_cast<double>(f.ranks.size());
  state.counters["flows"] = r.flows;
  state.counters["sim_time_us"] = r.time_us();
  state.counters["peak_rss_MB"] = peak_rss_MB();
}

void BM_AllReduce1GiB_PlanAndSimulate(benchmark::State& state) {
  plan_and_simulate(state, Fixture(static_cast<int>(state.range(0))));
}

// The same call again on a communicator whose paths are cached (a training loop's steady state).
void BM_AllReduce1GiB_SimulateOnly(benchmark::State& state) {
  const Fixture f(static_cast<int>(state.range(0)));
  coll::Communicator comm(f.graph, f.ranks, coll::nccl_priors(coll::GpuArch::hopper));
  coll::CollectiveResult r = coll::simulate_alone(comm, allreduce_1GiB(), coll::Fidelity::flow);
  for (auto _ : state) {
    r = coll::simulate_alone(comm, allreduce_1GiB(), coll::Fidelity::flow);
    benchmark::DoNotOptimize(r);
  }
  state.counters["gpus"] = static_cast<double>(f.ranks.size());
  state.counters["flows"] = r.flows;
  state.counters["graph_queries"] = static_cast<double>(comm.routes().graph_queries());
  state.counters["peak_rss_MB"] = peak_rss_MB();
}

// The shipped three-level fabrics: 2,048 DGX H100 on InfiniBand (16,384 GPUs) and 16,384 on
// RoCE (131,072 GPUs). Plan and simulate, on a loaded topology (`coll` adds the load:
// bench_topology).
void BM_AllReduce1GiB_ThreeLevel(benchmark::State& state) {
  plan_and_simulate(state, Fixture(state.range(0) == 0 ? "dgx-h100-2048node-superpod.yaml"
                                                       : "dgx-h100-16384node-roce.yaml"));
}

}  // namespace

BENCHMARK(BM_AllReduce1GiB_ThreeLevel)->Arg(0)->Arg(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_AllReduce1GiB_PlanAndSimulate)
    ->Arg(1)
    ->Arg(128)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AllReduce1GiB_SimulateOnly)
    ->Arg(1)
    ->Arg(128)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
