// One stream's kernels as the executor (executor.cpp) takes them: each node's kernels queued as
// one run, and only the kernel that comes up next worked out (its launch, its length alone), so
// that a layer's thousands of kernels are never listed one by one. Internal to workload/step.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/units.hpp"
#include "workload/step/step_graph.hpp"

namespace cs::workload::exec {

// std::llround inline: the same whole number (half away from zero), as x - trunc(x) is exact.
inline TimePs round_ps(double x) {
  if (!(std::fabs(x) < 0x1p62)) return std::llround(x);
  const auto whole = static_cast<TimePs>(x);
  const double frac = x - static_cast<double>(whole);
  if (frac >= 0.5) return whole + 1;
  if (frac <= -0.5) return whole - 1;
  return whole;
}

// ps_from_seconds(us * 1e-6) (core/units.hpp): the same arithmetic, rounded by round_ps.
inline TimePs ps_of_us(double us) {
  return round_ps(us * 1e-6 * static_cast<double>(kPsPerS));
}

// A node's kernels on its stream: kernel j (from 0) is launched at host_start + (j + 1) x
// host_step, as the host launches them one after another, and needs kernel_us[j] alone where
// kernel_us lists every kernel, else `even`.
struct Run {
  NodeId node = -1;
  int kernels = 0;
  TimePs host_start = 0;
  TimePs host_step = 0;
  TimePs even = 0;
  std::span<const double> kernel_us;
  std::span<const std::uint8_t> memory_bound;  // per kernel, 1 for memory-bound, as far as listed
  bool memory_bound_default = false;           // for kernels memory_bound does not list
};

// Kernel j's time alone.
inline TimePs length_of(const Run& run, int j) {
  return run.kernel_us.empty() ? run.even : ps_of_us(run.kernel_us[static_cast<std::size_t>(j)]);
}

// A kernel of a run, as its stream runs it.
struct Kernel {
  NodeId node = -1;
  bool first = false;  // the node's first kernel: it waits for the node's events
  bool last = false;   // the node's last kernel: its end is the node's
  TimePs launch = 0;   // when the host's launch has happened
  TimePs length = 0;   // alone
  bool memory_bound = false;
  double left = 0;  // picoseconds of alone time still to run
  TimePs start = -1;
};

// The runs of one stream in launch order; the kernels before the head have ended.
class StreamQueue {
 public:
  void reserve(std::size_t runs) { runs_.reserve(runs); }
  // A new run at the end, to fill in (in place: a copy through the stack stalls on its parts).
  Run& push() { return runs_.emplace_back(); }
  // Every kernel queued so far has ended.
  bool drained() const { return run_ == runs_.size(); }
  // The kernel that runs next, or runs now; only while not drained.
  Kernel& head() {
    if (!head_loaded_) load();
    return head_;
  }
  // The head has ended: the next kernel comes up.
  void pop() {
    if (++kernel_ == runs_[run_].kernels) {
      ++run_;
      kernel_ = 0;
    }
    head_loaded_ = false;
  }
  // The run the head belongs to, its index, and the head's index in it; whether the head is past
  // that run's first kernel.
  const Run& run() const { return runs_[run_]; }
  std::size_t run_index() const { return run_; }
  int kernel_index() const { return kernel_; }
  bool mid_run() const { return kernel_ > 0; }

 private:
  void load() {
    const Run& r = runs_[run_];
    const auto j = static_cast<std::size_t>(kernel_);
    head_ = Kernel{};
    head_.node = r.node;
    head_.first = kernel_ == 0;
    head_.last = kernel_ == r.kernels - 1;
    head_.launch = r.host_start + static_cast<TimePs>(kernel_ + 1) * r.host_step;
    head_.length = length_of(r, kernel_);
    head_.memory_bound =
        j < r.memory_bound.size() ? r.memory_bound[j] != 0 : r.memory_bound_default;
    head_loaded_ = true;
  }

  std::vector<Run> runs_;
  std::size_t run_ = 0;
  int kernel_ = 0;  // of runs_[run_]
  Kernel head_;
  bool head_loaded_ = false;
};

}  // namespace cs::workload::exec
