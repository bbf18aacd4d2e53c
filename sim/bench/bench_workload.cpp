// One simulated training step of each shipped model on one H200 (DDP, 25 MiB buckets): wall time
// to plan the step (layer times through the work model, buckets) and to run it kernel by kernel.
// The model file is read once, outside the timing; BM_LoadModel times that read on its own.
// BM_DdpStepGpt2 adds the bucket all-reduces on the collective model, GPT-2 on 8 to 16,384 H100s
// of generated DGX fat trees, and BM_ScaleGpt2 a `scale` of 11 points to 1,024 GPUs;
// BM_FsdpStepLlama70B an FSDP2 (and HSDP) step of Llama-3.1-70B on 1,024 and 16,384 H100s;
// BM_ModelParallelStep310B a TP x PP x DP step of a 310B GPT on 1,024 and 16,384 H100s.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench/bench_support.hpp"
#include "system/ddp_step.hpp"
#include "topology/loader.hpp"
#include "workload/ddp/step_plan.hpp"
#include "workload/ddp/step_sim.hpp"
#include "workload/model/model_loader.hpp"

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
  const workload::TrainingOptions options = workload::default_options(model);
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

// A generated DGX fat tree of `gpus` H100s, and its ranks 0 .. gpus - 1.
topo::Cluster fat_tree_of(int gpus) {
  return topo::load_cluster_from_string(bench::dgx_fat_tree_yaml(std::max(1, gpus / 8)),
                                        "generated");
}
std::vector<int> first_ranks(int gpus) {
  std::vector<int> ranks(static_cast<std::size_t>(gpus));
  for (int r = 0; r < gpus; ++r) ranks[static_cast<std::size_t>(r)] = r;
  return ranks;
}

// The timed loop: the step on the first `gpus` ranks; its time and the peak RSS as counters.
void time_steps(benchmark::State& state, const topo::Cluster& cluster, const workload::Model& model,
                const workload::TrainingOptions& options, int gpus) {
  const std::vector<int> ranks = first_ranks(gpus);
  double step_ms = 0;
  for (auto _ : state) {
    const system::DdpPrediction p = system::predict_ddp(cluster, model, options, ranks, nullptr);
    step_ms = p.result.breakdown.step_us / 1e3;
    benchmark::DoNotOptimize(step_ms);
  }
  state.counters["step_ms"] = step_ms;
  state.counters["peak_rss_MB"] = bench::peak_rss_MB();
}

// One DDP step of GPT-2 (25 MiB buckets) on `GPUs` H100s: the memory check, the plan, every
// bucket's all-reduce on the collective model (flow fidelity) and the step. The topology is
// built outside the timing.
void BM_DdpStepGpt2(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const topo::Cluster cluster = fat_tree_of(gpus);
  const workload::Model model = workload::load_model_file(model_path(1));
  const workload::TrainingOptions options = workload::default_options(model);
  time_steps(state, cluster, model, options, gpus);
}
BENCHMARK(BM_DdpStepGpt2)->Arg(8)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);

// `scale`'s work for 11 points, 1 to 1,024 GPUs, on one 1,024-GPU fat tree.
void BM_ScaleGpt2(benchmark::State& state) {
  const topo::Cluster cluster =
      topo::load_cluster_from_string(bench::dgx_fat_tree_yaml(128), "generated");
  const workload::Model model = workload::load_model_file(model_path(1));
  const workload::TrainingOptions options = workload::default_options(model);
  for (auto _ : state) {
    for (int gpus = 1; gpus <= 1024; gpus *= 2) {
      std::vector<int> ranks(static_cast<std::size_t>(gpus));
      for (int r = 0; r < gpus; ++r) ranks[static_cast<std::size_t>(r)] = r;
      benchmark::DoNotOptimize(system::predict_ddp(cluster, model, options, ranks, nullptr));
    }
  }
}
BENCHMARK(BM_ScaleGpt2)->Unit(benchmark::kMillisecond);

// One FSDP2 step of Llama-3.1-70B (80 blocks, activation checkpointing, batch 1 x 4096) on
// `GPUs` H100s of a generated fat tree: the memory check, the units' all-gathers and
// reduce-scatters on the collective model and the step graph. Second argument 1: HSDP, shards
// of 64 GPUs, the replicas' all-reduces too. Issue 40 asks under 0.2 s at 1,024 GPUs and under
// 2 s at 16,384.
void BM_FsdpStepLlama70B(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const topo::Cluster cluster = fat_tree_of(gpus);
  const workload::Model model =
      workload::load_model_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/models/llama-3.1-70b.yaml");
  workload::TrainingOptions options = workload::default_options(model);
  options.batch = 1;
  options.activation_checkpointing = true;
  options.strategy = state.range(1) != 0 ? workload::Strategy::hsdp : workload::Strategy::fsdp;
  options.fsdp.shard_degree = state.range(1) != 0 ? 64 : 0;
  state.SetLabel(state.range(1) != 0 ? "hsdp" : "fsdp");
  time_steps(state, cluster, model, options, gpus);
}
BENCHMARK(BM_FsdpStepLlama70B)
    ->Args({1024, 0})
    ->Args({16384, 0})
    ->Args({16384, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// One 3D-parallel step on `GPUs` H100s of a generated fat tree: Megatron-LM SC21's 310.1B GPT
// (96 blocks; the largest model file shipped) at TP 8 x PP 16 x DP (GPUs / 128), 16 micro-batches
// of 1 x 2048 per pipeline, 1F1B, activation checkpointing: the TP split, every stage's plan and
// execution with its TP collectives on the collective model, the sends between stages, the
// pipeline's task graph and the DP all-reduce. Issue 42 asks under 10 s and 4 GB at 16,384 GPUs
// (for a 405B model; no 405B file is shipped).
void BM_ModelParallelStep310B(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const topo::Cluster cluster = fat_tree_of(gpus);
  const workload::Model model = workload::load_model_file(std::string(CLUSTERSIM_SOURCE_DIR) +
                                                          "/models/megatron-gpt-310.1b.yaml");
  workload::TrainingOptions options = workload::default_options(model);
  options.batch = 1;
  options.grad_accum = 16;
  options.activation_checkpointing = true;
  options.parallel.tp = 8;
  options.parallel.pp = 16;
  options.parallel.megatron = true;
  time_steps(state, cluster, model, options, gpus);
}
BENCHMARK(BM_ModelParallelStep310B)
    ->Arg(1024)
    ->Arg(16384)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
