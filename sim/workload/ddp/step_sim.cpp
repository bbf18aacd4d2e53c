// The step in program order: input copy, forward, backward with DDP's copies and bucket
// all-reduces, DDP's wait and copies back, optimizer.
#include "workload/ddp/step_sim.hpp"

#include <string>
#include <utility>

#include "core/error.hpp"
#include "workload/ddp/stream_timeline.hpp"

namespace cs::workload {
namespace {

using timeline::NcclKernel;
using timeline::ps_of_us;
using timeline::Timeline;
using timeline::us_of;

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
      t.run(launch_of("input copy (pinned)", plan.input_copy_us, 1, launch_us), "input", 0,
            b.input_copy_us);
    } else {
      t.run_blocking("input copy (pageable)", plan.input_copy_us, launch_us);
      b.input_copy_us += plan.input_copy_us;
    }
  }
  // DDP's buffer broadcast: after what the compute stream has queued, before forward.
  TimePs forward_after = 0;
  if (plan.broadcast) {
    NcclKernel k;
    k.name = "broadcast buffers";
    k.category = "broadcast";
    k.length = ps_of_us(plan.broadcast_us);
    t.launch_nccl(std::move(k), t.compute(), launch_us);
    forward_after = t.drain_nccl();
  }
  for (const LayerTasks& layer : plan.layers) {
    t.run(layer.forward, "forward", forward_after, b.forward_us);
    if (layer.forward.kernels > 0 || layer.forward.gpu_us > 0) forward_after = 0;  // waited
  }
  // find_unused_parameters: DDP walks the autograd graph from the outputs before backward.
  t.host_work("find unused parameters (graph walk)", plan.unused_walk_host_us);

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
  auto launch_ready_buckets = [&] {
    while (next_bucket < plan.buckets.size() && missing[next_bucket] == 0) {
      const Bucket& bucket = plan.buckets[next_bucket];
      BucketTiming& timing = result.buckets[next_bucket];
      timing.bytes = bucket.bytes;
      timing.tensors = static_cast<int>(bucket.params.size());
      timing.ready_us = us_of(t.compute());  // the event recorded on the compute stream
      timing.alone_us = plan.allreduce_us[next_bucket];
      if (next_bucket < plan.allreduce_label.size())
        timing.label = plan.allreduce_label[next_bucket];
      NcclKernel k;
      k.name = "allreduce bucket " + std::to_string(next_bucket);
      k.length = ps_of_us(plan.allreduce_us[next_bucket]);
      if (next_bucket < plan.allreduce_ctas.size()) k.ctas = plan.allreduce_ctas[next_bucket];
      if (next_bucket < plan.allreduce_rate_gbps.size())
        k.rate_gbps = plan.allreduce_rate_gbps[next_bucket];
      k.bucket = static_cast<int>(next_bucket);
      t.launch_nccl(std::move(k), t.compute(), plan.ddp_host_us_per_kernel);
      ++next_bucket;
      // After the last bucket, find_unused_parameters all-reduces which parameters were used.
      if (next_bucket == plan.buckets.size() && plan.used_map_bytes > 0) {
        NcclKernel used;
        used.name = "allreduce used-parameter map";
        used.length = ps_of_us(plan.used_map_allreduce_us);
        t.launch_nccl(std::move(used), t.compute(), plan.ddp_host_us_per_kernel);
      }
    }
  };
  for (auto layer = plan.layers.rbegin(); layer != plan.layers.rend(); ++layer) {
    t.run(layer->backward, "backward", 0, b.backward_us);
    if (!ddp) continue;
    for (auto p = layer->params.rbegin(); p != layer->params.rend(); ++p) {
      const auto i = static_cast<std::size_t>(*p);
      t.host_work("find unused parameters (hook)", plan.unused_hook_host_us);
      if (!plan.copy_in_us.empty()) {
        t.run(
            launch_of("copy grad into bucket", plan.copy_in_us[i], 1, plan.ddp_host_us_per_kernel),
            "ddp_copy", 0, b.ddp_copies_us);
      }
      CS_ASSERT(bucket_of[i] >= 0, "a gradient without a bucket");
      --missing[static_cast<std::size_t>(bucket_of[i])];
    }
    launch_ready_buckets();
  }
  CS_ASSERT(next_bucket == plan.buckets.size(), "a bucket never launched");

  // End of backward: the compute stream waits for every all-reduce, then copies each averaged
  // bucket back into its gradient.
  TimePs after = ddp ? t.drain_nccl() : 0;
  for (std::size_t i = 0; i < plan.copy_out_us.size(); ++i) {
    t.run(launch_of("copy bucket into grad", plan.copy_out_us[i], 1, plan.ddp_host_us_per_kernel),
          "ddp_copy", after, b.ddp_copies_us);
    after = 0;
  }
  t.run(plan.optimizer, "optimizer", after, b.optimizer_us);
  t.finish(b);
  return result;
}

}  // namespace cs::workload
