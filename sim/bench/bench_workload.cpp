// One simulated training step of each shipped model on one H200 (DDP, 25 MiB buckets): wall time
// to plan the step (layer times through the work model, buckets) and to run it kernel by kernel.
// The model file is read once, outside the timing; BM_LoadModel times that read on its own.
#include <benchmark/benchmark.h>

#include <string>

#include "topology/loader.hpp"
#include "workload/model_loader.hpp"
#include "workload/step_plan.hpp"
#include "workload/step_sim.hpp"

namespace {

using namespace cs;

const char* const kModels[] = {"resnet50",   "gpt2",     "gpt2-medium",
                               "bert-large", "llama-1b", "gpt2-xl"};

std::string model_path(std::int64_t index) {
  return std::string(CLUSTERSIM_SOURCE_DIR) + "/models/" + kModels[index] + ".yaml";
}

void BM_DdpStepOneGpu(benchmark::State& state) {
  const topo::Cluster cluster =
      topo::load_cluster(std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/dgx-h200.yaml");
  const topo::GpuModel& gpu = cluster.gpu_models.front();
  const workload::Model model = workload::load_model_file(model_path(state.range(0)));
  const workload::StepOptions options = workload::default_options(model);
  const workload::GpuCompute compute = workload::gpu_compute_priors(gpu);
  std::size_t kernels = 0;
  for (auto _ : state) {
    const workload::StepPlan plan = workload::plan_step(model, options, gpu, compute, 10.0);
    const workload::StepResult result = workload::simulate_step(plan);
    kernels = result.spans.size();
    benchmark::DoNotOptimize(result.breakdown.step_us);
  }
  state.SetLabel(kModels[state.range(0)]);
  state.counters["spans"] = static_cast<double>(kernels);
}
BENCHMARK(BM_DdpStepOneGpu)->DenseRange(0, 5)->Unit(benchmark::kMicrosecond);

void BM_LoadModel(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(workload::load_model_file(model_path(state.range(0))));
  }
  state.SetLabel(kModels[state.range(0)]);
}
BENCHMARK(BM_LoadModel)->DenseRange(0, 5)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
