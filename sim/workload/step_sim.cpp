// The step in program order: input copy, forward, backward with DDP's copies and bucket
// all-reduces, DDP's wait and copies back, optimizer.
#include "workload/step_sim.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.hpp"

namespace cs::workload {
namespace {

TimePs ps_of_us(double us) {
  return ps_from_seconds(us * 1e-6);
}
double us_of(TimePs t) {
  return us_from_ps(t);
}

// A task of `kernels` memory-bound kernels (copies) adding to `gpu_us`, each launched
// `host_us` after the last.
Task launch_of(std::string name, double gpu_us, int kernels, double host_us) {
  Task t;
  t.memory_bound_default = true;
  t.name = std::move(name);
  t.gpu_us = gpu_us;
  t.kernels = kernels;
  t.host_us_per_kernel = host_us;
  return t;
}

class Timeline {
 public:
  Timeline(StepResult& result, TimePs gap, OverlapSlowdown overlap)
      : result_(result), gap_(gap), overlap_(std::move(overlap)) {}

  // Launches `task` on `lane`, not before `not_before` (an event it waits on). Kernel j (from 1)
  // is launched by the host at H + j h and runs once its launch has happened and the stream's
  // previous kernel has ended and the GPU's gap between queued kernels has passed. Returns the
  // end of its last kernel (what an event recorded after it sees).
  TimePs run(const Task& task, Lane lane, const char* category, TimePs not_before,
             double& busy_us) {
    const int kernels = task.gpu_us > 0 ? std::max(task.kernels, 1) : task.kernels;
    StreamState& stream = lane == Lane::nccl ? nccl_ : compute_;
    if (kernels == 0) return stream.last_end;
    const bool listed = static_cast<int>(task.kernel_us.size()) == kernels;
    const TimePs h = ps_of_us(task.host_us_per_kernel);
    const TimePs even = ps_of_us(task.gpu_us / kernels);
    const TimePs host_start = host_;
    TimePs start = -1;
    for (int j = 0; j < kernels; ++j) {
      host_ += h;
      const TimePs gap = stream.ran ? gap_ : 0;
      const TimePs ready = std::max(stream.last_end + gap, j == 0 ? not_before : 0);
      const TimePs begin = std::max(ready, host_);
      if (lane == Lane::compute) {
        // The stream's idle time before this kernel: the GPU's gap, then a wait for the event,
        // then for the host's launch.
        const TimePs idle = begin - stream.last_end;
        const TimePs gap_part = std::min(gap, idle);
        const TimePs waited =
            j == 0 ? std::clamp<TimePs>(not_before - stream.last_end - gap_part, 0, idle - gap_part)
                   : 0;
        gaps_ += gap_part;
        exposed_ += waited;
        host_idle_ += idle - gap_part - waited;
      }
      if (start < 0) start = begin;
      const TimePs length = listed ? ps_of_us(task.kernel_us[static_cast<std::size_t>(j)]) : even;
      const bool memory_bound = static_cast<std::size_t>(j) < task.memory_bound.size()
                                    ? task.memory_bound[static_cast<std::size_t>(j)] != 0
                                    : task.memory_bound_default;
      const TimePs end =
          lane == Lane::compute ? stretched(begin, length, memory_bound) : begin + length;
      slowdown_ += end - begin - length;
      stream.last_end = end;
      stream.ran = true;
    }
    host_busy_ += host_ - host_start;
    busy_us += task.gpu_us;
    if (host_ > host_start) span(task.name, "launch", Lane::host, host_start, host_);
    span(task.name, category, lane, start, stream.last_end);
    return stream.last_end;
  }

  // An all-reduce's kernel of `ctas` CTAs runs over [start, end) (the NCCL stream runs one at a
  // time, so these intervals come in order and do not overlap).
  void occupy(TimePs start, TimePs end, int ctas) {
    if (ctas > 0 && end > start) busy_.push_back({start, end, ctas});
  }

  // When a kernel of `length` alone, begun at `begin`, ends: beside an all-reduce of c CTAs it
  // progresses at 1 / overlap.factor(c).
  TimePs stretched(TimePs begin, TimePs length, bool memory_bound) {
    double t = static_cast<double>(begin);
    double left = static_cast<double>(length);
    while (cursor_ < busy_.size() && busy_[cursor_].end <= begin) ++cursor_;
    for (std::size_t i = cursor_; i < busy_.size() && left > 0; ++i) {
      const Busy& b = busy_[i];
      const double a = static_cast<double>(b.start);
      const double z = static_cast<double>(b.end);
      if (z <= t) continue;
      if (a > t) {
        if (left <= a - t) break;
        left -= a - t;
        t = a;
      }
      const double rate = 1.0 / overlap_.factor(b.ctas, memory_bound);
      if (left <= (z - t) * rate) return static_cast<TimePs>(std::llround(t + left / rate));
      left -= (z - t) * rate;
      t = z;
    }
    return static_cast<TimePs>(std::llround(t + left));
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
    const TimePs end = std::max({host_, compute_.last_end, nccl_.last_end});
    // Past the last compute kernel: an all-reduce still running is exposed communication (the
    // step waits for it), and a host still launching beyond that is host-bound.
    const TimePs nccl_tail = std::max<TimePs>(0, nccl_.last_end - compute_.last_end);
    exposed_ += nccl_tail;
    host_idle_ += end - compute_.last_end - nccl_tail;
    b.step_us = us_of(end);
    b.exposed_communication_us = us_of(exposed_);
    b.host_bound_idle_us = us_of(host_idle_);
    b.host_busy_us = us_of(host_busy_);
    b.kernel_gaps_us = us_of(gaps_);
    b.overlap_slowdown_us = us_of(slowdown_);
  }

 private:
  void span(const std::string& name, const char* category, Lane lane, TimePs start, TimePs end) {
    result_.spans.push_back({name, category, lane, start, end});
  }

  StepResult& result_;
  struct StreamState {
    TimePs last_end = 0;  // end of the last kernel run on it
    bool ran = false;     // whether one has: the gap only separates queued kernels
  };
  TimePs host_ = 0;
  StreamState compute_, nccl_;
  TimePs gap_ = 0;
  OverlapSlowdown overlap_;
  TimePs exposed_ = 0, host_idle_ = 0, host_busy_ = 0, gaps_ = 0, slowdown_ = 0;
  struct Busy {
    TimePs start, end;
    int ctas;
  };
  std::vector<Busy> busy_;
  std::size_t cursor_ = 0;  // busy_ before it ended before the compute stream's time
};

}  // namespace

const char* to_string(Lane lane) {
  switch (lane) {
    case Lane::host:
      return "host";
    case Lane::compute:
      return "compute";
    case Lane::nccl:
      return "nccl";
  }
  return "?";
}

StepResult simulate_step(const StepPlan& plan) {
  StepResult result;
  StepBreakdown& b = result.breakdown;
  Timeline t(result, ps_of_us(plan.kernel_gap_us), plan.overlap);
  const double launch_us =
      plan.layers.empty() ? 0.0 : plan.layers.front().forward.host_us_per_kernel;

  // The input batch: pinned memory is copied asynchronously on the compute stream; pageable
  // memory blocks the host until the driver has staged and copied it.
  if (plan.input_bytes > 0) {
    if (plan.input_pinned) {
      t.run(launch_of("input copy (pinned)", plan.input_copy_us, 1, launch_us), Lane::compute,
            "input", 0, b.input_copy_us);
    } else {
      t.run_blocking("input copy (pageable)", plan.input_copy_us, launch_us);
      b.input_copy_us += plan.input_copy_us;
    }
  }
  // DDP's buffer broadcast: after what the compute stream has queued, before forward.
  TimePs forward_after = 0;
  if (plan.broadcast) {
    const TimePs ready = t.compute();
    forward_after = t.run(launch_of("broadcast buffers", plan.broadcast_us, 1, launch_us),
                          Lane::nccl, "broadcast", ready, b.communication_us);
  }
  for (const LayerTasks& layer : plan.layers) {
    t.run(layer.forward, Lane::compute, "forward", forward_after, b.forward_us);
    if (layer.forward.kernels > 0 || layer.forward.gpu_us > 0) forward_after = 0;  // waited
  }

  // Backward in reverse; after each layer its gradients are ready. DDP copies each into its
  // bucket (on the compute stream, from the autograd hook) and launches a bucket's all-reduce on
  // the NCCL stream once all of its gradients are in and every earlier bucket has launched.
  const bool ddp = !plan.buckets.empty();
  std::vector<int> bucket_of(plan.grad_bytes.size(), -1);
  std::vector<int> missing(plan.buckets.size());
  for (std::size_t k = 0; k < plan.buckets.size(); ++k) {
    missing[k] = static_cast<int>(plan.buckets[k].params.size());
    for (int p : plan.buckets[k].params)
      bucket_of[static_cast<std::size_t>(p)] = static_cast<int>(k);
  }
  result.buckets.resize(plan.buckets.size());
  std::size_t next_bucket = 0;
  TimePs last_allreduce = 0;
  auto launch_ready_buckets = [&] {
    while (next_bucket < plan.buckets.size() && missing[next_bucket] == 0) {
      const Bucket& bucket = plan.buckets[next_bucket];
      BucketTiming& timing = result.buckets[next_bucket];
      timing.bytes = bucket.bytes;
      timing.tensors = static_cast<int>(bucket.params.size());
      const TimePs ready = t.compute();  // the event recorded on the compute stream
      const std::string name = "allreduce bucket " + std::to_string(next_bucket);
      const TimePs end =
          t.run(launch_of(name, plan.allreduce_us[next_bucket], 1, plan.ddp_host_us_per_kernel),
                Lane::nccl, "allreduce", ready, b.communication_us);
      const TimePs start = end - ps_of_us(plan.allreduce_us[next_bucket]);
      if (next_bucket < plan.allreduce_ctas.size()) {
        t.occupy(start, end, plan.allreduce_ctas[next_bucket]);
      }
      if (next_bucket < plan.allreduce_label.size())
        timing.label = plan.allreduce_label[next_bucket];
      timing.ready_us = us_of(ready);
      timing.end_us = us_of(end);
      timing.start_us = us_of(start);
      last_allreduce = std::max(last_allreduce, end);
      ++next_bucket;
    }
  };
  for (auto layer = plan.layers.rbegin(); layer != plan.layers.rend(); ++layer) {
    t.run(layer->backward, Lane::compute, "backward", 0, b.backward_us);
    if (!ddp) continue;
    for (auto p = layer->params.rbegin(); p != layer->params.rend(); ++p) {
      const auto i = static_cast<std::size_t>(*p);
      if (!plan.copy_in_us.empty()) {
        t.run(
            launch_of("copy grad into bucket", plan.copy_in_us[i], 1, plan.ddp_host_us_per_kernel),
            Lane::compute, "ddp_copy", 0, b.ddp_copies_us);
      }
      CS_ASSERT(bucket_of[i] >= 0, "a gradient without a bucket");
      --missing[static_cast<std::size_t>(bucket_of[i])];
    }
    launch_ready_buckets();
  }
  CS_ASSERT(next_bucket == plan.buckets.size(), "a bucket never launched");

  // End of backward: the compute stream waits for every all-reduce, then copies each averaged
  // bucket back into its gradient.
  TimePs after = last_allreduce;
  for (std::size_t i = 0; i < plan.copy_out_us.size(); ++i) {
    t.run(launch_of("copy bucket into grad", plan.copy_out_us[i], 1, plan.ddp_host_us_per_kernel),
          Lane::compute, "ddp_copy", after, b.ddp_copies_us);
    after = 0;
  }
  t.run(plan.optimizer, Lane::compute, "optimizer", after, b.optimizer_us);
  t.finish(b);
  return result;
}

}  // namespace cs::workload
