// DDP across GPUs on the step's timeline, derived by hand: all-reduces hidden behind backward or
// exposed after it, a bucket that waits for the one before it on the NCCL stream, and compute
// slowed beside an all-reduce.
#include <doctest/doctest.h>

#include "support/step_tasks.hpp"
#include "workload/ddp/step_sim.hpp"

namespace cs::workload {
namespace {

using test::kernel;  // one kernel, no host cost (tests/support/step_tasks.hpp)

// Two layers, each with one gradient that is its own bucket; backward of layer 1 (last) then of
// layer 0, `backward_us` each; all-reduces of `allreduce_us` each, of `ctas` CTAs, beside which
// a kernel takes twice as long per 32 CTAs (a made-up curve, easy to derive by hand).
// Buckets as views (no copies), no forward, no optimizer.
StepPlan two_layers(double backward_us, double allreduce_us, int ctas) {
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
  plan.allreduce_ctas = {ctas, ctas};
  plan.overlap = {{32}, {2.0}, {2.0}};
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

TEST_CASE("ddp overlap: compute runs slower beside an all-reduce") {
  // 8 CTAs: factor 1 + (2 - 1) x 8 / 32 = 1.25, a rate of 0.8. Bucket 0's all-reduce runs
  // 100..140: layer 0's backward, 100 us alone from 100, does 40 x 0.8 = 32 us of it by 140 and
  // the other 68 by 208: 8 us of slowdown. Bucket 1 then runs 208..248.
  const StepResult r = simulate_step(two_layers(100, 40, 8));
  CHECK(r.breakdown.overlap_slowdown_us == doctest::Approx(8));
  CHECK(r.buckets[1].start_us == doctest::Approx(208));
  CHECK(r.breakdown.step_us == doctest::Approx(248));
}

TEST_CASE("ddp overlap: both sides slow while they overlap, and only then") {
  // 8 CTAs: compute at 1 / 1.25 = 0.8 of its speed beside the all-reduce (as above). Each CTA
  // of the all-reduce moves 20 GB/s alone; beside compute a CTA gets 10 GB/s: the all-reduce
  // runs at half speed. Bucket 0 from 100: its 40 us take 80 beside layer 0's backward, to 180,
  // while the backward does 80 x 0.8 = 64 of its 100 us; the other 36 run alone, to 216 (16 us
  // of compute slowdown). Bucket 1, ready at 216, runs alone (nothing left beside it), 216..256.
  StepPlan plan = two_layers(100, 40, 8);
  plan.allreduce_rate_gbps = {20, 20};
  plan.overlap.comm_cap_compute_gbps = 10;
  plan.overlap.comm_cap_memory_gbps = 5;
  const StepResult r = simulate_step(plan);
  CHECK(r.buckets[0].end_us == doctest::Approx(180));
  CHECK(r.buckets[0].alone_us == doctest::Approx(40));
  CHECK(r.breakdown.overlap_slowdown_us == doctest::Approx(16));
  CHECK(r.buckets[1].start_us == doctest::Approx(216));
  CHECK(r.buckets[1].end_us == doctest::Approx(256));
  CHECK(r.breakdown.communication_us == doctest::Approx(120));
  CHECK(r.breakdown.communication_slowdown_us == doctest::Approx(40));
  CHECK(r.breakdown.step_us == doctest::Approx(256));
}

TEST_CASE("ddp overlap: an all-reduce that outlasts backward runs at full speed after it") {
  // No CTAs count against compute here (0), 150 us all-reduces slowed to half beside compute:
  // bucket 0 does 50 us of its work over 100..200 beside layer 0's backward, the other 100
  // alone, to 300. Bucket 1 (ready at 200) runs 300..450, alone. Exposed: 450 - 200.
  StepPlan plan = two_layers(100, 150, 0);
  plan.allreduce_rate_gbps = {20, 20};
  plan.overlap.comm_cap_compute_gbps = 10;
  const StepResult r = simulate_step(plan);
  CHECK(r.buckets[0].end_us == doctest::Approx(300));
  CHECK(r.buckets[1].start_us == doctest::Approx(300));
  CHECK(r.breakdown.step_us == doctest::Approx(450));
  CHECK(r.breakdown.exposed_communication_us == doctest::Approx(250));
  CHECK(r.breakdown.communication_slowdown_us == doctest::Approx(50));
}

TEST_CASE("ddp: forward waits for the broadcast of rank 0's buffers") {
  // broadcast_buffers: a 30 us broadcast on the NCCL stream at 0..30, then layer 1's forward of
  // 50 us at 30..80 (layer 0's forward is empty here), backward 100 us per layer from 80.
  StepPlan plan = two_layers(100, 0, 0);
  plan.layers[1].forward = kernel("f", 50);
  plan.broadcast = true;
  plan.broadcast_us = 30;
  const StepResult r = simulate_step(plan);
  CHECK(r.breakdown.exposed_communication_us == doctest::Approx(30));
  CHECK(r.breakdown.step_us == doctest::Approx(30 + 50 + 200));
}

TEST_CASE("ddp overlap: the GPU's gap between kernels delays the next kernel, not the event") {
  // A 2 us gap: bucket 0 is ready when layer 1's backward ends (100), not 2 us later; layer 0's
  // backward starts after the gap, 102..202; bucket 1 runs 202..242, all of it exposed.
  StepPlan plan = two_layers(100, 40, 0);
  plan.kernel_gap_us = 2;
  const StepResult r = simulate_step(plan);
  CHECK(r.buckets[0].ready_us == doctest::Approx(100));
  CHECK(r.buckets[0].start_us == doctest::Approx(100));
  CHECK(r.buckets[1].start_us == doctest::Approx(202));
  CHECK(r.breakdown.kernel_gaps_us == doctest::Approx(2));
  CHECK(r.breakdown.exposed_communication_us == doctest::Approx(40));
  CHECK(r.breakdown.step_us == doctest::Approx(242));
}

TEST_CASE("overlap curve: 1 alone, linear between measured counts, the last beyond") {
  const OverlapSlowdown o{{4, 8}, {1.2, 1.3}, {1.02, 1.04}};
  CHECK(o.factor(0, false) == 1.0);
  CHECK(o.factor(2, false) == doctest::Approx(1.1));   // halfway from (0, 1) to (4, 1.2)
  CHECK(o.factor(6, false) == doctest::Approx(1.25));  // halfway from (4, 1.2) to (8, 1.3)
  CHECK(o.factor(6, true) == doctest::Approx(1.03));
  CHECK(o.factor(64, false) == doctest::Approx(1.3));
}

TEST_CASE("overlap, NCCL side: slowed by rate over the cap of the kernel beside it") {
  OverlapSlowdown o;
  o.comm_cap_compute_gbps = 8;
  o.comm_cap_memory_gbps = 4;
  CHECK(o.comm_factor(4, false) == 1.0);  // under the cap: the link, not the SM, binds
  CHECK(o.comm_factor(16, false) == doctest::Approx(2.0));
  CHECK(o.comm_factor(16, true) == doctest::Approx(4.0));
  CHECK(OverlapSlowdown{}.comm_factor(16, true) == 1.0);  // no cap measured: never slowed
}

}  // namespace
}  // namespace cs::workload
