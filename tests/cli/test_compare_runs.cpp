// `clustersim compare` on published training runs (calibrate/published/training.yaml): the FLOP
// formula by hand, the strict reader's refusals, and the command's output against its golden.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/step/published_runs.hpp"
#include "support/cli_run.hpp"

namespace fs = std::filesystem;

namespace {

// A runs file of one set (on the shipped DGX A100 superpod) with `run` as its only run, in a
// fresh folder; returns the file.
fs::path runs_file(const std::string& name, const std::string& run) {
  const fs::path dir =
      fs::temp_directory_path() / ("cs-runs-" + name + "-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "runs.yaml";
  std::ofstream out(file);
  out << "sets:\n"
         "  - name: t\n"
         "    source: s\n"
         "    topology: "
      << CLUSTERSIM_SOURCE_DIR
      << "/topologies/dgx-a100-superpod.yaml\n"
         "    gpus_per_node: 8\n"
         "    seq: 2048\n"
         "    precision: bf16\n"
         "    optimizer: adamw\n"
         "    flops: megatron-sc21\n"
         "    vocab: 51200\n"
         "    runs:\n"
         "      - "
      << run << "\n";
  return file;
}

cs::test::CommandResult compare(const fs::path& file) {
  return cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) + "' compare '" +
                               file.string() + "' 2>&1");
}

}  // namespace

TEST_CASE("Megatron-LM's FLOPs per iteration, Table 1's 1.7B row") {
  // 96 B s l h^2 = 96 x 512 x 2048 x 24 x 2304^2 = 12,824,703,626,379,264; times
  // 1 + s/(6h) + V/(16 l h) = 1 + 2048/13,824 + 51,200/884,736 = 1.2060185 -> 1.54668e16.
  CHECK(cs::cli::megatron_sc21_flops(512, 2048, 24, 2304, 51200) ==
        doctest::Approx(1.54668300679e16).epsilon(1e-9));
}

TEST_CASE("the published runs file: each row's implied time, and its layout") {
  const std::vector<cs::cli::PublishedRunSet> sets = cs::cli::load_published_runs(
      std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/published/training.yaml");
  REQUIRE(sets.size() == 1);
  const cs::cli::PublishedRun& first = sets.front().runs.front();
  CHECK(first.gpus == 32);
  CHECK(first.tp == 1);
  CHECK(first.role == "fit");
  // 1.54668e16 FLOPs / (137 TFLOP/s x 32 GPUs) = 3.528 s.
  const double flops = cs::cli::megatron_sc21_flops(first.global_batch, sets.front().seq,
                                                    first.layers, first.hidden, sets.front().vocab);
  CHECK(flops / (first.tflops_per_gpu * 1e12 * first.gpus) == doctest::Approx(3.528).epsilon(1e-3));
}

TEST_CASE("compare refuses a bad run with file:line:key and exit 2") {
  struct Case {
    const char* name;
    std::string run;
    const char* message;
  };
  // Table 1's 1.7B row, each case with one figure wrong.
  const std::string shape = "params_b: 1.7, hidden: 2304, layers: 24, heads: 24, ";
  const Case cases[] = {
      {"role",
       "{" + shape +
           "tp: 1, pp: 1, gpus: 32, global_batch: 512, micro_batch: 1, tflops_per_gpu: 137, "
           "role: guess}",
       "runs.yaml:12: key 'role': 'guess' is not a role; valid: fit, check"},
      {"layout",
       "{" + shape +
           "tp: 8, pp: 3, gpus: 32, global_batch: 512, micro_batch: 1, tflops_per_gpu: 137, "
           "role: fit}",
       "key 'gpus': TP 8 x PP 3 does not divide 32 GPUs"},
      {"batch",
       "{" + shape +
           "tp: 1, pp: 1, gpus: 32, global_batch: 500, micro_batch: 1, tflops_per_gpu: 137, "
           "role: fit}",
       "key 'global_batch': 500 does not split into micro-batches of 1 over 32 data-parallel "
       "ranks"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const fs::path f = runs_file(c.name, c.run);
    const cs::test::CommandResult r = compare(f);
    CHECK(r.status == 2);
    CHECK(r.output.find(c.message) != std::string::npos);
    fs::remove_all(f.parent_path());
  }
}

TEST_CASE("clustersim compare matches its golden output on the published training runs") {
  const std::string command = "cd '" + std::string(CLUSTERSIM_SOURCE_DIR) + "' && '" +
                              std::string(CLUSTERSIM_BINARY) +
                              "' compare calibrate/published/training.yaml 2>&1";
  const cs::test::CommandResult r = cs::test::run_command(command);
  REQUIRE(r.status == 0);
  CHECK(r.output == cs::test::read_text_file(std::string(CLUSTERSIM_SOURCE_DIR) +
                                             "/tests/golden/coll/compare-training.txt"));
}
