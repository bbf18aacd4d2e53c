// The memory check's walk through backward, derived by hand: plain, checkpointed, accumulated.
#include <doctest/doctest.h>

#include "workload/ddp/memory_check.hpp"

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

}  // namespace
}  // namespace cs::workload
