// --precision fp16: torch.amp.GradScaler's work in the step (grad_scaler.hpp), derived by hand:
// its kernels from PyTorch's rules, its time on a GPU of round figures, and the step it makes
// with the host's wait on found_inf.
#include <doctest/doctest.h>

#include <string>

#include "support/cli_run.hpp"
#include "support/step_tasks.hpp"
#include "workload/ddp/grad_scaler.hpp"
#include "workload/ddp/step_sim.hpp"

namespace cs::workload {
namespace {

using cs::test::task;

}  // namespace

TEST_CASE("GradScaler: its kernels and GPU time per step, from PyTorch's rules") {
  // 200 fp32 gradients of 1e6 elements (4e6 B each) and one bf16 gradient of 1e6 elements
  // (2e6 B). A memory kernel: 2 us fixed, then bytes at 0.5 x 1 TB/s.
  GpuCompute gpu;
  gpu.memory_kernel_us = 2;
  gpu.memory_efficiency = 0.5;
  gpu.memory_Bps = 1e12;
  std::vector<double> bytes(200, 4e6);
  std::vector<Dtype> dtypes(200, Dtype::fp32);
  bytes.push_back(2e6);
  dtypes.push_back(Dtype::bf16);
  const GradScalerTasks g = grad_scaler_tasks(bytes, dtypes, gpu, 30, 60);
  REQUIRE(g.enabled);
  // scale(loss) and update(): one scalar kernel each, a small kernel's 1.85 us.
  CHECK(g.scale.kernels == 1);
  CHECK(g.scale.gpu_us == doctest::Approx(1.85));
  CHECK(g.scale.host_us_per_kernel == 30);
  CHECK(g.update.kernels == 1);
  CHECK(g.update.gpu_us == doctest::Approx(1.85));
  CHECK(g.update.host_us_per_kernel == 60);
  // unscale_: 4 scalar kernels (double, reciprocal, float, full) = 7.4 us, then one foreach per
  // dtype. fp32: 2e8 elements = 3051.8 -> 3052 chunks of 65536, plus a partial chunk per tensor
  // = 3252 -> ceil(3252 / 320) = 11 launches (by tensors ceil(200 / 110) = 2, fewer); reads and
  // writes 8e8 B: 1.6e9 B / 5e11 B/s = 3200 us + 11 x 2 us = 3222 us. bf16: 16 + 1 = 17 chunks,
  // 1 launch; 4e6 B / 5e11 B/s = 8 us + 2 us = 10 us. In all 4 + 11 + 1 = 16 kernels,
  // 7.4 + 3222 + 10 = 3239.4 us.
  CHECK(g.unscale.kernels == 16);
  CHECK(g.unscale.gpu_us == doctest::Approx(3239.4));
  CHECK(g.unscale.host_us_per_kernel == 60);
  // found_inf.item(): a 4 KiB pageable device-to-host copy measured on an H200, 7.11 us.
  CHECK(g.item_us == doctest::Approx(7.11));
  CHECK(g.item_host_us == 60);
}

TEST_CASE("GradScaler in the step: its kernels, and the host's wait before optimizer.step") {
  // One layer: forward 100 us, backward 200 us, optimizer 50 us, one kernel each launched 10 us
  // after the last. Without GradScaler: forward 10-110, backward 110-310 (launched at 20),
  // optimizer 310-360 (launched at 30): 360 us.
  StepPlan plan;
  LayerTasks layer;
  layer.forward = task("forward", 100, 1, 10);
  layer.backward = task("backward", 200, 1, 10);
  plan.layers.push_back(layer);
  plan.optimizer = task("optimizer", 50, 1, 10);
  CHECK(simulate_step(plan).breakdown.step_us == doctest::Approx(360));
  // With it: scale(loss) launched at 20 runs 110-111.85; backward (launched at 30) 111.85-311.85;
  // unscale_'s 2 kernels of 20 us in all (launched at 40 and 50) 311.85-331.85. found_inf.item():
  // the host works 10 us (to 60), waits for the stream (331.85), the copy runs 7.11 us: the host
  // returns at 338.96. optimizer.step is launched at 348.96 and runs to 398.96; update() (launched
  // at 358.96) runs 398.96-400.81. Step 400.81 us: 40.81 us more = 1.85 + 20 + 7.11 + 1.85 of
  // GradScaler's own, and the optimizer's 10 us launch no longer hidden behind the GPU.
  plan.grad_scaler.enabled = true;
  plan.grad_scaler.scale = task("scale", 1.85, 1, 10);
  plan.grad_scaler.unscale = task("unscale", 20, 2, 10);
  plan.grad_scaler.item_us = 7.11;
  plan.grad_scaler.item_host_us = 10;
  plan.grad_scaler.update = task("update", 1.85, 1, 10);
  const StepResult r = simulate_step(plan);
  CHECK(r.breakdown.step_us == doctest::Approx(400.81));
  // Filed under the optimizer: 50 + 1.85 + 20 + 7.11 + 1.85.
  CHECK(r.breakdown.optimizer_us == doctest::Approx(80.81));
}

TEST_CASE("clustersim ddp --precision fp16: bf16's measurement with GradScaler added") {
  const std::string base = std::string(CLUSTERSIM_BINARY) + " ddp --topology " +
                           CLUSTERSIM_SOURCE_DIR + "/topologies/dgx-h100.yaml --model " +
                           CLUSTERSIM_SOURCE_DIR + "/models/gpt2.yaml --precision ";
  const cs::test::CommandResult fp16 = cs::test::run_command(base + "fp16");
  REQUIRE(fp16.status == 0);
  CHECK(fp16.output.find("fp16, adamw") != std::string::npos);
  CHECK(fp16.output.find("measured 'h100'") != std::string::npos);
  CHECK(fp16.output.find("fp16 as bf16 (no fp16 measurement") != std::string::npos);
}

}  // namespace cs::workload
