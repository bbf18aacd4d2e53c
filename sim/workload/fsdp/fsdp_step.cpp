// FSDP2's step in program order, as fully_shard's hooks issue it (workload/fsdp/README.md gives
// each rule's source in PyTorch).
#include "workload/fsdp/fsdp_step.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"

namespace cs::workload {
namespace {

Task copy_task(std::string name, double gpu_us, double host_us) {
  Task t;
  t.name = std::move(name);
  t.gpu_us = gpu_us;
  t.kernels = 1;
  t.host_us_per_kernel = host_us;
  t.memory_bound_default = true;
  return t;
}

// Issues the step's nodes; one per call of the program's parts, in program order.
class FsdpProgram {
 public:
  FsdpProgram(const StepPlan& plan, const FsdpPlan& fsdp, FsdpStepGraph& out)
      : plan_(plan), fsdp_(fsdp), out_(out), g_(out.graph) {
    compute_ = g_.add_stream("compute stream", StreamKind::compute);
    copy_in_ = g_.add_stream("all-gather copy-in stream", StreamKind::compute);
    all_gather_ = g_.add_stream("all-gather stream", StreamKind::communication);
    reduce_scatter_ = g_.add_stream("reduce-scatter stream", StreamKind::communication);
    if (fsdp.options.replicas > 1)
      all_reduce_ = g_.add_stream("all-reduce stream", StreamKind::communication);
    gathered_.assign(fsdp.units.size(), -1);
    reshard_event_.assign(fsdp.units.size(), -1);
  }

  void run() {
    for (int micro = 0; micro < plan_.micro_batches; ++micro) {
      input();
      forward();
      backward(micro);
    }
    // The final callback: the compute stream waits for the last reduce-scatter, then the
    // optimizer steps the local shard (1 / shard ranks of the elements, as many tensors).
    Task opt = plan_.optimizer;
    opt.gpu_us /= fsdp_.options.shard_ranks;
    opt.kernel_us.clear();
    std::vector<EventId> waits;
    if (last_reduce_ >= 0) waits.push_back(last_reduce_);
    if (last_all_reduce_ >= 0) waits.push_back(last_all_reduce_);
    g_.kernels(compute_, std::move(opt), "optimizer", waits);
  }

 private:
  void input() {
    const double launch_us =
        plan_.layers.empty() ? 0.0 : plan_.layers.front().forward.host_us_per_kernel;
    if (plan_.input_bytes <= 0) return;
    if (plan_.input_pinned) {
      Task t = copy_task("input copy (pinned)", plan_.input_copy_us, launch_us);
      g_.kernels(compute_, std::move(t), "input");
    } else {
      g_.blocking_copy(compute_, "input copy (pageable)", "input", plan_.input_copy_us, launch_us);
    }
  }

  // unshard(): the local shard copied into the all-gather's input on the copy-in stream, then
  // the all-gather on its stream; `after` is what the all-gather streams wait on first.
  void all_gather(int unit, const std::vector<EventId>& after) {
    const FsdpUnit& u = fsdp_.units[static_cast<std::size_t>(unit)];
    g_.kernels(copy_in_, copy_task("all-gather copy-in " + u.name, u.copy_in_us, host()),
               "fsdp_copy_in", after);
    out_.all_gathers.push_back(
        g_.collective(all_gather_, u.all_gather, host(), {g_.record(copy_in_)}));
    gathered_[static_cast<std::size_t>(unit)] = g_.record(all_gather_);
  }

  // wait_for_unshard(): the compute stream waits for the all-gather and copies its output into
  // the unsharded parameters. Returns the event after the copy.
  EventId copy_out(int unit) {
    const FsdpUnit& u = fsdp_.units[static_cast<std::size_t>(unit)];
    const EventId gathered = gathered_[static_cast<std::size_t>(unit)];
    CS_ASSERT(gathered >= 0, "a unit used before its all-gather");
    g_.kernels(compute_, copy_task("all-gather copy-out " + u.name, u.copy_out_us, host()),
               "fsdp_copy", {gathered});
    gathered_[static_cast<std::size_t>(unit)] = -1;
    return g_.record(compute_);
  }

  // Forward: the root's pre-forward makes the all-gather streams wait for the compute stream (the
  // last step's optimizer) and gathers the root; each unit's pre-forward issues its all-gather
  // (the host runs ahead, so it overlaps the unit before: implicit prefetch), and at most two
  // gathered outputs live: a unit's all-gather waits for the copy-out before the last one.
  void hooks(int unit, const char* which) {
    const FsdpUnit& u = fsdp_.units[static_cast<std::size_t>(unit)];
    g_.host_work(std::string("FSDP ") + which + " " + u.name, "fsdp_host",
                 u.tensors * fsdp_.hook_host_us_per_tensor / 2);
  }

  void forward() {
    hooks(0, "pre-forward");
    EventId gate = g_.record(compute_);
    all_gather(0, {gate});
    EventId previous = copy_out(0);
    gate = -1;
    int current = 0;  // the unit whose layers run, 0 in the root's
    for (std::size_t i = 0; i < plan_.layers.size(); ++i) {
      const int u = fsdp_.unit_of_layer[i];
      if (u != 0 && u != current) {  // the unit's pre-forward
        hooks(u, "pre-forward");
        std::vector<EventId> after;
        if (gate >= 0) after.push_back(gate);
        all_gather(u, after);
        const EventId copied = copy_out(u);
        gate = previous;
        previous = copied;
      }
      if (current != 0 && u != current) resharded_after(current);  // its post-forward
      current = u;
      g_.kernels_ref(compute_, plan_.layers[i].forward, "forward");
    }
    if (current != 0) resharded_after(current);
  }

  // A unit's post-forward reshard frees its parameters on the compute stream: gathering them
  // again (in backward) waits for that (FSDPParamGroup._reshard_after_forward_event).
  void resharded_after(int unit) {
    if (fsdp_.options.reshard_after_forward)
      reshard_event_[static_cast<std::size_t>(unit)] = g_.record(compute_);
  }

  // Backward, units in reverse: a resharded unit is gathered again in its pre-backward, which
  // also prefetches the next unit's all-gather; after its backward, its gradients are copied into
  // the reduce-scatter's input (once the previous reduce-scatter has ended) and reduce-scattered
  // on their stream. The root's gradients are reduced last.
  void backward(int micro) {
    micro_ = micro;
    const bool reshard = fsdp_.options.reshard_after_forward;
    std::vector<bool> resharded(fsdp_.units.size(), reshard);
    resharded[0] = false;
    int current = 0;
    for (std::size_t k = plan_.layers.size(); k-- > 0;) {
      const int u = fsdp_.unit_of_layer[k];
      if (current != 0 && u != current) post_backward(current);  // its backward has ended
      if (u != 0 && u != current) hooks(u, "pre-backward");
      if (u != 0 && u != current && resharded[static_cast<std::size_t>(u)]) {  // pre-backward
        if (gathered_[static_cast<std::size_t>(u)] < 0) regather(u);
        const int next = u - 1;
        if (next >= 1 && resharded[static_cast<std::size_t>(next)] &&
            gathered_[static_cast<std::size_t>(next)] < 0)
          regather(next);
        copy_out(u);
      }
      if (u != 0 && u != current && plan_.recompute) recompute(u);
      current = u;
      g_.kernels_ref(compute_, plan_.layers[k].backward, "backward");
    }
    if (current != 0) post_backward(current);
    hooks(0, "post-backward");
    post_backward(0);
  }

  // Activation checkpointing: the unit's forward again, its parameters gathered (the
  // checkpoint_wrapper sits inside fully_shard, so FSDP's hooks do not run again).
  void recompute(int unit) {
    for (int layer : fsdp_.units[static_cast<std::size_t>(unit)].layers) {
      if (plan_.recomputed[static_cast<std::size_t>(layer)] != 0)
        g_.kernels_ref(compute_, plan_.layers[static_cast<std::size_t>(layer)].forward,
                       "recompute");
    }
  }

  // After a unit's backward: its gradients kept (accumulated) unless this micro-batch
  // synchronises; then, in the last, reduce-scattered.
  void post_backward(int unit) {
    const FsdpUnit& u = fsdp_.units[static_cast<std::size_t>(unit)];
    const double us = micro_ == 0 ? u.accumulate_first_us : u.accumulate_us;
    if (keeps_unsharded() && us > 0) {
      Task t = copy_task("accumulate grads " + u.name, us, plan_.accumulate_host_us);
      t.kernels = u.tensors;
      g_.kernels(compute_, std::move(t), "grad_accum");
    }
    if (micro_ + 1 == plan_.micro_batches || plan_.sync_every_micro) {
      g_.host_work("FSDP post-backward reduce " + u.name, "fsdp_host",
                   u.tensors * fsdp_.sync_host_us_per_tensor);
      reduce_scatter(unit);
    }
  }

  void regather(int unit) {
    const EventId freed = reshard_event_[static_cast<std::size_t>(unit)];
    all_gather(unit, freed >= 0 ? std::vector<EventId>{freed} : std::vector<EventId>{});
  }

  void reduce_scatter(int unit) {
    const FsdpUnit& u = fsdp_.units[static_cast<std::size_t>(unit)];
    std::vector<EventId> waits;
    if (last_reduce_ >= 0) waits.push_back(last_reduce_);
    const double copy_us =
        keeps_unsharded() ? u.reduce_copy_in_accumulated_us : u.reduce_copy_in_us;
    g_.kernels(compute_, copy_task("reduce-scatter copy-in " + u.name, copy_us, host()),
               "fsdp_copy", waits);
    out_.reduce_scatters.push_back(
        g_.collective(reduce_scatter_, u.reduce_scatter, host(), {g_.record(compute_)}));
    last_reduce_ = g_.record(reduce_scatter_);
    // HSDP: the reduced shard all-reduced across the replicas (foreach_reduce's all_reduce on
    // FSDP's all-reduce stream, after the reduce-scatter's event).
    if (all_reduce_ >= 0) {
      out_.all_reduces.push_back(g_.collective(all_reduce_, u.all_reduce, host(), {last_reduce_}));
      last_all_reduce_ = g_.record(all_reduce_);
    }
  }

  double host() const { return fsdp_.copy_host_us; }
  // Accumulating without reducing: the unsharded gradients are kept between micro-batches.
  bool keeps_unsharded() const { return plan_.micro_batches > 1 && !plan_.sync_every_micro; }

  const StepPlan& plan_;
  const FsdpPlan& fsdp_;
  FsdpStepGraph& out_;
  StepGraph& g_;
  StreamId compute_ = -1, copy_in_ = -1, all_gather_ = -1, reduce_scatter_ = -1, all_reduce_ = -1;
  std::vector<EventId> gathered_;       // per unit: its pending all-gather's event, -1 for none
  std::vector<EventId> reshard_event_;  // per unit: after its post-forward reshard, -1 for none
  EventId last_reduce_ = -1;
  EventId last_all_reduce_ = -1;
  int micro_ = 0;  // the micro-batch whose backward is issued
};

}  // namespace

FsdpPlan plan_fsdp(const Model& model, const StepPlan& plan, const FsdpOptions& options,
                   const GpuCompute& compute, double host_index_us) {
  CS_ASSERT(options.shard_ranks >= 1, "FSDP over no ranks");
  CS_ASSERT(model.layers.size() == plan.layers.size(), "a plan of another model");
  FsdpPlan f;
  f.options = options;
  f.units.resize(model.blocks.size() + 1);
  f.units[0].name = "root";
  for (std::size_t b = 0; b < model.blocks.size(); ++b) f.units[b + 1].name = model.blocks[b].name;
  f.unit_of_layer.resize(model.layers.size());
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const int unit = model.layers[i].block + 1;
    f.unit_of_layer[i] = unit;
    FsdpUnit& u = f.units[static_cast<std::size_t>(unit)];
    u.layers.push_back(static_cast<int>(i));
    for (const TensorSpec& p : model.layers[i].params)
      u.elements += static_cast<double>(p.elements);
    u.tensors += static_cast<int>(model.layers[i].params.size());
  }
  const auto n = static_cast<double>(options.shard_ranks);
  for (FsdpUnit& u : f.units) {
    u.all_gather_bytes = u.elements * dtype_bytes(options.param_dtype);
    u.reduce_scatter_bytes = u.elements * dtype_bytes(options.reduce_dtype);
    u.all_gather.name = "all-gather " + u.name;
    u.all_gather.category = "allgather";
    u.reduce_scatter.name = "reduce-scatter " + u.name;
    u.reduce_scatter.category = "reducescatter";
    u.all_reduce.name = "all-reduce " + u.name;
    u.all_reduce.category = "allreduce";
    // Copy-in: the fp32 shard read, written in param_dtype. Copy-out: the gathered output read
    // and the parameters written, in param_dtype. The gradients (param_dtype) read and written
    // in reduce_dtype.
    u.copy_in_us = copy_kernel_us(u.elements / n * (4 + dtype_bytes(options.param_dtype)), compute);
    u.copy_out_us = copy_kernel_us(2 * u.all_gather_bytes, compute);
    u.reduce_copy_in_us = copy_kernel_us(
        u.elements * dtype_bytes(options.param_dtype) + u.reduce_scatter_bytes, compute);
    // Accumulation (FSDPParam.to_accumulated_grad_if_needed, accumulate_unsharded_grad_if_
    // needed): a kernel per tensor; the cast reads param_dtype and writes reduce_dtype, the add
    // reads both and writes reduce_dtype; the kept gradients read into the reduce-scatter.
    const double p = dtype_bytes(options.param_dtype);
    const double r = dtype_bytes(options.reduce_dtype);
    const double extra_kernels = std::max(0, u.tensors - 1) * kCopyKernelFixedUs;
    if (u.tensors > 0) {
      u.accumulate_first_us =
          p == r ? 0.0 : copy_kernel_us(u.elements * (p + r), compute) + extra_kernels;
      u.accumulate_us = copy_kernel_us(u.elements * (p + 2 * r), compute) + extra_kernels;
    }
    u.reduce_copy_in_accumulated_us =
        copy_kernel_us(u.elements * r + u.reduce_scatter_bytes, compute);
  }
  f.copy_host_us = 0;  // in hook_host_us_per_tensor
  const double per_tensor = kFsdpHostUsPerTensor * host_index_us / kFsdpHostProbeIndexUs;
  f.hook_host_us_per_tensor = per_tensor * (1 - kFsdpHostSyncShare);
  f.sync_host_us_per_tensor = per_tensor * kFsdpHostSyncShare;
  return f;
}

FsdpStepGraph fsdp_step_graph(const StepPlan& plan, const FsdpPlan& fsdp) {
  FsdpStepGraph out;
  CS_ASSERT(plan.micro_batches >= 1, "a step of no micro-batch");
  out.graph.reserve(static_cast<std::size_t>(plan.micro_batches) *
                        (3 * plan.layers.size() + 8 * fsdp.units.size()) +
                    4);
  FsdpProgram(plan, fsdp, out).run();
  return out;
}

StepResult simulate_fsdp_step(const StepPlan& plan, const FsdpPlan& fsdp) {
  const FsdpStepGraph graph = fsdp_step_graph(plan, fsdp);
  Execution x = execute(graph.graph, plan.kernel_gap_us, plan.overlap);
  StepResult result;
  result.breakdown = breakdown_of(x, "fsdp_copy");
  result.lanes = std::move(x.lanes);
  result.spans = std::move(x.spans);
  return result;
}

}  // namespace cs::workload
