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

// Issues DDP's step: per micro-batch the input, the buffers' broadcast, forward and backward;
// in the last, DDP's copies and bucket all-reduces; then the optimizer.
class DdpProgram {
 public:
  DdpProgram(const StepPlan& plan, DdpStepGraph& out) : plan_(plan), out_(out), g_(out.graph) {
    g_.reserve(plan.micro_batches * (4 * plan.layers.size() + 2 * plan.grad_bytes.size()) +
               3 * plan.grad_bytes.size() + 2 * plan.buckets.size() + 8);
    compute_ = g_.add_stream("compute stream", StreamKind::compute);
    nccl_ = g_.add_stream("NCCL stream", StreamKind::communication);
    if (!plan.layer_collectives.empty())
      in_layer_ = g_.add_stream("tensor-parallel stream", StreamKind::communication);
    launch_us_ = plan.layers.empty() ? 0.0 : plan.layers.front().forward.host_us_per_kernel;
  }

  void run() {
    const GradScalerTasks& scaler = plan_.grad_scaler;
    for (int micro = 0; micro < plan_.micro_batches; ++micro) {
      input();
      forward();
      if (micro == 0) out_.forward_last = g_.nodes().empty() ? -1 : last_node();
      if (scaler.enabled) g_.kernels_ref(compute_, scaler.scale, "optimizer");
      backward(micro);
      if (micro == 0) out_.backward_last = g_.nodes().empty() ? -1 : last_node();
      if (synchronised(micro) && !plan_.buckets.empty()) copy_back();
    }
    // GradScaler's step: unscale and check the gradients, then the host waits for found_inf.
    if (scaler.enabled) {
      g_.kernels_ref(compute_, scaler.unscale, "optimizer", std::exchange(pending_, {}));
      g_.blocking_copy(compute_, "GradScaler found_inf.item()", "optimizer", scaler.item_us,
                       scaler.item_host_us);
    }
    g_.kernels_ref(compute_, plan_.optimizer, "optimizer", std::exchange(pending_, {}));
    if (scaler.enabled) g_.kernels_ref(compute_, scaler.update, "optimizer");
  }

 private:
  // The input batch: pinned memory is copied asynchronously on the compute stream; pageable
  // memory blocks the host until the driver has staged and copied it.
  bool synchronised(int micro) const {
    return micro + 1 == plan_.micro_batches || plan_.sync_every_micro;
  }

  // End of a synchronised backward (DDP's finalize): the compute stream waits for every
  // all-reduce, then copies each averaged bucket back into its gradient. Without copies the wait
  // goes to the next kernel.
  void copy_back() {
    pending_ = {g_.record(nccl_)};
    for (std::size_t i = 0; i < plan_.copy_out_us.size(); ++i) {
      g_.kernels(
          compute_,
          launch_of("copy bucket into grad", plan_.copy_out_us[i], 1, plan_.ddp_host_us_per_kernel),
          "ddp_copy", std::exchange(pending_, {}));
    }
  }

  void input() {
    if (plan_.input_bytes <= 0) return;
    if (plan_.input_pinned) {
      g_.kernels(compute_, launch_of("input copy (pinned)", plan_.input_copy_us, 1, launch_us_),
                 "input", std::exchange(pending_, {}));
    } else {
      g_.blocking_copy(compute_, "input copy (pageable)", "input", plan_.input_copy_us, launch_us_);
    }
  }

  // DDP's buffer broadcast (every forward, no_sync or not): after what the compute stream has
  // queued, before forward.
  void forward() {
    std::vector<EventId> waits = std::exchange(pending_, {});
    if (plan_.broadcast) {
      CollectiveKernel k;
      k.name = "broadcast buffers";
      k.category = "broadcast";
      k.alone_us = plan_.broadcast_us;
      std::vector<EventId> before = std::move(waits);
      before.push_back(g_.record(compute_));
      g_.collective(nccl_, std::move(k), launch_us_, before);
      waits = {g_.record(nccl_)};
    }
    for (std::size_t i = 0; i < plan_.layers.size(); ++i) {
      const LayerTasks& layer = plan_.layers[i];
      in_layer(i, &LayerCollectives::forward_before, waits);
      if (has_kernels(layer.forward))
        g_.kernels_ref(compute_, layer.forward, "forward", std::exchange(waits, {}));
      in_layer(i, &LayerCollectives::forward_after, waits);
    }
    pending_ = std::move(waits);
  }

  // The collectives around layer `i` (LayerCollectives's `which`), on the in-layer stream after
  // the compute stream's work so far and `waits`; `waits` becomes the event after them.
  void in_layer(std::size_t i, std::vector<CollectiveKernel> LayerCollectives::*which,
                std::vector<EventId>& waits) {
    if (plan_.layer_collectives.empty()) return;
    const LayerCollectives& around = plan_.layer_collectives[i];
    if (which == &LayerCollectives::forward_before && around.forward_host_us > 0)
      g_.host_work("DTensor dispatch (forward)", "tp_host", around.forward_host_us);
    if (which == &LayerCollectives::backward_before && around.backward_host_us > 0)
      g_.host_work("DTensor dispatch (backward)", "tp_host", around.backward_host_us);
    const std::vector<CollectiveKernel>& list = around.*which;
    if (list.empty()) return;
    std::vector<EventId> before = std::exchange(waits, {});
    before.push_back(g_.record(compute_));
    for (const CollectiveKernel& k : list)
      g_.collective(in_layer_, k, plan_.layer_collective_host_us, std::exchange(before, {}));
    waits.push_back(g_.record(in_layer_));
  }

  NodeId last_node() const { return static_cast<NodeId>(g_.nodes().size()) - 1; }

  // Activation checkpointing: entering block b's backward, its forward runs again (the first
  // saved tensor unpacked in it recomputes the block, non-reentrant checkpoint).
  void recompute(int block) {
    for (std::size_t i = 0; i < plan_.layers.size(); ++i) {
      if (plan_.layer_block[i] != block || plan_.recomputed[i] == 0) continue;
      in_layer(i, &LayerCollectives::forward_before, pending_);
      if (has_kernels(plan_.layers[i].forward))
        g_.kernels_ref(compute_, plan_.layers[i].forward, "recompute", std::exchange(pending_, {}));
      in_layer(i, &LayerCollectives::forward_after, pending_);
    }
  }

  // Backward in reverse; after each layer its gradients are ready (from the second micro-batch,
  // added into the kept ones). In the last micro-batch DDP copies each into its bucket (on the
  // compute stream, from the autograd hook) and launches a bucket's all-reduce on the NCCL
  // stream once all of its gradients are in and every earlier bucket has launched; the
  // all-reduce waits for an event recorded on the compute stream after the copies.
  void backward(int micro) {
    const bool sync = synchronised(micro);
    const bool ddp = sync && !plan_.buckets.empty();
    // find_unused_parameters: DDP walks the autograd graph from the outputs before backward
    // (prepare_for_backward, only when gradients are synchronised).
    if (sync) {
      g_.host_work("find unused parameters (graph walk)", "ddp_host", plan_.unused_walk_host_us);
    }
    if (ddp) start_buckets();
    int block = -1;
    for (std::size_t k = plan_.layers.size(); k-- > 0;) {
      const LayerTasks& layer = plan_.layers[k];
      if (plan_.recompute) {
        if (plan_.layer_block[k] >= 0 && plan_.layer_block[k] != block)
          recompute(plan_.layer_block[k]);
        block = plan_.layer_block[k];
      }
      in_layer(k, &LayerCollectives::backward_before, pending_);
      g_.kernels_ref(compute_, layer.backward, "backward", std::exchange(pending_, {}));
      in_layer(k, &LayerCollectives::backward_after, pending_);
      for (auto p = layer.params.rbegin(); p != layer.params.rend(); ++p) {
        const auto i = static_cast<std::size_t>(*p);
        if (micro > 0) {
          g_.kernels(
              compute_,
              launch_of("accumulate grad", plan_.accumulate_us[i], 1, plan_.accumulate_host_us),
              "grad_accum");
        }
        if (ddp) gradient_ready(i);
      }
      if (ddp) launch_ready_buckets();
    }
    if (ddp) CS_ASSERT(next_bucket_ == plan_.buckets.size(), "a bucket never launched");
  }

  void start_buckets() {
    bucket_of_.assign(plan_.grad_bytes.size(), -1);
    missing_.resize(plan_.buckets.size());
    for (std::size_t k = 0; k < plan_.buckets.size(); ++k) {
      missing_[k] = static_cast<int>(plan_.buckets[k].params.size());
      for (int p : plan_.buckets[k].params)
        bucket_of_[static_cast<std::size_t>(p)] = static_cast<int>(k);
    }
    next_bucket_ = 0;
  }

  void gradient_ready(std::size_t i) {
    g_.host_work("find unused parameters (hook)", "ddp_host", plan_.unused_hook_host_us);
    if (!plan_.copy_in_us.empty()) {
      g_.kernels(
          compute_,
          launch_of("copy grad into bucket", plan_.copy_in_us[i], 1, plan_.ddp_host_us_per_kernel),
          "ddp_copy");
    }
    CS_ASSERT(bucket_of_[i] >= 0, "a gradient without a bucket");
    --missing_[static_cast<std::size_t>(bucket_of_[i])];
  }

  void launch_ready_buckets() {
    while (next_bucket_ < plan_.buckets.size() && missing_[next_bucket_] == 0) {
      CollectiveKernel k;
      k.name = "allreduce bucket " + std::to_string(next_bucket_);
      k.alone_us = plan_.allreduce_us[next_bucket_];
      if (next_bucket_ < plan_.allreduce_ctas.size()) k.ctas = plan_.allreduce_ctas[next_bucket_];
      if (next_bucket_ < plan_.allreduce_rate_gbps.size())
        k.rate_gbps = plan_.allreduce_rate_gbps[next_bucket_];
      out_.bucket_nodes.push_back(
          g_.collective(nccl_, std::move(k), plan_.ddp_host_us_per_kernel, {g_.record(compute_)}));
      ++next_bucket_;
      // After the last bucket, find_unused_parameters all-reduces which parameters were used.
      if (next_bucket_ == plan_.buckets.size() && plan_.used_map_bytes > 0) {
        CollectiveKernel used;
        used.name = "allreduce used-parameter map";
        used.alone_us = plan_.used_map_allreduce_us;
        g_.collective(nccl_, std::move(used), plan_.ddp_host_us_per_kernel, {g_.record(compute_)});
      }
    }
  }

  const StepPlan& plan_;
  DdpStepGraph& out_;
  StepGraph& g_;
  StreamId compute_ = -1, nccl_ = -1, in_layer_ = -1;
  double launch_us_ = 0;
  std::vector<int> bucket_of_, missing_;
  std::vector<EventId> pending_;  // the next compute kernel waits for these
  std::size_t next_bucket_ = 0;
};

}  // namespace

DdpStepGraph ddp_step_graph(const StepPlan& plan) {
  CS_ASSERT(plan.micro_batches >= 1, "a step of no micro-batch");
  CS_ASSERT(!plan.recompute || (plan.layer_block.size() == plan.layers.size() &&
                                plan.recomputed.size() == plan.layers.size()),
            "activation checkpointing without the layers' blocks");
  DdpStepGraph out;
  DdpProgram(plan, out).run();
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
  b.recompute_us = x.gpu_us_of("recompute");
  b.grad_accumulate_us = x.gpu_us_of("grad_accum");
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
