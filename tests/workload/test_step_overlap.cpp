// DDP across GPUs on the step's timeline, derived by hand: all-reduces hidden behind backward or
// exposed after it, a bucket that waits for the one before it on the NCCL stream, and compute
// slowed while an all-reduce holds SMs.
#include <doctest/doctest.h>

#include "workload/step_sim.hpp"

namespace cs::workload {
namespace {

Task kernel(const char* name, double gpu_us) {
  Task t;
  t.name = name;
  t.gpu_us = gpu_us;
  t.kernels = gpu_us > 0 ? 1 : 0;
  return t;  // no host cost: the host is never what binds here
}

// Two layers, each with one gradient that is its own bucket; backward of layer 1 (last) then of
// layer 0, `backward_us` each; all-reduces of `allreduce_us` each holding `share` of the SMs.
// Buckets as views (no copies), no forward, no optimizer.
StepPlan two_layers(double backward_us, double allreduce_us, double share) {
  StepPlan plan;
  for (int i = 0; i < 2; ++i) {
    LayerTasks layer;
    layer.forward = kernel("f", 0);
    layer.backward = kernel("b", backward_us);
    layer.params = {i};
    plan.layers.push_back(layer);
    plan.grad_bytes.push_back(1e6);
    plan.grad_dtypes.push_back(Dtype::fp32);
  }
  plan.buckets = {Bucket{{1}, 1e6, Dtype::fp32}, Bucket{{0}, 1e6, Dtype::fp32}};
  plan.allreduce_us = {allreduce_us, allreduce_us};
  plan.allreduce_sm_share = {share, share};
  plan.optimizer = kernel("opt", 0);
  return plan;
}

TEST_CASE("ddp overlap: an all-reduce shorter than the backward after it is hidden") {
  // Backward 100 us per layer. Bucket 0 (layer 1's gradient) is ready at 100 and all-reduced
  // over 100..140 while layer 0's backward runs 100..200; bucket 1, ready at 200, runs 200..240,
  // and nothing follows on the compute stream but the wait for it: the step ends at 240, with
  // 40 us exposed (the last bucket can never hide) and 40 hidden. No SMs held: no slowdown.
  const StepResult r = simulate_step(two_layers(100, 40, 0));
  CHECK(r.breakdown.step_us == doctest::Approx(240));
  CHECK(r.breakdown.communication_us == doctest::Approx(80));
  CHECK(r.breakdown.exposed_communication_us == doctest::Approx(40));
  CHECK(r.buckets[0].start_us == doctest::Approx(100));
  CHECK(r.buckets[1].start_us == doctest::Approx(200));
}

TEST_CASE("ddp overlap: a bucket waits for the one before it on the NCCL stream") {
  // All-reduces of 150 us: bucket 0 runs 100..250, past the end of backward (200). Bucket 1 is
  // ready at 200 but the NCCL stream is busy until 250: it runs 250..400. Exposed: 400 - 200.
  const StepResult r = simulate_step(two_layers(100, 150, 0));
  CHECK(r.buckets[1].ready_us == doctest::Approx(200));
  CHECK(r.buckets[1].start_us == doctest::Approx(250));
  CHECK(r.breakdown.step_us == doctest::Approx(400));
  CHECK(r.breakdown.exposed_communication_us == doctest::Approx(200));
}

TEST_CASE("ddp overlap: compute runs slower while an all-reduce holds SMs") {
  // 33 of 132 SMs (a quarter) held by bucket 0's all-reduce over 100..140: layer 0's backward,
  // 100 us of work at the full GPU from 100, does 40 x 0.75 = 30 us of it by 140 and the other
  // 70 by 210: 10 us of slowdown. Bucket 1 then runs 210..250.
  const StepResult r = simulate_step(two_layers(100, 40, 33.0 / 132.0));
  CHECK(r.breakdown.overlap_slowdown_us == doctest::Approx(10));
  CHECK(r.buckets[1].start_us == doctest::Approx(210));
  CHECK(r.breakdown.step_us == doctest::Approx(250));
}

}  // namespace
}  // namespace cs::workload
