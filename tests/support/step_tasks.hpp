// Tasks for hand-built step plans (tests/workload): one kernel of a GPU time and no host cost
// (the host issues everything at once and never binds), or kernels with their launch cost.
#pragma once

#include "workload/step/step_graph.hpp"

namespace cs::test {

inline workload::Task kernel(const char* name, double gpu_us) {
  workload::Task t;
  t.name = name;
  t.gpu_us = gpu_us;
  t.kernels = gpu_us > 0 ? 1 : 0;
  return t;
}

// A task of `kernels` kernels, `gpu_us` of GPU time in all, each launched in `host_us` of host
// time.
inline workload::Task task(const char* name, double gpu_us, int kernels, double host_us) {
  workload::Task t;
  t.name = name;
  t.gpu_us = gpu_us;
  t.kernels = kernels;
  t.host_us_per_kernel = host_us;
  return t;
}

}  // namespace cs::test
