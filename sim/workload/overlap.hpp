// How much a kernel slows while an NCCL kernel runs beside it on the same GPU, by the NCCL
// kernel's CTA count (its channels): measured, not assumed (calibrate/overlap/overlap.py).
#pragma once

#include <vector>

namespace cs::workload {

struct OverlapSlowdown {
  std::vector<double> ctas;     // ascending, each > 0
  std::vector<double> compute;  // time factor (>= 1) of a compute-bound kernel at each count
  std::vector<double> memory;   // the same for a memory-bound kernel
  // 1 with no CTAs beside it; linear between the measured counts; the last beyond them.
  double factor(int ctas_beside, bool memory_bound) const;
};

// H200, calibrate/data/h200x1-overlap/overlap.json: bf16 GEMMs (8192^3, 8192x3072x768, 4096^3;
// the median of the three at each count) and a 1 GiB elementwise add, each beside a copy kernel
// of 4-32 CTAs x 512 threads copying 1 GiB (2 GiB of traffic a pass) on another stream.
OverlapSlowdown overlap_prior();

}  // namespace cs::workload
