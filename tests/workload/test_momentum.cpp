// SGD's momentum: a model setting (PyTorch's default 0) that decides the optimizer's foreach ops,
// its state in memory, and whether a measured optimizer time may be reused; by hand on tiny-gpt.
#include <doctest/doctest.h>

#include <string>

#include "support/calibration_data.hpp"
#include "topology/loader.hpp"
#include "workload/ddp/memory_check.hpp"
#include "workload/ddp/step_plan.hpp"
#include "workload/model/model_loader.hpp"
#include "workload/work/work_model.hpp"

namespace cs::workload {
namespace {

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;

std::string tiny_text() {
  return cs::test::read_text_file(kRoot + "/tests/data/models/tiny-gpt.yaml");
}

std::string load_error(const std::string& text) {
  try {
    parse_model_text(text, "m.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("momentum in a model file: sgd only, >= 0, absent means 0") {
  const Model plain = parse_model_text(tiny_text(), "tiny-gpt.yaml");
  CHECK(plain.settings.momentum == 0);
  // tiny-gpt's settings say adamw (line 9): a momentum there is refused at its line.
  std::string text = tiny_text();
  const std::string adamw = "  optimizer: adamw\n";
  const auto at = text.find(adamw);
  REQUIRE(at != std::string::npos);
  std::string bad = text;
  bad.insert(at + adamw.size(), "  momentum: 0.9\n");
  CHECK(load_error(bad).find("m.yaml:10: key 'momentum': applies only to optimizer sgd") == 0);
  // With sgd: read; negative refused.
  std::string sgd = text;
  sgd.replace(at, adamw.size(), "  optimizer: sgd\n  momentum: 0.9\n");
  CHECK(parse_model_text(sgd, "m.yaml").settings.momentum == doctest::Approx(0.9));
  std::string negative = text;
  negative.replace(at, adamw.size(), "  optimizer: sgd\n  momentum: -1\n");
  CHECK(load_error(negative).find("m.yaml:10: key 'momentum'") == 0);
}

TEST_CASE("momentum decides the optimizer's kernels and its state") {
  const Model model = parse_model_text(tiny_text(), "tiny-gpt.yaml");
  const topo::Cluster cluster = topo::load_cluster(kRoot + "/topologies/dgx-h200.yaml");
  const topo::GpuModel& gpu = cluster.gpu_models.front();
  TrainingOptions o = default_options(model);
  o.ddp.enabled = false;
  o.optimizer = OptimizerKind::sgd;  // the h200 measurement ran AdamW: the work model times it
  // tiny-gpt's 7 tensors (wte; per block attn weight and bias, mlp weight) hold 6400 + 2 x (12288
  // + 192) + 2 x 16384 = 64128 elements: 1 + 7 = 8 chunks, one launch per foreach op.
  o.momentum = 0;
  const StepPlan none = plan_step(model, o, gpu, gpu_compute_priors(gpu), 0);
  CHECK(none.optimizer.kernels == 1);
  o.momentum = 0.9;
  const StepPlan with = plan_step(model, o, gpu, gpu_compute_priors(gpu), 0);
  CHECK(with.optimizer.kernels == 3);
  CHECK(with.optimizer.gpu_us > none.optimizer.gpu_us);

  // State: a momentum buffer like each parameter: 6400 + 2 x 12480 fp32 elements x 4 B + 2 x
  // 16384 bf16 (the mlp weights) x 2 B = 125440 + 65536 = 190976 bytes; none without momentum.
  o.momentum = 0;
  CHECK(estimate_memory(model, o, 80e9).optimizer_state == 0);
  o.momentum = 0.9;
  CHECK(estimate_memory(model, o, 80e9).optimizer_state == doctest::Approx(190976));
}

}  // namespace cs::workload
