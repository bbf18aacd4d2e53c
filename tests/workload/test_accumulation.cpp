// Gradient accumulation and activation checkpointing in the step graphs of DDP (and the plain
// step) and FSDP2, timelines derived by hand.
#include <doctest/doctest.h>

#include <tuple>

#include "support/step_tasks.hpp"
#include "workload/ddp/step_plan.hpp"
#include "workload/ddp/step_sim.hpp"

namespace cs::workload {
namespace {

using test::kernel;  // one kernel, no host cost (tests/support/step_tasks.hpp)

Layer layer(const char* name, int block, double activation_bytes, OpKind op) {
  Layer l;
  l.name = name;
  l.block = block;
  l.activation_bytes = activation_bytes;
  Op o;
  o.kind = op;
  l.forward.push_back(o);
  return l;
}

TEST_CASE("checkpointing: the recomputation stops after the block's last saved tensor") {
  // A block of a LayerNorm (saves), a Linear (saves its input and weight cast, produced before
  // its GEMM) and a residual add (saves nothing): the LayerNorm alone runs again. With dropout
  // after the Linear (saves its mask), the Linear and the dropout run again too, not the add.
  // Layers outside blocks never do.
  Model m;
  m.layers = {layer("embed", -1, 8, OpKind::memory), layer("ln", 0, 8, OpKind::memory),
              layer("fc", 0, 8, OpKind::gemm), layer("add", 0, 0, OpKind::memory)};
  m.blocks = {Block{"h.0", -1, 0, 1, 3}};
  CHECK(recomputed_layers(m) == std::vector<std::uint8_t>{0, 1, 0, 0});
  m.layers.insert(m.layers.begin() + 3, layer("dropout", 0, 8, OpKind::memory));
  m.blocks = {Block{"h.0", -1, 0, 1, 4}};
  CHECK(recomputed_layers(m) == std::vector<std::uint8_t>{0, 1, 1, 1, 0});
}

TEST_CASE("accumulation and checkpointing: two micro-batches of a checkpointed block") {
  // Two layers of one block, L0 (forward 10 us, backward 20) and L1 (5, 10), one parameter each;
  // L1's forward is not recomputed (a GEMM layer that saves last). Micro-batch 1: forward 0..15,
  // L0 again 15..25, L1's backward 25..35, L0's 35..55. Micro-batch 2: forward 55..70, L0 again
  // 70..80, L1's backward 80..90 and its gradient added into the kept one 90..94 (4 us), L0's
  // 94..114 and its add 114..117 (3 us); the optimizer 117..129.
  StepPlan plan;
  for (const auto& [f, b, name] : {std::tuple{10.0, 20.0, "L0"}, std::tuple{5.0, 10.0, "L1"}}) {
    LayerTasks t;
    t.forward = kernel(name, f);
    t.backward = kernel(name, b);
    t.params = {static_cast<int>(plan.layers.size())};
    plan.layers.push_back(t);
  }
  plan.optimizer = kernel("opt", 12);
  plan.overlap = {{32}, {1.0}, {1.0}};
  plan.micro_batches = 2;
  plan.recompute = true;
  plan.layer_block = {0, 0};
  plan.recomputed = {1, 0};
  plan.accumulate_us = {3, 4};
  const StepResult r = simulate_step(plan);
  CHECK(r.breakdown.step_us == doctest::Approx(129));
  CHECK(r.breakdown.forward_us == doctest::Approx(30));
  CHECK(r.breakdown.recompute_us == doctest::Approx(20));
  CHECK(r.breakdown.backward_us == doctest::Approx(60));
  CHECK(r.breakdown.grad_accumulate_us == doctest::Approx(7));
  CHECK(r.breakdown.optimizer_us == doctest::Approx(12));
}

}  // namespace
}  // namespace cs::workload
