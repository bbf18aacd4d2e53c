// The memory check, derived by hand on a two-layer model.
#include <doctest/doctest.h>

#include "workload/ddp/memory_check.hpp"

namespace cs::workload {
namespace {

// Two layers of 1e9 fp32 parameters each (4 GB each, 8 GB in all) saving 1 GB of activations
// per sample each at recorded batch 1.
Model two_layers() {
  Model m;
  m.name = "two";
  m.recorded_at.batch = 1;
  for (const char* name : {"a", "b"}) {
    Layer l;
    l.name = name;
    l.params.push_back({"weight", 1'000'000'000, Dtype::fp32});
    l.activation_bytes = 1e9;
    l.activation_scale_batch = 1;
    m.layers.push_back(l);
  }
  return m;
}

TEST_CASE("memory: the peak of backward and of the optimizer, and the largest batch") {
  const Model m = two_layers();
  TrainingOptions o;
  o.batch = 4;
  o.optimizer = OptimizerKind::adamw;
  o.ddp.enabled = true;
  const double outside = outside_allocator_prior_bytes();
  // Persistent: params 8 + AdamW state 16 + DDP buckets 8 = 32 GB. Activations at batch 4:
  // 2 layers x 4 GB = 8 GB. Backward starts at the last layer: all 8 GB of activations and its
  // 4 GB of gradients: 32 + 8 + 4 = 44 GB; at the first layer 4 GB of activations, 4 GB of
  // gradients produced and its own 4: 44 GB too. The optimizer: 32 + 8 (gradients) + 8
  // (sqrt(exp_avg_sq)) = 48 GB: the peak.
  const MemoryEstimate e = estimate_memory(m, o, 80e9);
  CHECK(e.activations == doctest::Approx(8e9));
  CHECK(e.peak_backward == doctest::Approx(44e9));
  CHECK(e.peak_optimizer == doctest::Approx(48e9));
  CHECK(e.total == doctest::Approx(48e9 + outside));
  CHECK(e.fits());
  // 45 GB is below the optimizer's 48 GB, which does not depend on the batch: no batch fits.
  CHECK_FALSE(estimate_memory(m, o, 45e9).fits());
  CHECK(largest_fitting_batch(m, o, 45e9) == 0);
  // At batch b the backward peaks at the last layer, 32 + 2b + 4 GB (b >= 4; the first layer's
  // 40 + b is lower), so on 80 GB the largest b has 36 + 2b + outside <= 80.
  const int expected = static_cast<int>((80e9 - 36e9 - outside) / 2e9);
  CHECK(largest_fitting_batch(m, o, 80e9) == expected);
}

}  // namespace
}  // namespace cs::workload
