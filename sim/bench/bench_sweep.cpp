// A sweep of 1,000 DDP points (GPT-2 on 1 to 16 DGX H100 x 10 batches x 5 bucket caps x 2
// optimizers) on 1 and 2 threads: the speedup `clustersim sweep` gets from the cores, the same
// code path as the command (cli/sweep_points, plan/sweep_table's pool), without the output.
#include <benchmark/benchmark.h>

#include <string>

#include "cli/sweep_points.hpp"
#include "plan/sweep_file.hpp"
#include "plan/sweep_table.hpp"

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

}  // namespace

BENCHMARK_MAIN();
