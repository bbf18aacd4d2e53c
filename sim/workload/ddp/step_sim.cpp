// DDP's step in program order: input copy, the buffers' broadcast, forward, backward with DDP's
// copies and bucket all-reduces, DDP's wait and copies back, optimizer.
#include "workload/ddp/step_sim.hpp"

#include <string>
#include <utility>

#include "core/error.hpp"

namespace cs::workload {
namespace {

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

bool has_kernels(const Task& t) {
  return t.kernels > 0 || t.gpu_us > 0;
}

}  // namespace

DdpStepGraph ddp_step_graph(const StepPlan& plan) {
  DdpStepGraph out;
  StepGraph& g = out.graph;
  g.reserve(4 * plan.layers.size() + 3 * plan.grad_bytes.size() + 2 * plan.buckets.size() + 8);
  const StreamId compute = g.add_stream("compute stream", StreamKind::compute);
  const StreamId nccl = g.add_stream("NCCL stream", StreamKind::communication);
  const double launch_us =
      plan.layers.empty() ? 0.0 : plan.layers.front().forward.host_us_per_kernel;

  // The input batch: pinned memory is copied asynchronously on the compute stream; pageable
  // memory blocks the host until the driver has staged and copied it.
  if (plan.input_bytes > 0) {
    if (plan.input_pinned) {
      g.kernels(compute, launch_of("input copy (pinned)", plan.input_copy_us, 1, launch_us),
                "input");
    } else {
      g.blocking_copy(compute, "input copy (pageable)", "input", plan.input_copy_us, launch_us);
    }
  }
  // DDP's buffer broadcast: after what the compute stream has queued, before forward.
  std::vector<EventId> forward_waits;
  if (plan.broadcast) {
    CollectiveKernel k;
    k.name = "broadcast buffers";
    k.category = "broadcast";
    k.alone_us = plan.broadcast_us;
    g.collective(nccl, std::move(k), launch_us, {g.record(compute)});
    forward_waits = {g.record(nccl)};
  }
  for (const LayerTasks& layer : plan.layers) {
    if (!has_kernels(layer.forward)) continue;
    g.kernels_ref(compute, layer.forward, "forward", std::exchange(forward_waits, {}));
  }
  // find_unused_parameters: DDP walks the autograd graph from the outputs before backward.
  g.host_work("find unused parameters (graph walk)", "ddp_host", plan.unused_walk_host_us);

  // Backward in reverse; after each layer its gradients are ready. DDP copies each into its
  // bucket (on the compute stream, from the autograd hook) and launches a bucket's all-reduce on
  // the NCCL stream once all of its gradients are in and every earlier bucket has launched; the
  // all-reduce waits for an event recorded on the compute stream after the copies.
  const bool ddp = !plan.buckets.empty();
  std::vector<int> bucket_of(plan.grad_bytes.size(), -1);
  std::vector<int> missing(plan.buckets.size());
  for (std::size_t k = 0; k < plan.buckets.size(); ++k) {
    missing[k] = static_cast<int>(plan.buckets[k].params.size());
    for (int p : plan.buckets[k].params)
      bucket_of[static_cast<std::size_t>(p)] = static_cast<int>(k);
  }
  std::size_t next_bucket = 0;
  auto launch_ready_buckets = [&] {
    while (next_bucket < plan.buckets.size() && missing[next_bucket] == 0) {
      CollectiveKernel k;
      k.name = "allreduce bucket " + std::to_string(next_bucket);
      k.alone_us = plan.allreduce_us[next_bucket];
      if (next_bucket < plan.allreduce_ctas.size()) k.ctas = plan.allreduce_ctas[next_bucket];
      if (next_bucket < plan.allreduce_rate_gbps.size())
        k.rate_gbps = plan.allreduce_rate_gbps[next_bucket];
      out.bucket_nodes.push_back(
          g.collective(nccl, std::move(k), plan.ddp_host_us_per_kernel, {g.record(compute)}));
      ++next_bucket;
      // After the last bucket, find_unused_parameters all-reduces which parameters were used.
      if (next_bucket == plan.buckets.size() && plan.used_map_bytes > 0) {
        CollectiveKernel used;
        used.name = "allreduce used-parameter map";
        used.alone_us = plan.used_map_allreduce_us;
        g.collective(nccl, std::move(used), plan.ddp_host_us_per_kernel, {g.record(compute)});
      }
    }
  };
  for (auto layer = plan.layers.rbegin(); layer != plan.layers.rend(); ++layer) {
    g.kernels_ref(compute, layer->backward, "backward");
    if (!ddp) continue;
    for (auto p = layer->params.rbegin(); p != layer->params.rend(); ++p) {
      const auto i = static_cast<std::size_t>(*p);
      g.host_work("find unused parameters (hook)", "ddp_host", plan.unused_hook_host_us);
      if (!plan.copy_in_us.empty()) {
        g.kernels(
            compute,
            launch_of("copy grad into bucket", plan.copy_in_us[i], 1, plan.ddp_host_us_per_kernel),
            "ddp_copy");
      }
      CS_ASSERT(bucket_of[i] >= 0, "a gradient without a bucket");
      --missing[static_cast<std::size_t>(bucket_of[i])];
    }
    launch_ready_buckets();
  }
  CS_ASSERT(next_bucket == plan.buckets.size(), "a bucket never launched");

  // End of backward: the compute stream waits for every all-reduce, then copies each averaged
  // bucket back into its gradient.
  std::vector<EventId> after;
  if (ddp) after = {g.record(nccl)};
  for (std::size_t i = 0; i < plan.copy_out_us.size(); ++i) {
    g.kernels(
        compute,
        launch_of("copy bucket into grad", plan.copy_out_us[i], 1, plan.ddp_host_us_per_kernel),
        "ddp_copy", std::exchange(after, {}));
  }
  g.kernels_ref(compute, plan.optimizer, "optimizer", after);
  return out;
}

StepBreakdown breakdown_of(const Execution& x, const std::string& copies) {
  StepBreakdown b;
  b.step_us = x.step_us;
  b.input_copy_us = x.gpu_us_of("input");
  b.forward_us = x.gpu_us_of("forward");
  b.backward_us = x.gpu_us_of("backward");
  b.ddp_copies_us = x.gpu_us_of(copies);
  b.optimizer_us = x.gpu_us_of("optimizer");
  b.communication_us = x.communication_us;
  b.communication_slowdown_us = x.communication_slowdown_us;
  b.exposed_communication_us = x.exposed_communication_us;
  b.host_bound_idle_us = x.host_bound_idle_us;
  b.host_busy_us = x.host_busy_us;
  b.kernel_gaps_us = x.kernel_gaps_us;
  b.overlap_slowdown_us = x.overlap_slowdown_us;
  return b;
}

StepResult simulate_step(const StepPlan& plan) {
  const DdpStepGraph graph = ddp_step_graph(plan);
  Execution x = execute(graph.graph, plan.kernel_gap_us, plan.overlap);
  StepResult result;
  result.breakdown = breakdown_of(x, "ddp_copy");
  for (std::size_t k = 0; k < graph.bucket_nodes.size(); ++k) {
    const Execution::NodeTime& at = x.nodes[static_cast<std::size_t>(graph.bucket_nodes[k])];
    BucketTiming t;
    t.bytes = plan.buckets[k].bytes;
    t.tensors = static_cast<int>(plan.buckets[k].params.size());
    if (k < plan.allreduce_label.size()) t.label = plan.allreduce_label[k];
    t.alone_us = plan.allreduce_us[k];
    t.ready_us = us_from_ps(at.ready);
    t.start_us = us_from_ps(at.start);
    t.end_us = us_from_ps(at.end);
    result.buckets.push_back(std::move(t));
  }
  result.lanes = std::move(x.lanes);
  result.spans = std::move(x.spans);
  return result;
}

}  // namespace cs::workload
