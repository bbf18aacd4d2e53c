// Overlap on one GPU, both sides, measured rather than assumed: how much a kernel slows while an
// NCCL kernel runs beside it, by the NCCL kernel's CTA count (its channels;
// calibrate/overlap/overlap.py), and how much the NCCL kernel slows beside compute, through the
// rate each of its CTAs can still move (calibrate/overlap/beside.py).
#pragma once

#include <vector>

namespace cs::workload {

struct OverlapSlowdown {
  std::vector<double> ctas;     // ascending, each > 0
  std::vector<double> compute;  // time factor (>= 1) of a compute-bound kernel at each count
  std::vector<double> memory;   // the same for a memory-bound kernel
  // 1 with no CTAs beside it; linear between the measured counts; the last beyond them.
  double factor(int ctas_beside, bool memory_bound) const;

  // The NCCL side. A channel paced by its link needs `rate` bytes per second through its CTA;
  // beside a running kernel a CTA moves at most the cap of that kernel's kind (it shares the
  // SM's issue slots with a compute-bound kernel, HBM's queues with a memory-bound one), so the
  // collective's time stretches by max(1, rate / cap). 0 or less: never slowed.
  double comm_cap_compute_gbps = 0;
  double comm_cap_memory_gbps = 0;
  double comm_factor(double rate_gbps_per_cta, bool memory_bound) const;
};

// H200, calibrate/data/h200x1-overlap/overlap.json and beside.json: bf16 GEMMs (8192^3,
// 8192x3072x768, 4096^3; the median of the three at each count) and a 1 GiB elementwise add, each
// beside a copy kernel of 4-32 CTAs x 512 threads copying 1 GiB (2 GiB of traffic a pass) on
// another stream.
OverlapSlowdown overlap_prior();

}  // namespace cs::workload
