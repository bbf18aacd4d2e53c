// clustersim ddp's layout flags: --global-batch (micro-batches derived from it), --dp (checked)
// and the aliases the issue names (--micro-batch, --pp-layers); a pipeline's trace.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_run.hpp"

namespace {

// Llama-3.1-8B as TP 4 x PP 2 on two DGX H100: 16 ranks / 8 = 2 data-parallel ranks.
cs::test::CommandResult ddp(const std::string& flags) {
  const std::string root = CLUSTERSIM_SOURCE_DIR;
  return cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) + "' ddp -t '" + root +
                               "/topologies/dgx-h100-2node.yaml' -m '" + root +
                               "/models/llama-3.1-8b.yaml' --nodes 2 --tp 4 --pp 2 " + flags +
                               " 2>&1");
}

std::string step_line(const std::string& output) {
  const std::size_t at = output.find("\nstep ");
  return at == std::string::npos ? "" : output.substr(at + 1, output.find('\n', at + 1) - at - 1);
}

}  // namespace

TEST_CASE("ddp --global-batch: 16 samples over 2 data-parallel ranks of 1 are 8 micro-batches") {
  const cs::test::CommandResult derived = ddp("--global-batch 16 --micro-batch 1");
  const cs::test::CommandResult given = ddp("--batch 1 --grad-accum 8");
  REQUIRE(derived.status == 0);
  REQUIRE(given.status == 0);
  CHECK(derived.output.find("8 micro-batches, 2 stages") != std::string::npos);
  CHECK(step_line(derived.output) == step_line(given.output));
  CHECK(!step_line(given.output).empty());
}

TEST_CASE("ddp refuses layout flags that do not agree, naming the flag") {
  struct Case {
    const char* flags;
    const char* message;
  };
  const Case cases[] = {
      {"--global-batch 15 --batch 1",
       "flag '--global-batch': 15 does not split into micro-batches of 1 over 2 data-parallel "
       "ranks"},
      {"--dp 3", "flag '--dp': 3 data-parallel ranks, but 16 ranks / (TP 4 x PP 2) = 2"},
      {"--global-batch 16 --grad-accum 2",
       "flag '--global-batch': give it or --grad-accum, not both"},
      {"--pp-layers 20,10 --batch 1", "flag '--pp-blocks'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.flags);
    const cs::test::CommandResult r = ddp(c.flags);
    CHECK(r.status == 2);
    CHECK(r.output.find(c.message) != std::string::npos);
  }
}

TEST_CASE("ddp --trace of a pipeline: every rank's forwards and backwards, then its tail") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("cs-pipeline-trace-" + std::to_string(::getpid()) + ".json"))
                               .string();
  const cs::test::CommandResult r = ddp("--batch 1 --grad-accum 8 --trace " + path);
  REQUIRE(r.status == 0);
  const nlohmann::json trace = nlohmann::json::parse(cs::test::read_text_file(path));
  std::remove(path.c_str());
  int forwards = 0, backwards = 0, tails = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["pid"] != 2) continue;
    const std::string cat = e["cat"];
    forwards += cat == "forward";
    backwards += cat == "backward";
    tails += cat == "tail";
    CHECK(e["dur"].get<double>() > 0);
  }
  // 2 pipeline ranks x 8 micro-batches, one forward and one backward each; one tail per rank.
  CHECK(forwards == 16);
  CHECK(backwards == 16);
  CHECK(tails == 2);
}

TEST_CASE(
    "--tp-impl megatron holds Megatron-LM's mixed precision: bf16 parameters, fp32 main "
    "gradients in place, an fp32 master copy") {
  // Llama-1B at TP 2 x DP 2 on a DGX H200. PyTorch's AMP holds n fp32 parameters (4n bytes), 4n of
  // gradients, AdamW's 8n and DDP's bucket copy 4n; Megatron-LM 2n, 4n, 8n + 4n and no buckets.
  const auto memory = [](const std::string& impl) {
    const std::string root = CLUSTERSIM_SOURCE_DIR;
    const cs::test::CommandResult r = cs::test::run_command(
        "'" + std::string(CLUSTERSIM_BINARY) + "' ddp -t '" + root +
        "/topologies/dgx-h200.yaml' -m '" + root +
        "/models/llama-1b.yaml' -n 0-3 --tp 2 --json --tp-impl " + impl + " 2>&1");
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.output)["memory_bytes"];
  };
  const nlohmann::json pytorch = memory("pytorch");
  const nlohmann::json megatron = memory("megatron");
  const double n = pytorch["params"].get<double>() / 4;
  CHECK(pytorch["ddp_buckets"].get<double>() == doctest::Approx(4 * n));
  CHECK(megatron["params"].get<double>() == doctest::Approx(2 * n));
  CHECK(megatron["grads"].get<double>() == doctest::Approx(4 * n));
  CHECK(megatron["optimizer_state"].get<double>() == doctest::Approx(12 * n));
  CHECK(megatron["ddp_buckets"].get<double>() == 0);
  // The peak falls by what the buffers do: (4 + 4 + 8 + 4) - (2 + 4 + 12) = 2n.
  CHECK(pytorch["total"].get<double>() - megatron["total"].get<double>() == doctest::Approx(2 * n));
}

TEST_CASE("sweep's tp, pp and grad_accum axes run the step ddp runs with those flags") {
  const std::string root = CLUSTERSIM_SOURCE_DIR;
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("cs-sweep-layout-" + std::to_string(::getpid()) + ".yaml"))
                               .string();
  {
    std::FILE* out = std::fopen(file.c_str(), "w");
    REQUIRE(out != nullptr);
    std::fprintf(out,
                 "command: ddp\naxes:\n  topology: %s/topologies/dgx-h100-2node.yaml\n"
                 "  nodes: [2]\n  model: %s/models/llama-3.1-8b.yaml\n  batch: [1]\n"
                 "  tp: [4]\n  pp: [2]\n  grad_accum: [8]\n",
                 root.c_str(), root.c_str());
    std::fclose(out);
  }
  const cs::test::CommandResult sweep = cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) +
                                                              "' sweep '" + file + "' 2>/dev/null");
  std::remove(file.c_str());
  REQUIRE(sweep.status == 0);
  const cs::test::CommandResult step = ddp("--batch 1 --grad-accum 8 --csv");
  REQUIRE(step.status == 0);
  // The step in ms, as each prints it: ddp's CSV column step_ms, the sweep's 11th column.
  const auto field = [](const std::string& line, int index) {
    std::size_t at = 0;
    for (int i = 0; i < index; ++i) at = line.find(',', at) + 1;
    return std::stod(line.substr(at, line.find(',', at) - at));
  };
  const std::string sweep_row = sweep.output.substr(sweep.output.find('\n') + 1);
  const std::string ddp_row = step.output.substr(step.output.find('\n') + 1);
  const std::string ddp_head = step.output.substr(0, step.output.find('\n'));
  int step_column = 0;
  for (std::size_t at = 0; ddp_head.compare(at, 8, "step_ms,") != 0;
       at = ddp_head.find(',', at) + 1)
    ++step_column;
  CHECK(field(sweep_row, 10) == doctest::Approx(field(ddp_row, step_column)).epsilon(1e-9));
}

TEST_CASE("scale takes the layout: a GPU count TP does not divide is ddp's error") {
  const std::string root = CLUSTERSIM_SOURCE_DIR;
  const cs::test::CommandResult r = cs::test::run_command(
      "'" + std::string(CLUSTERSIM_BINARY) + "' scale -t '" + root +
      "/topologies/dgx-h100.yaml' -m '" + root + "/models/gpt2.yaml' --gpus 2,3 --tp 2 2>&1");
  CHECK(r.status == 2);
  CHECK(r.output.find("flag '--tp': --tp 2 x --pp 1 = 2 GPUs per model replica do not divide "
                      "the 3 ranks") != std::string::npos);
}
