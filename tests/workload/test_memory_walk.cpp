// The memory check's walk through backward, derived by hand: plain, checkpointed, accumulated.
#include <doctest/doctest.h>

#include "workload/ddp/memory_check.hpp"
#include "workload/fsdp/fsdp_memory.hpp"

namespace cs::workload {
namespace {

LayerMemory mem(double acts, double grads, double transient, int block, bool first = false) {
  LayerMemory m;
  m.acts = acts;
  m.grads = grads;
  m.transient = transient;
  m.block = block;
  m.first_of_block = first;
  return m;
}

// An embedding (root), two blocks of a norm (first: the block's input) and a GEMM layer, and a
// loss (root) whose backward holds 200 bytes of gradients for a moment; 1000 bytes persistent.
std::vector<LayerMemory> layers() {
  return {mem(100, 40, 0, -1),     mem(50, 20, 0, 0, true), mem(30, 20, 5, 0),
          mem(50, 20, 0, 1, true), mem(30, 20, 5, 1),       mem(20, 0, 200, -1)};
}

TEST_CASE("memory: the backward peak of a plain, a checkpointed and an accumulated step") {
  BackwardWalk w;
  w.persistent = 1000;
  // Plain: at the loss's backward every activation is held, 280: 1000 + 280 + 200 = 1480. The
  // first block layer's backward later: 1000 + 260 + 0 produced + 20 + 5 = 1285, less.
  CHECK(backward_peak(layers(), w) == doctest::Approx(1480));
  // Checkpointed: a block keeps its input alone (50), so 220 are held at the loss: 1420. In
  // block 1's backward its 30 recomputed bytes come back: 1000 + 200 + 30 + 20 + 5 = 1255.
  w.checkpointing = true;
  CHECK(backward_peak(layers(), w) == doctest::Approx(1420));
  // Accumulated (no checkpointing): every gradient (100) held from the start, each new one
  // added: 1000 + 280 + 100 + 200 = 1580.
  w.checkpointing = false;
  w.held_grads = 100;
  w.produced_scale = 0;
  CHECK(backward_peak(layers(), w) == doctest::Approx(1580));
}

TEST_CASE("memory: a layer's transient and autocast's copies of its weights") {
  // Recorded at the step's batch in bf16: a Linear of a 1000-element fp32 weight saves its bf16
  // copy (2000 bytes) among its 5000; its backward's largest elementwise op moves 3000 bytes,
  // two thirds of them transient gradients.
  Model m;
  m.recorded_at.batch = 4;
  m.recorded_at.precision = Precision::bf16;
  Layer l;
  l.name = "fc";
  l.activation_bytes = 5000;
  l.activation_scale_batch = 1;
  TensorSpec w;
  w.name = "weight";
  w.elements = 1000;
  w.dtype = Dtype::fp32;
  l.params.push_back(w);
  Op gemm;
  gemm.kind = OpKind::gemm;
  gemm.weight = 0;
  l.forward.push_back(gemm);
  Op copy;
  copy.kind = OpKind::memory;
  copy.bytes = 3000;
  copy.scale_batch = 1;
  l.backward.push_back(copy);
  m.layers.push_back(l);
  TrainingOptions o;
  o.batch = 4;
  const std::vector<LayerMemory> at4 = layer_memory(m, o);
  CHECK(at4[0].acts == doctest::Approx(5000));
  CHECK(at4[0].casts == doctest::Approx(2000));
  CHECK(at4[0].grads == doctest::Approx(4000));
  CHECK(at4[0].transient == doctest::Approx(2000));
  // At twice the batch the activations and the transient double; the weight's copy does not.
  o.batch = 8;
  const std::vector<LayerMemory> at8 = layer_memory(m, o);
  CHECK(at8[0].acts == doctest::Approx(10000));
  CHECK(at8[0].casts == doctest::Approx(2000));
  CHECK(at8[0].transient == doctest::Approx(4000));
}

TEST_CASE("memory: FSDP over 2 GPUs, gradients arriving sharded, a unit's reduce buffers") {
  // The root R and blocks A and B, 1000 fp32 parameters each (4000 bytes), saving 100, 200 and
  // 300 bytes; AdamW; sharded over 2. Persistent: parameters 6000 + AdamW's two states 12000.
  // In flight: the root and two units gathered in bf16, 3 x 2000. When a unit's backward ends,
  // its gradients in bf16 (2000) and two reduce-scatter inputs in fp32 (2 x 4000): 10000; its
  // gradients then stay sharded (2000). Walking back: B 18000 + 600 + 6000 + 10000 = 34600; A
  // 18000 + 300 + 2000 + 6000 + 10000 = 36300; R 18000 + 100 + 4000 + 6000 + 10000 = 38100, the
  // peak. The optimizer's: 18000 + sharded gradients 6000 + its temporaries 6000 = 30000.
  Model m;
  m.recorded_at.batch = 1;
  m.recorded_at.precision = Precision::fp32;
  const double saved[] = {100, 200, 300};
  for (int i = 0; i < 3; ++i) {
    Layer l;
    l.name = std::string(1, "RAB"[i]);
    l.block = i - 1;
    l.activation_bytes = saved[i];
    TensorSpec w;
    w.name = "weight";
    w.elements = 1000;
    w.dtype = Dtype::fp32;
    l.params.push_back(w);
    m.layers.push_back(l);
  }
  m.blocks = {Block{"A", -1, 0, 1, 1}, Block{"B", -1, 0, 2, 1}};
  StepPlan plan;
  plan.layers.resize(3);
  GpuCompute gpu;
  gpu.memory_Bps = 1e12;
  gpu.memory_efficiency = 1;
  FsdpOptions f;
  f.shard_ranks = 2;
  TrainingOptions o;
  o.precision = Precision::fp32;
  o.optimizer = OptimizerKind::adamw;
  const FsdpPlan fsdp = plan_fsdp(m, plan, f, gpu, kFsdpHostProbeIndexUs);
  const MemoryEstimate e = estimate_fsdp_memory(m, o, fsdp, 1e12);
  CHECK(e.params == doctest::Approx(6000));
  CHECK(e.optimizer_state == doctest::Approx(12000));
  CHECK(e.unsharded == doctest::Approx(6000));
  CHECK(e.peak_backward == doctest::Approx(38100));
  CHECK(e.peak_optimizer == doctest::Approx(30000));
  CHECK(e.total - e.outside == doctest::Approx(38100));
}

}  // namespace
}  // namespace cs::workload
