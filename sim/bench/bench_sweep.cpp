// A sweep of 1,000 DDP points (GPT-2 on 1 to 16 DGX H100 x 10 batches x 5 bucket caps x 2
// optimizers) on 1 and 2 threads: the speedup `clustersim sweep` gets from the cores, the same
// code path as the command (cli/sweep_points, plan/sweep_table's pool), without the output. And
// plan --strategy auto's layout search on one 1,024-GPU candidate (BM_PlanLayoutSearch70B).
#include <benchmark/benchmark.h>

#include <string>

#include "cli/step/plan_predict.hpp"
#include "cli/sweep_points.hpp"
#include "plan/sweep_file.hpp"
#include "plan/sweep_table.hpp"
#include "topology/loader.hpp"
#include "workload/model/model_loader.hpp"

namespace {

const std::string kSweep =
    "command: ddp\n"
    "axes:\n"
    "  topology: " CLUSTERSIM_SOURCE_DIR
    "/topologies/dgx-h100-16node.yaml\n"
    "  nodes: [1, 2, 4, 8, 16]\n"
    "  model: " CLUSTERSIM_SOURCE_DIR
    "/models/gpt2.yaml\n"
    "  batch: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
    "  bucket_cap_mb: [1, 5, 10, 25, 100]\n"
    "  optimizer: [sgd, adamw]\n"
    "  precision: [bf16, fp32]\n";

void BM_SweepDdp1000(benchmark::State& state) {
  const cs::plan::SweepFile sweep = cs::plan::parse_sweep(kSweep, "bench-sweep.yaml");
  std::vector<std::size_t> points(cs::plan::point_count(sweep));
  for (std::size_t i = 0; i < points.size(); ++i) points[i] = i;
  for (auto _ : state) {
    // A fresh runner per iteration: its topology cache starts empty, as a command's does.
    const cs::cli::SweepPoints runner(sweep);
    std::vector<std::vector<std::string>> rows(points.size());
    cs::plan::run_points(
        points, static_cast<int>(state.range(0)), [&](std::size_t i) { rows[i] = runner.run(i); },
        [](std::size_t) {});
    benchmark::DoNotOptimize(rows);
  }
  state.counters["points"] = static_cast<double>(points.size());
}
BENCHMARK(BM_SweepDdp1000)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// `plan --strategy auto` on one candidate: Llama-3.1-70B (80 blocks) on 128 DGX H100 (1,024
// GPUs), a global batch of 1,024 sequences of 4,096 tokens, Megatron's TP: every data-parallel
// layout, then TP 1-8 x PP over the divisors of 80 x micro-batches of 1-8, with and without
// checkpointing. Issue 42 asks a search over 100 layouts under a minute; `layouts` counts those
// predicted.
void BM_PlanLayoutSearch70B(benchmark::State& state) {
  const cs::topo::Cluster cluster = cs::topo::load_cluster(
      std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/dgx-h100-2048node-superpod.yaml", {128});
  const cs::workload::Model model = cs::workload::load_model_file(
      std::string(CLUSTERSIM_SOURCE_DIR) + "/models/llama-3.1-70b.yaml");
  cs::workload::TrainingOptions options = cs::workload::default_options(model);
  options.parallel.megatron = true;
  int layouts = 0;
  std::string best;
  for (auto _ : state) {
    layouts = 0;
    const cs::plan::Candidate c =
        cs::cli::predict_candidate_auto(cluster, 1024, model, options, {}, nullptr, &layouts);
    best = c.strategy;
    benchmark::DoNotOptimize(c.step_s);
  }
  state.counters["layouts"] = layouts;
  state.SetLabel(best);
}
BENCHMARK(BM_PlanLayoutSearch70B)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
