// SGD's momentum derived by hand, beside test_momentum.cpp: torch.optim.SGD's foreach step
// (torch/optim/sgd.py, _multi_tensor_sgd; no weight decay, not Nesterov, not maximize) runs one op
// without momentum, _foreach_add_(params, grads, alpha=-lr), and three with it (once the buffers
// exist), _foreach_mul_(bufs, momentum), _foreach_add_(bufs, grads, alpha=1 - dampening),
// _foreach_add_(params, bufs, alpha=-lr). Here: their times on a three-tensor model, the measured
// optimizer time reused only for a step of the same momentum-ness, a measurement's own momentum,
// and `--momentum` on the command line.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/error.hpp"
#include "support/bad_input.hpp"
#include "support/cli_run.hpp"
#include "workload/ddp/step_plan.hpp"
#include "workload/model/model_loader.hpp"

namespace cs::workload {
namespace {

// Three fp32 tensors of 1,000, 100 x 65,536 = 6,553,600 and 250 x 65,536 = 16,384,000 elements:
// 22,938,600 in all. multi_tensor_apply splits tensors into chunks of 65,536 elements, at most
// 320 chunks a launch: optimizer_kernels counts ceil(22,938,600 / 65,536) = 351 chunks plus a
// partial one per tensor, 354 (multi_tensor_apply's own count, 1 + 100 + 250 = 351, gives the
// same two launches), so each op takes ceil(354 / 320) = 2 launches; its tensor limits (110 at
// depth 1, 64 at depth 2) do not bind on 3 tensors.
constexpr double kElements = 22'938'600;

Model three_tensors() {
  Model m;
  m.name = "three";
  m.file = "three.yaml";
  m.settings.optimizer = OptimizerKind::sgd;
  Layer l;
  l.name = "only";
  l.params = {
      {"a", 1'000, Dtype::fp32}, {"b", 6'553'600, Dtype::fp32}, {"c", 16'384'000, Dtype::fp32}};
  m.layers.push_back(l);
  return m;
}

// A GPU of 1 TB/s at efficiency 1 and 2 us per memory kernel: a memory op of K kernels and B
// bytes takes 2 K + B / 1e6 us.
GpuCompute one_tb_per_s() {
  GpuCompute gpu;
  gpu.memory_Bps = 1e12;
  gpu.memory_efficiency = 1;
  gpu.memory_kernel_us = 2;
  return gpu;
}

StepPlan plan(const Model& model, double momentum, ComputeSource compute) {
  TrainingOptions o = default_options(model);
  o.ddp.enabled = false;
  o.momentum = momentum;
  o.compute = compute;
  topo::GpuModel gpu;
  gpu.name = "H200-SXM-141GB";
  return plan_step(model, o, gpu, one_tb_per_s(), 0);
}

// A measurement of SGD on the target's GPU model at the target's batch: 500 us in 9 kernels.
Measurement sgd_measured(const char* id, double momentum) {
  Measurement m;
  m.id = id;
  m.gpu = "H200-SXM-141GB";
  m.optimizer = OptimizerKind::sgd;
  m.momentum = momentum;
  m.optimizer_us = 500;
  m.optimizer_kernels = 9;
  return m;
}

}  // namespace

TEST_CASE("optimizer: SGD's foreach ops on three tensors, with momentum and without") {
  // Without momentum: add_(params, grads) reads 4 + 4 and writes 4 bytes per element: 12; one op
  // of depth 2 in 2 launches. With momentum: mul_(bufs) 8 + add_(bufs, grads) 12 +
  // add_(params, bufs) 12 = 32 bytes; 3 ops x 2 launches = 6 kernels.
  CHECK(optimizer_kernels(OptimizerKind::sgd, 0, 3, kElements) == 2);
  CHECK(optimizer_kernels(OptimizerKind::sgd, 0.9, 3, kElements) == 6);
  // 200 tensors of 1,000 elements: ceil(200,000 / 65,536) + 200 = 204 chunks, one launch by
  // blocks; by tensors ceil(200 / 64) = 4 at depth 2 and ceil(200 / 110) = 2 at depth 1. Without
  // momentum 4 kernels; with it 2 + 4 + 4 = 10.
  CHECK(optimizer_kernels(OptimizerKind::sgd, 0, 200, 200'000) == 4);
  CHECK(optimizer_kernels(OptimizerKind::sgd, 0.9, 200, 200'000) == 10);

  // The step's optimizer task from work alone: 2 x 2 + 12 x 22,938,600 / 1e6 = 279.2632 us in 2
  // kernels without momentum; 6 x 2 + 32 x 22,938,600 / 1e6 = 746.0352 us in 6 with it.
  const Model m = three_tensors();
  const StepPlan plain = plan(m, 0, ComputeSource::work);
  CHECK(plain.optimizer.kernels == 2);
  CHECK(plain.optimizer.gpu_us == doctest::Approx(279.2632));
  const StepPlan with = plan(m, 0.9, ComputeSource::work);
  CHECK(with.optimizer.kernels == 6);
  CHECK(with.optimizer.gpu_us == doctest::Approx(746.0352));
  // The factor itself changes no work: 0.5 moves what 0.9 moves.
  CHECK(plan(m, 0.5, ComputeSource::work).optimizer.gpu_us == with.optimizer.gpu_us);
}

TEST_CASE("optimizer: a measured SGD time stands only for a step of the same momentum-ness") {
  Model m = three_tensors();
  m.measurements = {sgd_measured("m9", 0.9)};
  // Measured with momentum 0.9, wanted with 0.5: the same three ops, so the measured 500 us in
  // 9 kernels, times the work model's ratio between the two (same GPU, same work: 1).
  const StepPlan half = plan(m, 0.5, ComputeSource::measured);
  CHECK(half.measurement == "m9");
  CHECK(half.optimizer.kernels == 9);
  CHECK(half.optimizer.gpu_us == doctest::Approx(500));
  // Wanted without momentum: one op, so the work model's 2 kernels and 279.2632 us (above).
  const StepPlan plain = plan(m, 0, ComputeSource::measured);
  CHECK(plain.measurement == "m9");
  CHECK(plain.optimizer.kernels == 2);
  CHECK(plain.optimizer.gpu_us == doctest::Approx(279.2632));
  // And the other way: measured without momentum, wanted with it: 6 kernels, 746.0352 us.
  m.measurements = {sgd_measured("m0", 0)};
  const StepPlan with = plan(m, 0.9, ComputeSource::measured);
  CHECK(with.optimizer.kernels == 6);
  CHECK(with.optimizer.gpu_us == doctest::Approx(746.0352));
}

TEST_CASE("model file: a measurement's own momentum, and the shipped ResNet-50's") {
  const std::string text =
      "model: x\nsettings: {batch: 1, precision: bf16, optimizer: sgd, input_bytes_per_sample: 0}\n"
      "recorded_at: {batch: 1, precision: bf16}\nlayers: [{name: a}]\n"
      "measurements:\n  - {id: a, gpu: L40S, batch: 1, precision: bf16, optimizer: OPT,\n"
      "     momentum: 0.95, optimizer_us: 1, optimizer_kernels: 1,\n"
      "     host_us: {forward: 1, backward: 1, optimizer: 1}}\n";
  std::string sgd = text;
  sgd.replace(sgd.find("OPT"), 3, "sgd");
  const Model with = parse_model_text(sgd, "m.yaml");
  CHECK(with.settings.momentum == 0);  // absent: torch.optim.SGD's default
  CHECK(with.measurements.at(0).momentum == 0.95);
  // With adamw the measurement's momentum (line 7) is refused.
  std::string adamw = text;
  adamw.replace(adamw.find("OPT"), 3, "adamw");
  CHECK_THROWS_WITH_AS(parse_model_text(adamw, "m.yaml"),
                       "m.yaml:7: key 'momentum': applies only to optimizer sgd (AdamW's betas "
                       "are not a momentum)",
                       InputError);
  // The shipped ResNet-50 ran torch.optim.SGD(momentum=0.9) in every export.
  const Model resnet =
      load_model_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/models/resnet50.yaml");
  CHECK(resnet.settings.momentum == 0.9);
  for (const Measurement& r : resnet.measurements) CHECK(r.momentum == 0.9);
}

}  // namespace cs::workload

namespace {

cs::test::CommandResult clustersim(const std::string& command, const std::string& args) {
  const std::string root = CLUSTERSIM_SOURCE_DIR;
  return cs::test::run_command("'" + std::string(CLUSTERSIM_BINARY) + "' " + command +
                               " --model '" + root + "/models/" + args + " 2>&1");
}

}  // namespace

TEST_CASE("clustersim --momentum: the model file's by default, 0 for SGD named on the line") {
  const std::string h200 = "' --topology '" + std::string(CLUSTERSIM_SOURCE_DIR) +
                           "/topologies/dgx-h200.yaml' --no-ddp --json";
  // ResNet-50's file says 0.9: asking for it changes nothing, bit for bit.
  const cs::test::CommandResult shipped = clustersim("ddp", "resnet50.yaml" + h200);
  REQUIRE(shipped.status == 0);
  CHECK(clustersim("ddp", "resnet50.yaml" + h200 + " --momentum 0.9").output == shipped.output);
  // Without momentum: no buffers, where 0.9 holds one per parameter (25,557,032 fp32 elements,
  // 102,228,128 bytes), and one op instead of three, from the work model rather than measured:
  // less optimizer time.
  const cs::test::CommandResult plain = clustersim("ddp", "resnet50.yaml" + h200 + " --momentum 0");
  REQUIRE(plain.status == 0);
  const auto a = nlohmann::json::parse(shipped.output);
  const auto b = nlohmann::json::parse(plain.output);
  CHECK(b["breakdown_ms"]["optimizer"].get<double>() <
        a["breakdown_ms"]["optimizer"].get<double>());
  CHECK(a["memory_bytes"]["optimizer_state"].get<double>() == 102'228'128);
  CHECK(b["memory_bytes"]["optimizer_state"].get<double>() == 0);

  // The file's SGD overridden by AdamW takes no momentum (test_ddp_cli.cpp: an AdamW file's).
  cs::test::check_bad_input(
      clustersim("ddp", "resnet50.yaml" + h200 + " --optimizer adamw --momentum 0.9"),
      "key 'momentum': applies only to --optimizer sgd");
  // GPT-2 trained with SGD: momentum 0 unless asked (torch.optim.SGD's default).
  CHECK(clustersim("ddp", "gpt2.yaml" + h200 + " --optimizer sgd").output !=
        clustersim("ddp", "gpt2.yaml" + h200 + " --optimizer sgd --momentum 0.9").output);
  CHECK(clustersim("ddp", "gpt2.yaml" + h200 + " --optimizer sgd").output ==
        clustersim("ddp", "gpt2.yaml" + h200 + " --optimizer sgd --momentum 0").output);
  // scale and plan take the flag with the rest of ddp's step flags, and refuse it below 0.
  const std::string t =
      "' -t '" + std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/dgx-h200.yaml'";
  cs::test::check_bad_input(clustersim("scale", "resnet50.yaml" + t + " --momentum=-1"),
                            "--momentum: Value -1 not in range");
  cs::test::check_bad_input(clustersim("plan", "resnet50.yaml" + t + " --steps 10 --momentum=-1"),
                            "--momentum: Value -1 not in range");
}
