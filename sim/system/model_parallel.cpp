// Tensor, sequence and pipeline parallelism on a set of ranks: placement, per-stage plans with the
// TP group's collectives, the pipeline's task graph and the data-parallel all-reduce.
#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

#include "core/error.hpp"
#include "system/ddp_step.hpp"
#include "system/model_parallel.hpp"
#include "workload/parallel/pipeline.hpp"
#include "workload/parallel/tensor_parallel.hpp"

namespace cs::system {
namespace {

// Host time to launch one NCCL call from PyTorch when the node's probe did not time one: the
// median `nccl` class of the host probes in the shipped model files' measurements (14.1-27.3 us,
// ten probes; calibrate/host/host_probe.py times torch.distributed.all_reduce of one element).
constexpr double kNcclLaunchHostUs = 25.1;

int server_of(const topo::Cluster& cluster, int rank) {
  return cluster.nodes[static_cast<std::size_t>(cluster.ranks[static_cast<std::size_t>(rank)])]
      .server;
}

std::vector<std::string> split_order(const std::string& order) {
  std::vector<std::string> out;
  std::stringstream in(order);
  for (std::string part; std::getline(in, part, ',');) out.push_back(part);
  return out;
}

// The group of `ranks` (indices into `job`) as the job's rank numbers.
std::vector<int> ranks_of(const std::vector<int>& job, const std::vector<int>& indices) {
  std::vector<int> out;
  out.reserve(indices.size());
  for (int i : indices) out.push_back(job[static_cast<std::size_t>(i)]);
  return out;
}

coll::NcclParams priors_for(const topo::Cluster& cluster, const std::vector<int>& group) {
  return coll::nccl_priors(coll::comm_arch(cluster, group));
}

// The TP group's collectives, each distinct (op, bytes) timed once, alone on the group's links.
void time_tp(workload::TensorParallel& tp, CollectiveTimer& timer) {
  std::map<std::pair<int, double>, CollectiveTime> done;
  for (workload::TpCollective& c : tp.collectives) {
    const auto key = std::make_pair(static_cast<int>(c.op), c.bytes);
    auto it = done.find(key);
    if (it == done.end()) {
      const coll::Op op = c.op == workload::TpOp::all_reduce   ? coll::Op::all_reduce
                          : c.op == workload::TpOp::all_gather ? coll::Op::all_gather
                                                               : coll::Op::reduce_scatter;
      it = done.emplace(key, timer.time(op, {c.bytes}).front()).first;
    }
    c.kernel.alone_us = it->second.alone_us;
    c.kernel.ctas = it->second.ctas;
    c.kernel.rate_gbps = it->second.rate_gbps;
  }
}

// Megatron-LM's mixed precision (its Float16Module, and its DistributedDataParallel with fp32
// gradient accumulation and all-reduce): bf16 parameters, fp32 main gradients in one contiguous
// buffer that the all-reduce works on in place (no bucket copy), and an fp32 master copy of the
// parameters in the optimizer beside its states. Per parameter 2 + 4 + 4 + the states, against
// PyTorch AMP's fp32 4 + 4 + the states + DDP's bucket copy 4 (Megatron-LM's
// megatron/model/module.py, megatron/optimizer/optimizer.py).
void megatron_precision(workload::MemoryEstimate& m) {
  const double n = m.params / 4;  // the planned parameters are fp32
  const double before = m.params + m.grads + m.optimizer_state + m.ddp_buckets;
  m.params = 2 * n;
  m.grads = 4 * n;
  m.optimizer_state += 4 * n;
  m.ddp_buckets = 0;
  const double delta = m.params + m.grads + m.optimizer_state - before;
  m.peak_backward += delta;
  m.peak_optimizer += delta;
  m.total = std::max(m.peak_backward, m.peak_optimizer) + m.outside;
}

// Layers [first, end)'s collectives as the step plan holds them.
// `host_scale`: DTensor's fitted host costs carried to the step's host.
std::vector<workload::LayerCollectives> layer_collectives(const workload::TensorParallel& tp,
                                                          int first, int end, double host_scale) {
  std::vector<workload::LayerCollectives> out;
  if (tp.tp <= 1) return out;
  const auto kernels = [&tp](const std::vector<int>& ids) {
    std::vector<workload::CollectiveKernel> k;
    k.reserve(ids.size());
    for (int id : ids) k.push_back(tp.collectives[static_cast<std::size_t>(id)].kernel);
    return k;
  };
  for (int i = first; i < end; ++i) {
    const workload::TpLayerCollectives& l = tp.layers[static_cast<std::size_t>(i)];
    const auto k = static_cast<std::size_t>(i);
    out.push_back({kernels(l.forward_before), kernels(l.forward_after), kernels(l.backward_before),
                   kernels(l.backward_after), tp.forward_host_us[k] * host_scale,
                   tp.backward_host_us[k] * host_scale});
  }
  return out;
}

}  // namespace

ParallelGroups place_ranks(const topo::Cluster& cluster, const std::vector<int>& ranks,
                           const workload::ModelParallelOptions& options) {
  ParallelGroups g;
  g.tp = options.tp;
  g.pp = options.pp;
  const auto n = static_cast<int>(ranks.size());
  if (g.tp < 1 || g.pp < 1 || n % (g.tp * g.pp) != 0) {
    throw InputError("flag '--tp': --tp " + std::to_string(g.tp) + " x --pp " +
                     std::to_string(g.pp) + " = " + std::to_string(g.tp * g.pp) +
                     " GPUs per model replica do not divide the " + std::to_string(n) + " ranks");
  }
  g.dp = n / (g.tp * g.pp);
  std::vector<std::string> order = split_order(options.order);
  std::vector<std::string> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != std::vector<std::string>{"dp", "pp", "tp"}) {
    throw InputError("flag '--order': '" + options.order +
                     "' is not an order of tp, dp and pp (innermost first, e.g. tp,dp,pp)");
  }
  const auto size = [&g](const std::string& axis) {
    return axis == "tp" ? g.tp : axis == "dp" ? g.dp : g.pp;
  };
  // Rank index of coordinates (tp, dp, pp): the innermost axis varies fastest.
  const auto index = [&](int tp, int dp, int pp) {
    int at = 0, stride = 1;
    for (const std::string& axis : order) {
      at += stride * (axis == "tp" ? tp : axis == "dp" ? dp : pp);
      stride *= size(axis);
    }
    return at;
  };
  for (int i = 0; i < g.tp; ++i) g.tp_group.push_back(index(i, 0, 0));
  for (int i = 0; i < g.dp; ++i) g.dp_group.push_back(index(0, i, 0));
  for (int i = 0; i < g.pp; ++i) g.pipeline.push_back(index(0, 0, i));
  std::vector<int> servers;
  for (int i : g.tp_group)
    servers.push_back(server_of(cluster, ranks[static_cast<std::size_t>(i)]));
  std::sort(servers.begin(), servers.end());
  g.tp_servers = static_cast<int>(std::unique(servers.begin(), servers.end()) - servers.begin());
  return g;
}

void predict_model_parallel(const StepContext& c, DdpPrediction& p) {
  const workload::ModelParallelOptions& mp = c.options.parallel;
  ParallelPrediction out;
  out.groups = place_ranks(c.cluster, c.ranks, mp);
  const ParallelGroups& g = out.groups;
  out.schedule = mp.schedule;
  out.micro_batches = c.options.grad_accum;
  const int v = mp.pp > 1 ? mp.virtual_stages : 1;
  const int stages = mp.pp * v;
  const auto blocks = static_cast<int>(c.model.blocks.size());
  if (stages > 1 && blocks < stages) {
    throw InputError("flag '--pp': " + std::to_string(stages) + " pipeline stages need as many " +
                     "blocks; " + c.model.name + " has " + std::to_string(blocks));
  }
  if (!mp.blocks_per_stage.empty()) {
    int total = 0;
    for (int b : mp.blocks_per_stage) total += b;
    if (static_cast<int>(mp.blocks_per_stage.size()) != stages || total != blocks) {
      throw InputError("flag '--pp-blocks': " + std::to_string(mp.blocks_per_stage.size()) +
                       " stages of " + std::to_string(total) + " blocks; the model has " +
                       std::to_string(blocks) + " blocks over " + std::to_string(stages) +
                       " stages");
    }
  }
  // The TP split of the whole model (the roles of a tied head need the embedding), then cut.
  workload::TensorParallel tp =
      workload::plan_tensor_parallel(c.model, mp.tp, mp.sequence_parallel, c.options, mp.megatron);
  const std::vector<int> tp_ranks = ranks_of(c.ranks, g.tp_group);
  const std::vector<int> dp_ranks = ranks_of(c.ranks, g.dp_group);
  if (mp.tp > 1) {
    CollectiveTimer timer(c.graph, tp_ranks, priors_for(c.cluster, tp_ranks), c.nccl_options);
    time_tp(tp, timer);
  }
  for (const workload::TpLayerCollectives& l : tp.layers) {
    out.tp_collectives += static_cast<int>(l.forward_before.size() + l.forward_after.size() +
                                           l.backward_before.size() + l.backward_after.size());
  }
  const workload::Model sharded = workload::shard_model(c.model, tp, p.gpu.name, p.compute);
  std::unique_ptr<CollectiveTimer> dp_timer;
  if (g.dp > 1) {
    dp_timer = std::make_unique<CollectiveTimer>(c.graph, dp_ranks, priors_for(c.cluster, dp_ranks),
                                                 c.nccl_options);
  }
  const std::vector<std::vector<workload::PipelineTask>> order =
      workload::pipeline_order(mp.schedule, mp.pp, v, c.options.grad_accum);
  const std::vector<int> held = workload::in_flight(order);
  double host_us = c.options.host ? c.options.host->nccl_us : 0.0;
  if (!(host_us > 0)) host_us = kNcclLaunchHostUs;
  // DTensor's host costs were fitted on a lent H200 VM like those of the reference host: carried
  // to the step's host by the probes' indices.
  const double reference = workload::reference_host().index_us();
  const double dtensor_scale = c.options.host ? c.options.host->index_us() / reference : 1.0;
  workload::PipelineTimes times;
  const bool one_graph = !mp.reduce_after_backward();
  for (int s = 0; s < stages; ++s) {
    StagePrediction st;
    const auto [first, end] = workload::stage_layers(c.model, stages, s, mp.blocks_per_stage);
    st.first_layer = first;
    st.end_layer = end;
    const workload::Model model = stages > 1 ? workload::stage_model(sharded, first, end) : sharded;
    workload::TrainingOptions o = c.options;
    o.parallel = {};
    o.ddp.broadcast_buffers = false;  // Megatron's data parallelism broadcasts no buffers
    // The data-parallel all-reduce: PyTorch DDP's own with one stage (bucketed, overlapping
    // backward); after the last backward with a pipeline, and with Megatron-LM's data parallelism
    // (its train_step all-reduces the gradient buffers after forward_backward_func: Megatron-LM
    // megatron/training.py, 2021), timed below.
    o.ddp.enabled = c.options.ddp.enabled && g.dp > 1;
    const bool first_stage = s == 0;
    workload::StepPlan plan =
        workload::plan_step(model, o, p.gpu, p.compute, first_stage ? c.input_copy_us : 0.0);
    if (!one_graph) {
      // One micro-batch through the stage; every backward after its first adds the stage's
      // gradients into those kept (PyTorch's .grad, Megatron's main_grad): plan_step's
      // accumulation kernels, spread over the micro-batches below.
      for (double us : plan.accumulate_us) st.accumulate_us += us;
      plan.micro_batches = 1;
      plan.accumulate_us.clear();
    }
    if (!first_stage) plan.input_bytes = 0;
    plan.layer_collectives = layer_collectives(tp, first, end, dtensor_scale);
    plan.layer_collective_host_us = host_us;
    // Memory: the stage's shard with the activations of the micro-batches in flight.
    st.in_flight = stages > 1 ? held[static_cast<std::size_t>(s % mp.pp)] : 1;
    st.memory = workload::estimate_memory(model, o, p.gpu.memory_bytes);
    if (mp.megatron) megatron_precision(st.memory);
    if (st.in_flight > 1) {
      const double more = (st.in_flight - 1) * st.memory.activations / v;
      st.memory.activations += more;
      st.memory.peak_backward += more;
      st.memory.total =
          std::max(st.memory.peak_backward, st.memory.peak_optimizer) + st.memory.outside;
    }
    if (!st.memory.fits()) {
      throw InputError(c.model.file + ": key 'batch': " + c.model.name + " at batch " +
                       std::to_string(c.options.batch) + " with --tp " + std::to_string(mp.tp) +
                       " --pp " + std::to_string(mp.pp) + " needs " +
                       units::format_size(st.memory.total) + " per GPU on stage " +
                       std::to_string(s) + " (parameters, gradients and optimizer " +
                       units::format_size(st.memory.params + st.memory.grads +
                                          st.memory.optimizer_state + st.memory.ddp_buckets) +
                       ", activations of " + std::to_string(st.in_flight) +
                       (st.in_flight == 1 ? " micro-batch " : " micro-batches ") +
                       units::format_size(st.memory.activations) + "), " + p.gpu.name + " has " +
                       units::format_size(st.memory.capacity));
    }
    if (o.ddp.enabled && g.dp > 1) time_ddp_collectives(plan, *dp_timer);
    // The stage's micro-batch(es) without the data-parallel all-reduce: forward ends with its
    // last forward node, backward with its last backward node, and every wait of the compute
    // stream is on the TP group.
    workload::StepPlan alone = plan;
    alone.buckets.clear();
    alone.allreduce_us.clear();
    alone.copy_in_us.clear();
    alone.copy_out_us.clear();
    const workload::DdpStepGraph graph = workload::ddp_step_graph(alone);
    const workload::Execution x =
        workload::execute(graph.graph, alone.kernel_gap_us, alone.overlap);
    const auto end_of = [&x](workload::NodeId n) {
      return n < 0 ? 0.0 : us_from_ps(x.nodes[static_cast<std::size_t>(n)].end);
    };
    st.forward_us = end_of(graph.forward_last);
    st.backward_us = end_of(graph.backward_last) - st.forward_us;
    st.compute_us = x.gpu_us_of("forward") + x.gpu_us_of("backward") + x.gpu_us_of("recompute") +
                    x.gpu_us_of("input");
    st.tp_exposed_us = x.exposed_communication_us;
    st.recompute_us = x.gpu_us_of("recompute");
    st.optimizer_us = plan.optimizer.gpu_us;
    if (one_graph) {
      // DDP's buckets overlap backward: the step runs as one graph with them.
      p.plan = std::move(plan);
      p.result = workload::simulate_step(p.plan);
      p.result.breakdown.tp_exposed_us =
          std::min(st.tp_exposed_us, p.result.breakdown.exposed_communication_us);
      p.memory = st.memory;
      out.stages.push_back(st);
      p.parallel = std::move(out);
      return;
    }
    for (double us : plan.allreduce_us) st.dp_sync_us += us;
    times.forward_us.push_back(st.forward_us);
    const double m = c.options.grad_accum;
    times.backward_us.push_back(st.backward_us + st.accumulate_us * (m - 1) / m);
    if (s == 0) p.plan = std::move(plan);
    if (s == 0 || st.memory.total > p.memory.total) p.memory = st.memory;
    out.stages.push_back(st);
  }
  // Activations (and their gradients) between neighbouring stages: each TP rank sends its whole
  // activation tensor (batch x sequence x hidden), timed as a send/receive between the two ranks.
  const double act = c.options.precision == workload::Precision::fp32 ? 4.0 : 2.0;
  const double bytes = static_cast<double>(c.options.batch) * c.options.seq.value_or(1) *
                       std::max(tp.hidden, 1.0) * act;
  for (int s = 0; s + 1 < stages; ++s) {
    const int from = g.pipeline[static_cast<std::size_t>(s % mp.pp)];
    const int to = g.pipeline[static_cast<std::size_t>((s + 1) % mp.pp)];
    const std::vector<int> pair = ranks_of(c.ranks, {from, to});
    CollectiveTimer timer(c.graph, pair, priors_for(c.cluster, pair), c.nccl_options);
    out.send_us.push_back(timer.time(coll::Op::send_recv, {bytes}).front().alone_us);
  }
  times.send_us = out.send_us;
  times.tail_us.assign(static_cast<std::size_t>(mp.pp), 0.0);
  for (int s = 0; s < stages; ++s) {
    const StagePrediction& st = out.stages[static_cast<std::size_t>(s)];
    times.tail_us[static_cast<std::size_t>(s % mp.pp)] += st.dp_sync_us + st.optimizer_us;
  }
  out.pipeline = workload::run_pipeline(order, times);
  // The breakdown of the rank that ends last.
  workload::StepBreakdown& b = p.result.breakdown;
  const int r = out.pipeline.critical_rank;
  b = {};
  b.step_us = out.pipeline.step_us;
  const double m = c.options.grad_accum;
  for (int s = r; s < stages; s += mp.pp) {
    const StagePrediction& st = out.stages[static_cast<std::size_t>(s)];
    b.forward_us += m * st.forward_us;
    b.backward_us += m * st.backward_us + (m - 1) * st.accumulate_us;
    b.grad_accumulate_us += (m - 1) * st.accumulate_us;
    b.exposed_communication_us += st.dp_sync_us;
    b.tp_exposed_us += m * st.tp_exposed_us;
    b.recompute_us += m * st.recompute_us;
    b.optimizer_us += st.optimizer_us;
  }
  b.pipeline_bubble_us = out.pipeline.bubble_us;
  p.parallel = std::move(out);
}

}  // namespace cs::system
