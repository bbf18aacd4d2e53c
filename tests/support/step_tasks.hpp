// A task of one kernel for hand-built step plans (tests/workload): its GPU time, no host cost,
// so that the host issues everything at once and never binds.
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

}  // namespace cs::test
