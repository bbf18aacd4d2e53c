// One GPU's step in time, derived by hand: host-bound and GPU-bound tasks, the optimizer's bytes,
// DDP's copies and bucket waits.
#include <doctest/doctest.h>

#include "support/step_tasks.hpp"
#include "workload/ddp/step_sim.hpp"
#include "workload/work/work_model.hpp"

namespace cs::workload {
namespace {

using cs::test::task;

StepPlan one_layer(Task forward, Task backward) {
  StepPlan plan;
  LayerTasks layer;
  layer.forward = std::move(forward);
  layer.backward = std::move(backward);
  plan.layers.push_back(layer);
  return plan;
}

TEST_CASE("step: kernels shorter than their launch leave the GPU waiting for the host") {
  // 10 forward kernels of 1 us, each launched 5 us after the last: kernel j (1..10) is launched
  // at 5j and runs 1 us, so the last ends at 51 us. The GPU is busy 10 us of it: 41 us host-bound.
  const StepResult r = simulate_step(one_layer(task("f", 10, 10, 5), task("b", 0, 0, 5)));
  CHECK(r.breakdown.step_us == doctest::Approx(51));
  CHECK(r.breakdown.forward_us == doctest::Approx(10));
  CHECK(r.breakdown.host_bound_idle_us == doctest::Approx(41));
  CHECK(r.breakdown.host_busy_us == doctest::Approx(50));
}

TEST_CASE("step: kernels longer than their launch run back to back after the first launch") {
  // 10 kernels of 10 us launched 1 us apart: the first starts at 1 us, the rest queue behind it:
  // 1 + 100 = 101 us; with a 0.5 us gap between queued kernels, 1 + 100 + 9 x 0.5 = 105.5 us
  // (the gap separates kernels: none after the last).
  StepPlan plan = one_layer(task("f", 100, 10, 1), task("b", 0, 0, 1));
  CHECK(simulate_step(plan).breakdown.step_us == doctest::Approx(101));
  plan.kernel_gap_us = 0.5;
  const StepResult r = simulate_step(plan);
  CHECK(r.breakdown.step_us == doctest::Approx(105.5));
  CHECK(r.breakdown.kernel_gaps_us == doctest::Approx(4.5));
  CHECK(r.breakdown.host_bound_idle_us == doctest::Approx(1));
}

TEST_CASE("step: the optimizer's time from the bytes its foreach ops move") {
  // AdamW moves 84 bytes per fp32 parameter element (8 foreach ops, step_plan.cpp); 1e6 elements
  // on a GPU of 1 TB/s at efficiency 1 and no fixed cost: 84e6 B / 1e12 B/s = 84 us.
  // SGD with momentum 32 (mul_ 8, add_ 12, add_ 12), without it 12 (one add_ of params and
  // grads).
  CHECK(optimizer_bytes_per_element(OptimizerKind::adamw, 0) == 84);
  CHECK(optimizer_bytes_per_element(OptimizerKind::sgd, 0.9) == 32);
  CHECK(optimizer_bytes_per_element(OptimizerKind::sgd, 0) == 12);
  GpuCompute gpu;
  gpu.memory_Bps = 1e12;
  gpu.memory_efficiency = 1;
  Op op;
  op.kind = OpKind::memory;
  op.bytes = 1e6 * optimizer_bytes_per_element(OptimizerKind::adamw, 0);
  op.kernels = 8;
  CHECK(op_time_us(op, false, gpu) == doctest::Approx(84));
  // 148 tensors (GPT-2) of 124.4M elements: 1898 + 148 chunks over 320 blocks = 7 launches per
  // op, more than ceil(148 / 110) = 2 by tensors: 8 ops x 7 = 56 kernels, what the H200
  // export's profile counted for gpt2.
  CHECK(optimizer_kernels(OptimizerKind::adamw, 0, 148, 124.4e6) == 56);
  // SGD on ResNet-50's 161 tensors of 25.56M elements: 390 + 161 = 551 chunks over 320 blocks
  // = 2 launches per op, ceil(161 / 64) = 3 by tensors for a depth-2 op and ceil(161 / 110) = 2
  // for depth 1. With momentum: 2 + 3 + 3 = 8; without: one depth-2 op, 3.
  CHECK(optimizer_kernels(OptimizerKind::sgd, 0.9, 161, 25.56e6) == 8);
  CHECK(optimizer_kernels(OptimizerKind::sgd, 0, 161, 25.56e6) == 3);
}

TEST_CASE("step: a layer's GEMM time from its shape and a fitted efficiency") {
  // 1000 x 1000 x 1000 bf16: 2e9 FLOPs at 0.5 x 1e15 FLOP/s = 4 us, plus 2 us fixed: 6 us.
  GpuCompute gpu;
  gpu.bf16_flops = 1e15;
  gpu.gemm_efficiency = 0.5;
  gpu.gemm_overhead_us = 2;
  Op op;
  op.kind = OpKind::gemm;
  op.m = op.n = op.k = 1000;
  op.dtype = Dtype::bf16;
  CHECK(op_time_us(op, false, gpu) == doctest::Approx(6));
  // Twice the batch on the growing dimension m: 4e9 FLOPs, 8 + 2 = 10 us.
  op.grows_batch = Dim::m;
  CHECK(op_time_us(scaled(op, {2.0, 1.0, {}, {}}), false, gpu) == doctest::Approx(10));
}

// One layer whose backward is 1 kernel of 100 us launched at 1 us (forward empty), with two
// gradients copied into one bucket in 10 us each (launch 1 us) and back; an optimizer kernel of
// 5 us. The bucket's all-reduce takes `allreduce_us` on the NCCL stream.
StepPlan two_gradients(double allreduce_us) {
  StepPlan plan = one_layer(task("f", 0, 0, 1), task("b", 100, 1, 1));
  plan.layers[0].params = {0, 1};
  plan.grad_bytes = {1e6, 1e6};
  plan.grad_dtypes = {Dtype::fp32, Dtype::fp32};
  plan.buckets = {Bucket{{1, 0}, 2e6, Dtype::fp32}};
  plan.copy_in_us = {10, 10};
  plan.copy_out_us = {10, 10};
  plan.allreduce_us = {allreduce_us};
  plan.ddp_host_us_per_kernel = 1;
  plan.optimizer = task("opt", 5, 1, 1);
  return plan;
}

TEST_CASE("step: DDP on one GPU copies each gradient into its bucket and back") {
  // A one-rank all-reduce takes no GPU time:
  //   backward 1..101, copy in 101..111, 111..121, all-reduce at 121 (launched at host 4),
  //   copies back 121..131, 131..141, optimizer 141..146.
  const StepResult r = simulate_step(two_gradients(0));
  CHECK(r.breakdown.step_us == doctest::Approx(146));
  CHECK(r.breakdown.ddp_copies_us == doctest::Approx(40));
  REQUIRE(r.buckets.size() == 1);
  CHECK(r.buckets[0].ready_us == doctest::Approx(121));
  CHECK(r.breakdown.exposed_communication_us == doctest::Approx(0));
}

TEST_CASE("step: a copy back waits for a slow all-reduce (exposed communication)") {
  // The all-reduce takes 50 us on the NCCL stream: 121..171. The copy back waits for it:
  // 171..181, 181..191, optimizer 191..196. The compute stream idles 50 us on it.
  const StepResult r = simulate_step(two_gradients(50));
  CHECK(r.breakdown.step_us == doctest::Approx(196));
  CHECK(r.breakdown.exposed_communication_us == doctest::Approx(50));
  CHECK(r.breakdown.communication_us == doctest::Approx(50));
}

}  // namespace
}  // namespace cs::workload
