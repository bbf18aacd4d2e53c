// Host costs carried from the host a model was exported on to the host it is predicted on: the
// measurement's probe against the target's (core/host_probe.hpp), by hand on the tiny model.
#include <doctest/doctest.h>

#include <string>

#include "support/calibration_data.hpp"
#include "topology/loader.hpp"
#include "workload/ddp/step_plan.hpp"
#include "workload/model/model_loader.hpp"
#include "workload/work/work_model.hpp"

namespace cs::workload {
namespace {

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;

// tiny-gpt with a probe on its h200 measurement: index (5 * 10 * 100 * 80 * 20 * 10)^(1/6).
Model tiny_with_probe() {
  std::string text = cs::test::read_text_file(kRoot + "/tests/data/models/tiny-gpt.yaml");
  const std::string after = "    host_us: {forward: 900, backward: 1500.5, optimizer: 80}\n";
  const auto at = text.find(after);
  REQUIRE(at != std::string::npos);
  text.insert(at + after.size(),
              "    host: {probe: clustersim-host-probe/1, launch_us: 5, elementwise_us: 10, "
              "linear_us: 100, conv_us: 80, autograd_us: 20, foreach_us: 10}\n");
  return parse_model_text(text, "tiny-gpt.yaml");
}

StepPlan plan_of(const Model& model, const TrainingOptions& options) {
  const topo::Cluster cluster = topo::load_cluster(kRoot + "/topologies/dgx-h200.yaml");
  const topo::GpuModel& gpu = cluster.gpu_models.front();
  return plan_step(model, options, gpu, gpu_compute_priors(gpu), 0);
}

}  // namespace

TEST_CASE("host costs: carried by the ratio of the two hosts' indices") {
  const Model model = tiny_with_probe();
  REQUIRE(model.measurements[0].host.has_value());
  TrainingOptions o = default_options(model);
  o.ddp.enabled = false;
  // A target 1.5 times slower in every class: index 1.5x, host costs 1.5x. The h200 measurement
  // measured one forward kernel (wte) in 900 us, two backward kernels in 1500.5 us and 12
  // optimizer kernels in 80 us: per kernel 900, 750.25 and 6.667 us, then 1350, 1125.375, 10.
  HostProbe slower = *model.measurements[0].host;
  for (double& u : slower.us) u *= 1.5;
  slower.source = "a slower host";
  o.host = slower;
  const StepPlan p = plan_of(model, o);
  CHECK(p.measurement == "h200");
  CHECK(p.host_scale == doctest::Approx(1.5));
  CHECK(p.layers[0].forward.host_us_per_kernel == doctest::Approx(1350.0));
  CHECK(p.layers[0].backward.host_us_per_kernel == doctest::Approx(1125.375));
  CHECK(p.optimizer.host_us_per_kernel == doctest::Approx(10.0));
  CHECK(p.host_note.find("a slower host") == 0);

  // No target: the reference host, index (5.79 * 10.09 * 97.37 * 84.62 * 21.5 * 11.73)^(1/6)
  // = exp(18.6146 / 6) = 22.253 us, against the export's (5 * 10 * 100 * 80 * 20 * 10)^(1/6) =
  // 8e7^(1/6) = exp(18.1975 / 6) = 20.757 us.
  o.host.reset();
  const StepPlan ref = plan_of(model, o);
  CHECK(ref.host_scale == doctest::Approx(22.253 / 20.757).epsilon(1e-4));

  // A measurement without a probe keeps its host costs: h100's forward, 1000 us over the six
  // kernels of h.0.attn and h.1.attn (3 each), whatever the target.
  o.host = slower;
  o.measurement = "h100";
  o.precision = Precision::fp32;
  const StepPlan h100 = plan_of(model, o);
  CHECK(h100.host_scale == 1.0);
  CHECK(h100.layers[0].forward.host_us_per_kernel == doctest::Approx(1000.0 / 6));
  CHECK(h100.host_note.find("has no host probe") != std::string::npos);
}

TEST_CASE("a measurement's host probe: another version or a missing class is refused") {
  std::string text = cs::test::read_text_file(kRoot + "/tests/data/models/tiny-gpt.yaml");
  const std::string after = "    host_us: {forward: 900, backward: 1500.5, optimizer: 80}\n";
  const auto at = text.find(after) + after.size();
  auto error_of = [&](const std::string& line) {
    std::string t = text;
    t.insert(at, line);
    try {
      parse_model_text(t, "m.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // The inserted line is line 23 of the file (after host_us on line 22).
  CHECK(error_of("    host: {probe: clustersim-host-probe/9, launch_us: 5, elementwise_us: 10, "
                 "linear_us: 100, conv_us: 80, autograd_us: 20, foreach_us: 10}\n")
            .find("m.yaml:23: key 'probe': unknown host probe 'clustersim-host-probe/9'") == 0);
  CHECK(error_of("    host: {probe: clustersim-host-probe/1, launch_us: 5}\n")
            .find("m.yaml:23: key 'elementwise_us'") == 0);
}

}  // namespace cs::workload
