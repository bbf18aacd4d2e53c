// One 1 GiB all-reduce on 8, 1,024 and 16,384 simulated H100s (DGX H100 servers on a two-level
// fat tree): wall time to plan and simulate it, and the same with the communicator's paths
// already built. Peak memory: run one size at a time under /usr/bin/time -v, or read the
// peak_rss_MB counter (the process's high-water mark so far).
#include <benchmark/benchmark.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "collectives/communicator.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"

namespace {

using namespace cs;

// The DGX H100 server of topologies/dgx-h100.yaml in the loader's format, `servers` of them on
// a fat tree. 2,048 servers exceed a two-level tree of 64-port switches, so the largest size uses
// 256-port leaves (two levels are all the generator builds; a real 16k-GPU fabric has three).
std::string dgx_fat_tree_yaml(int servers) {
  std::ostringstream y;
  y << "name: dgx-h100-" << servers << "node-fattree\n"
    << "gpu_models:\n"
    << "  H100-SXM5-80GB: {bf16: 989TFLOPS, fp16: 989TFLOPS, fp32: 67TFLOPS, memory: 80GB, "
       "memory_bandwidth: 3.35TB/s}\n"
    << "servers:\n"
    << "  dgx-h100:\n"
    << "    nodes:\n"
    << "      - {name: gpu, kind: gpu, model: H100-SXM5-80GB, count: 8}\n"
    << "      - {name: nvswitch, kind: nvswitch}\n"
    << "      - {name: cpu, kind: cpu, count: 2, memory_bandwidth: 307.2GB/s}\n"
    << "      - {name: pcie, kind: pcie_switch, count: 4}\n"
    << "      - {name: nic, kind: nic, count: 8}\n"
    << "    links:\n"
    << "      - {from: \"gpu[0-7]\", to: nvswitch, type: nvlink, generation: 4, count: 18}\n"
    << "      - {from: \"gpu[0-7]\", to: \"pcie[0,0,1,1,2,2,3,3]\", type: pcie, generation: 5, "
       "width: 16}\n"
    << "      - {from: \"nic[0-7]\", to: \"pcie[0,0,1,1,2,2,3,3]\", type: pcie, generation: 5, "
       "width: 16}\n"
    << "      - {from: \"pcie[0-3]\", to: \"cpu[0,0,1,1]\", type: pcie, generation: 5, width: 16}\n"
    << "      - {from: cpu0, to: cpu1, type: socket, bandwidth: 128GB/s}\n"
    << "cluster:\n"
    << "  - {server: dgx-h100, count: " << servers << ", name: node}\n";
  if (servers > 1) {
    y << "fabric:\n"
      << "  kind: fat_tree\n"
      << "  leaf_ports: " << (servers * 8 > 64 * 32 ? 256 : 64) << "\n"
      << "  oversubscription: 1\n"
      << "  link: {type: infiniband, rate: NDR}\n";
  }
  return y.str();
}

double peak_rss_MB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

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
