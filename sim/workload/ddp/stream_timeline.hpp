// The step's two GPU streams and its host thread in time, kernel by kernel: what step_sim.cpp
// drives in program order. A compute kernel and an NCCL kernel that overlap slow each other
// (work/overlap.hpp); the NCCL stream is run lazily, as far as the compute stream has got, so
// both are advanced together. Internal to ddp/.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "workload/ddp/step_plan.hpp"
#include "workload/ddp/step_sim.hpp"
#include "workload/work/overlap.hpp"

namespace cs::workload::timeline {

inline TimePs ps_of_us(double us) {
  return ps_from_seconds(us * 1e-6);
}
inline double us_of(TimePs t) {
  return us_from_ps(t);
}

// A kernel on the NCCL stream. It starts once its launch has happened, its event has fired and
// the stream's previous kernel has ended; it needs `length` of GPU time alone, and beside a
// compute kernel progresses at 1 / overlap.comm_factor(rate).
struct NcclKernel {
  std::string name;
  const char* category = "allreduce";
  TimePs earliest = 0;  // launch and event
  TimePs length = 0;
  int ctas = 0;
  double rate_gbps = 0;
  int bucket = -1;  // the bucket it reduces, -1 for none
  double left = 0;  // picoseconds of alone time still to run
  TimePs start = -1, end = -1;
};

class Timeline {
 public:
  Timeline(StepResult& result, TimePs gap, OverlapSlowdown overlap)
      : result_(result), gap_(gap), overlap_(std::move(overlap)) {}

  // Launches `task` on the compute stream, not before `not_before` (an event it waits on).
  // Kernel j (from 1) is launched by the host at H + j h and runs once its launch has happened
  // and the stream's previous kernel has ended and the GPU's gap between queued kernels has
  // passed. Returns the end of its last kernel (what an event recorded after it sees).
  TimePs run(const Task& task, const char* category, TimePs not_before, double& busy_us) {
    const int kernels = task.gpu_us > 0 ? std::max(task.kernels, 1) : task.kernels;
    if (kernels == 0) return compute_.last_end;
    const bool listed = static_cast<int>(task.kernel_us.size()) == kernels;
    const TimePs h = ps_of_us(task.host_us_per_kernel);
    const TimePs even = ps_of_us(task.gpu_us / kernels);
    const TimePs host_start = host_;
    TimePs start = -1;
    for (int j = 0; j < kernels; ++j) {
      host_ += h;
      const TimePs gap = compute_.ran ? gap_ : 0;
      const TimePs ready = std::max(compute_.last_end + gap, j == 0 ? not_before : 0);
      const TimePs begin = std::max(ready, host_);
      // The stream's idle time before this kernel: the GPU's gap, then a wait for the event,
      // then for the host's launch.
      const TimePs idle = begin - compute_.last_end;
      const TimePs gap_part = std::min(gap, idle);
      const TimePs waited =
          j == 0 ? std::clamp<TimePs>(not_before - compute_.last_end - gap_part, 0, idle - gap_part)
                 : 0;
      gaps_ += gap_part;
      exposed_ += waited;
      host_idle_ += idle - gap_part - waited;
      if (start < 0) start = begin;
      const TimePs length = listed ? ps_of_us(task.kernel_us[static_cast<std::size_t>(j)]) : even;
      const bool memory_bound = static_cast<std::size_t>(j) < task.memory_bound.size()
                                    ? task.memory_bound[static_cast<std::size_t>(j)] != 0
                                    : task.memory_bound_default;
      const TimePs end = beside_nccl(begin, length, memory_bound);
      slowdown_ += end - begin - length;
      compute_.last_end = end;
      compute_.ran = true;
    }
    host_busy_ += host_ - host_start;
    busy_us += task.gpu_us;
    if (host_ > host_start) span(task.name, "launch", Lane::host, host_start, host_);
    span(task.name, category, Lane::compute, start, compute_.last_end);
    return compute_.last_end;
  }

  // The host launches `k` on the NCCL stream (one kernel, `host_us` of launch work), not before
  // the event `after`. When it ends is known once the compute kernels beside it have run.
  void launch_nccl(NcclKernel k, TimePs after, double host_us) {
    const TimePs host_start = host_;
    host_ += ps_of_us(host_us);
    host_busy_ += host_ - host_start;
    if (host_ > host_start) span(k.name, "launch", Lane::host, host_start, host_);
    k.earliest = std::max(after, host_);
    k.left = static_cast<double>(k.length);
    nccl_.push_back(std::move(k));
  }

  // Runs the NCCL stream to its end with the compute stream idle from its last kernel on (the
  // compute stream is about to wait for it); returns when its last kernel ends.
  TimePs drain_nccl() {
    advance_nccl(std::numeric_limits<double>::infinity(), std::nullopt);
    return nccl_last_end_;
  }

  // Host work that launches nothing (DDP's walk of the autograd graph, its hooks' own work).
  void host_work(const std::string& name, double us) {
    if (us <= 0) return;
    const TimePs host_start = host_;
    host_ += ps_of_us(us);
    host_busy_ += host_ - host_start;
    span(name, "ddp_host", Lane::host, host_start, host_);
  }

  // A blocking host-side copy (pageable memory): the host waits for the stream, then copies.
  TimePs run_blocking(const std::string& name, double us, double host_us) {
    const TimePs start = std::max(host_ + ps_of_us(host_us), compute_.last_end);
    host_idle_ += start - compute_.last_end;
    const TimePs end = start + ps_of_us(us);
    span(name, "input", Lane::host, host_, end);
    span(name, "input", Lane::compute, start, end);
    host_ = end;
    compute_.last_end = end;
    return end;
  }

  TimePs compute() const { return compute_.last_end; }

  void finish(StepBreakdown& b) {
    drain_nccl();
    const TimePs end = std::max({host_, compute_.last_end, nccl_last_end_});
    // Past the last compute kernel: an all-reduce still running is exposed communication (the
    // step waits for it), and a host still launching beyond that is host-bound.
    const TimePs nccl_tail = std::max<TimePs>(0, nccl_last_end_ - compute_.last_end);
    exposed_ += nccl_tail;
    host_idle_ += end - compute_.last_end - nccl_tail;
    b.step_us = us_of(end);
    b.exposed_communication_us = us_of(exposed_);
    b.host_bound_idle_us = us_of(host_idle_);
    b.host_busy_us = us_of(host_busy_);
    b.kernel_gaps_us = us_of(gaps_);
    b.overlap_slowdown_us = us_of(slowdown_);
    b.communication_us = us_of(nccl_busy_);
    b.communication_slowdown_us = us_of(nccl_busy_ - nccl_alone_);
  }

 private:
  // A compute kernel of `length` alone, begun at `begin`, with the NCCL stream beside it: while
  // an NCCL kernel of c CTAs runs, the compute kernel progresses at 1 / overlap.factor(c) and
  // the NCCL kernel at 1 / overlap.comm_factor(its rate). Both streams are advanced together to
  // the kernel's end, which is returned. NCCL kernels launched later start after this kernel
  // (they wait on an event recorded after it), so every kernel that can run beside it is known.
  TimePs beside_nccl(TimePs begin, TimePs length, bool memory_bound) {
    advance_nccl(static_cast<double>(begin), std::nullopt);  // the compute stream was idle
    double t = static_cast<double>(begin);
    double left = static_cast<double>(length);
    while (left > 0) {
      NcclKernel* k = start_next_nccl(t);
      if (k == nullptr) {  // nothing beside it before it ends, or until the next one starts
        const double next = next_nccl_start();
        if (t + left <= next) {
          t += left;
          break;
        }
        left -= next - t;
        t = next;
        continue;
      }
      const double rc = 1.0 / overlap_.factor(k->ctas, memory_bound);
      const double rn = 1.0 / overlap_.comm_factor(k->rate_gbps, memory_bound);
      if (left / rc <= k->left / rn) {
        k->left -= left / rc * rn;
        t += left / rc;
        break;
      }
      left -= k->left / rn * rc;
      t += k->left / rn;
      end_nccl(*k, t);
    }
    nccl_clock_ = t;
    return static_cast<TimePs>(std::llround(t));
  }

  // Runs the NCCL stream from its clock to `until` beside one compute kernel kind (or, with no
  // kind, with the compute stream idle: at full speed).
  void advance_nccl(double until, std::optional<bool> beside_memory_bound) {
    double t = nccl_clock_;
    while (t < until) {
      NcclKernel* k = start_next_nccl(t);
      if (k == nullptr) {
        const double next = next_nccl_start();
        if (next >= until) break;
        t = next;
        continue;
      }
      const double rn = beside_memory_bound
                            ? 1.0 / overlap_.comm_factor(k->rate_gbps, *beside_memory_bound)
                            : 1.0;
      if (t + k->left / rn > until) {
        k->left -= (until - t) * rn;
        t = until;
        break;
      }
      t += k->left / rn;
      end_nccl(*k, t);
    }
    nccl_clock_ = std::isinf(until) ? t : std::max(t, until);
  }

  // When the NCCL stream's next kernel starts (infinity with none queued).
  double next_nccl_start() {
    if (nccl_next_ >= nccl_.size()) return std::numeric_limits<double>::infinity();
    NcclKernel& k = nccl_[nccl_next_];
    if (k.start < 0) {
      const TimePs after_previous = nccl_ran_ ? nccl_last_end_ + gap_ : 0;
      k.start = std::max(k.earliest, after_previous);
    }
    return static_cast<double>(k.start);
  }

  // The NCCL kernel running at `t`, started if it starts then; null when none runs at `t`.
  NcclKernel* start_next_nccl(double t) {
    if (next_nccl_start() > t) return nullptr;
    return &nccl_[nccl_next_];
  }

  void end_nccl(NcclKernel& k, double t) {
    k.end = static_cast<TimePs>(std::llround(t));
    k.left = 0;
    nccl_last_end_ = k.end;
    nccl_ran_ = true;
    nccl_busy_ += k.end - k.start;
    nccl_alone_ += k.length;
    span(k.name, k.category, Lane::nccl, k.start, k.end);
    if (k.bucket >= 0) {
      BucketTiming& timing = result_.buckets[static_cast<std::size_t>(k.bucket)];
      timing.start_us = us_of(k.start);
      timing.end_us = us_of(k.end);
    }
    ++nccl_next_;
  }

  void span(const std::string& name, const char* category, Lane lane, TimePs start, TimePs end) {
    result_.spans.push_back({name, category, lane, start, end});
  }

  StepResult& result_;
  struct StreamState {
    TimePs last_end = 0;  // end of the last kernel run on it
    bool ran = false;     // whether one has: the gap only separates queued kernels
  };
  TimePs host_ = 0;
  StreamState compute_;
  TimePs gap_ = 0;
  OverlapSlowdown overlap_;
  TimePs exposed_ = 0, host_idle_ = 0, host_busy_ = 0, gaps_ = 0, slowdown_ = 0;
  // The NCCL stream: kernels in launch order; those before nccl_next_ have ended.
  std::vector<NcclKernel> nccl_;
  std::size_t nccl_next_ = 0;
  double nccl_clock_ = 0;  // how far the NCCL stream has been run
  TimePs nccl_last_end_ = 0;
  bool nccl_ran_ = false;
  TimePs nccl_busy_ = 0, nccl_alone_ = 0;
};

}  // namespace cs::workload::timeline
