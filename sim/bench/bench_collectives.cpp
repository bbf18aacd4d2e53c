// One 1 GiB all-reduce on 8, 1,024 and 16,384 simulated H100s (DGX H100 servers on a two-level
// fat tree): wall time to plan and simulate it, and the same with the communicator's paths
// already built. Peak memory: run one size at a time under /usr/bin/time -v, or read the
// peak_rss_MB counter (the process's high-water mark so far).
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
void BM_AllReduce1GiB_PlanAndSimulate(benchmark::State& state) {
  const Fixture f(static_cast<int>(state.range(0)));
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

}  // namespace

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
