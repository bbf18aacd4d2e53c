// FSDP2's step as a graph, on a three-layer model written by hand, timeline derived by hand.
#include <doctest/doctest.h>

#include "support/step_tasks.hpp"
#include "workload/fsdp/fsdp_step.hpp"

namespace cs::workload {
namespace {

Layer layer(const char* name, int block) {
  Layer l;
  l.name = name;
  l.block = block;
  TensorSpec p;
  p.name = "weight";
  p.elements = 1000;
  p.dtype = Dtype::fp32;
  l.params.push_back(p);
  return l;
}

using test::kernel;  // one kernel, no host cost (tests/support/step_tasks.hpp)

// R (the root's), then blocks A and B, one layer each. Forward 10 us and backward 20 us a layer,
// the optimizer 12 us over the whole model; no kernel gap, no slowdown beside communication.
struct Fixture {
  Model model;
  StepPlan plan;
  FsdpPlan fsdp;
  Fixture() {
    model.layers = {layer("R", -1), layer("A", 0), layer("B", 1)};
    model.blocks = {Block{"A", -1, 0, 1, 1}, Block{"B", -1, 0, 2, 1}};
    for (const Layer& l : model.layers) {
      LayerTasks t;
      t.forward = kernel(l.name.c_str(), 10);
      t.backward = kernel(l.name.c_str(), 20);
      plan.layers.push_back(t);
    }
    plan.optimizer = kernel("opt", 12);
    plan.overlap = {{32}, {1.0}, {1.0}};
    GpuCompute gpu;
    gpu.memory_efficiency = 1;
    gpu.memory_Bps = 1e12;
    FsdpOptions o;
    o.shard_ranks = 2;
    fsdp = plan_fsdp(model, plan, o, gpu, kFsdpHostProbeIndexUs);
    // Times set by hand: all-gathers 5 us (root) and 8 us (A, B), reduce-scatters 6 us, copy-ins
    // to the all-gather 0 us, every other copy 1 us, launches free.
    fsdp.copy_host_us = 0;
    fsdp.hook_host_us_per_tensor = 0;
    fsdp.sync_host_us_per_tensor = 0;
    for (FsdpUnit& u : fsdp.units) {
      u.all_gather.alone_us = u.name == "root" ? 5 : 8;
      u.reduce_scatter.alone_us = 6;
      u.copy_in_us = 0;
      u.copy_out_us = 1;
      u.reduce_copy_in_us = 1;
    }
  }
};

TEST_CASE("fsdp: units, bytes and the sharded optimizer from the model's blocks") {
  const Fixture f;
  REQUIRE(f.fsdp.units.size() == 3);
  CHECK(f.fsdp.units[0].name == "root");
  CHECK(f.fsdp.units[2].name == "B");
  CHECK(f.fsdp.unit_of_layer == std::vector<int>{0, 1, 2});
  CHECK(f.fsdp.units[1].all_gather_bytes == 2000);      // 1000 elements in bf16
  CHECK(f.fsdp.units[1].reduce_scatter_bytes == 4000);  // in fp32
}

TEST_CASE("fsdp: a step's all-gathers, reduce-scatters and waits, derived by hand") {
  // Forward. The root is gathered 0..5 and copied out 5..6; R runs 6..16. A's all-gather runs
  // 5..13 behind the root's on its stream (it waits for nothing: implicit prefetch), its copy-out
  // 16..17, A 17..27. B's all-gather waits for the root's copy-out (two gathered outputs at most)
  // and for A's on the stream: 13..21; copy-out 27..28, B 28..38.
  // Backward. B was resharded after forward (38): gathered again 38..46, A prefetched behind it
  // 46..54 (its reshard was at 27). B's copy-out waits: 46..47, B 47..67; B's gradients copied
  // 67..68 and reduce-scattered 68..74. A: copy-out 68..69, backward 69..89, its gradients copied
  // 89..90 (the previous reduce-scatter ended at 74) and reduce-scattered 90..96. R 90..110; the
  // root's gradients copied 110..111, reduce-scattered 111..117; the optimizer (half of 12 us on
  // the shard) waits for it: 117..123.
  const Fixture f;
  const StepResult r = simulate_fsdp_step(f.plan, f.fsdp);
  CHECK(r.breakdown.step_us == doctest::Approx(123));
  CHECK(r.breakdown.forward_us == doctest::Approx(30));
  CHECK(r.breakdown.backward_us == doctest::Approx(60));
  CHECK(r.breakdown.ddp_copies_us == doctest::Approx(8));  // 5 copy-outs, 3 copy-ins
  CHECK(r.breakdown.optimizer_us == doctest::Approx(6));
  // Waits on the compute stream: the root's all-gather (5), B's second (38..46: 8), the last
  // reduce-scatter before the optimizer (111..117: 6).
  CHECK(r.breakdown.exposed_communication_us == doctest::Approx(19));
  CHECK(r.breakdown.communication_us == doctest::Approx(5 + 4 * 8 + 3 * 6));
  CHECK(r.breakdown.host_bound_idle_us == doctest::Approx(0));
  const FsdpStepGraph g = fsdp_step_graph(f.plan, f.fsdp);
  CHECK(g.all_gathers.size() == 5);
  CHECK(g.reduce_scatters.size() == 3);
}

TEST_CASE("fsdp: without reshard after forward nothing is gathered in backward") {
  // The same step, parameters kept: three all-gathers, and backward starts at 38 without a
  // wait: B 38..58, its gradients 58..59 / 59..65, A 59..79 (copy 79..80, reduce 80..86), R
  // 80..100, the root's 100..101 / 101..107, the optimizer 107..113.
  Fixture f;
  f.fsdp.options.reshard_after_forward = false;
  const StepResult r = simulate_fsdp_step(f.plan, f.fsdp);
  CHECK(r.breakdown.step_us == doctest::Approx(113));
  CHECK(r.breakdown.exposed_communication_us == doctest::Approx(5 + 6));
}

TEST_CASE("fsdp: accumulation keeps the gradients until the last micro-batch reduces them") {
  // Two micro-batches, parameters kept after forward. Micro-batch 1 as the step above to 38;
  // backward B 38..58, its gradients cast and kept 58..60 (2 us a unit), A 60..80 and 80..82,
  // R 82..102 and 102..104: no reduce-scatter. Micro-batch 2: the root gathered again after
  // that (104..109; FSDP reshards after backward), copied out 109..110, R 110..120; A's
  // all-gather behind the root's 109..117, copy-out 120..121, A 121..131; B's 117..125, copy-out
  // 131..132, B 132..142. Backward B 142..162, its gradient added 162..165 (3 us), the kept
  // gradients copied in 165..166 and reduce-scattered 166..172; A 166..186, added 186..189,
  // copied 189..190, reduced 190..196; R 190..210, added 210..213, copied 213..214, reduced
  // 214..220; the optimizer 220..226. The compute stream waits for the root's all-gathers (5 +
  // 5) and the last reduce-scatter (6).
  Fixture f;
  f.fsdp.options.reshard_after_forward = false;
  f.plan.micro_batches = 2;
  for (FsdpUnit& u : f.fsdp.units) {
    u.accumulate_first_us = 2;
    u.accumulate_us = 3;
    u.reduce_copy_in_accumulated_us = 1;
  }
  const StepResult r = simulate_fsdp_step(f.plan, f.fsdp);
  CHECK(r.breakdown.step_us == doctest::Approx(226));
  CHECK(r.breakdown.forward_us == doctest::Approx(60));
  CHECK(r.breakdown.backward_us == doctest::Approx(120));
  CHECK(r.breakdown.grad_accumulate_us == doctest::Approx(3 * 2 + 3 * 3));
  CHECK(r.breakdown.ddp_copies_us == doctest::Approx(6 + 3));  // copy-outs, reduce copy-ins
  CHECK(r.breakdown.exposed_communication_us == doctest::Approx(16));
  const FsdpStepGraph g = fsdp_step_graph(f.plan, f.fsdp);
  CHECK(g.all_gathers.size() == 6);
  CHECK(g.reduce_scatters.size() == 3);
}

TEST_CASE("hsdp: each reduced shard all-reduced across the replicas on its own stream") {
  // The no-reshard step with two replicas: after each reduce-scatter its shard's all-reduce
  // (4 us) on the all-reduce stream: B's 65..69, A's 86..90, the root's 107..111. The optimizer
  // waits for the last: 111..117; the compute stream waits 5 (the root's all-gather) and
  // 101..111.
  Fixture f;
  f.fsdp.options.reshard_after_forward = false;
  f.fsdp.options.replicas = 2;
  for (FsdpUnit& u : f.fsdp.units) u.all_reduce.alone_us = 4;
  const StepResult r = simulate_fsdp_step(f.plan, f.fsdp);
  CHECK(r.breakdown.step_us == doctest::Approx(117));
  CHECK(r.breakdown.exposed_communication_us == doctest::Approx(5 + 10));
  CHECK(r.breakdown.communication_us == doctest::Approx(5 + 2 * 8 + 3 * 6 + 3 * 4));
  CHECK(fsdp_step_graph(f.plan, f.fsdp).all_reduces.size() == 3);
}

TEST_CASE("fsdp: reducing in every micro-batch keeps no unsharded gradients") {
  // The same two micro-batches, each reducing its gradients (no set_requires_gradient_sync
  // (False)): three reduce-scatters a micro-batch and no accumulation kernel; the copy-ins read
  // the fresh gradients (1 us each, six of them).
  Fixture f;
  f.fsdp.options.reshard_after_forward = false;
  f.plan.micro_batches = 2;
  f.plan.sync_every_micro = true;
  for (FsdpUnit& u : f.fsdp.units) {
    u.accumulate_first_us = 2;
    u.accumulate_us = 3;
    u.reduce_copy_in_accumulated_us = 5;
  }
  const StepResult r = simulate_fsdp_step(f.plan, f.fsdp);
  CHECK(r.breakdown.grad_accumulate_us == doctest::Approx(0));
  CHECK(r.breakdown.ddp_copies_us == doctest::Approx(6 + 6));  // copy-outs, reduce copy-ins
  CHECK(fsdp_step_graph(f.plan, f.fsdp).reduce_scatters.size() == 6);
}

}  // namespace
}  // namespace cs::workload
