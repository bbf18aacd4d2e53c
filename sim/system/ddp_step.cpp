// One DDP step predicted on a set of ranks: the generator, the collective model and the executor
// brought together.
#include "system/ddp_step.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include "core/error.hpp"
#include "core/event_queue.hpp"
#include "core/units.hpp"
#include "network/analytical_network.hpp"
#include "network/copies.hpp"
#include "network/flow_network.hpp"
#include "network/flow_report.hpp"
#include "topology/graph.hpp"
#include "workload/fsdp/fsdp_memory.hpp"

namespace cs::system {
namespace {

// The busiest `limit` link directions of the buckets' all-reduces: each distinct bucket size run
// alone on the flow network, its bytes per channel read back, ranked over the whole step.
std::vector<LinkLoad> busiest_links(const workload::StepPlan& plan, const topo::ClusterGraph& graph,
                                    const std::vector<int>& ranks, const coll::NcclParams& params,
                                    const coll::TunerOptions& options, int limit) {
  coll::Communicator comm(graph, ranks, params);
  std::map<double, std::vector<double>> per_size;  // bucket bytes -> bytes per channel
  for (const workload::Bucket& b : plan.buckets) {
    if (per_size.count(b.bytes) != 0) continue;
    EventQueue queue;
    net::FlowNetwork network(queue, graph);
    coll::CollectiveCall call;
    call.op = coll::Op::all_reduce;
    call.bytes = b.bytes;
    call.options = options;
    comm.run(queue, network, call, [](const coll::CollectiveResult&) {});
    queue.run();
    std::vector<double>& bytes = per_size[b.bytes];
    for (topo::ChannelId c = 0; c < graph.channel_count(); ++c) {
      bytes.push_back(network.channel_stats(c).bytes);
    }
  }
  std::vector<double> total(static_cast<std::size_t>(graph.channel_count()), 0.0);
  for (const workload::Bucket& b : plan.buckets) {
    const std::vector<double>& bytes = per_size[b.bytes];
    for (std::size_t c = 0; c < total.size(); ++c) total[c] += bytes[c];
  }
  std::vector<topo::ChannelId> order;
  for (topo::ChannelId c = 0; c < graph.channel_count(); ++c) {
    if (total[static_cast<std::size_t>(c)] > 0) order.push_back(c);
  }
  // Busiest: the most time busy at line rate, bytes over capacity (a NIC before an NVLink port
  // that carries more bytes but has nine times the bandwidth).
  std::stable_sort(order.begin(), order.end(), [&](topo::ChannelId a, topo::ChannelId b) {
    return total[static_cast<std::size_t>(a)] / graph.capacity_Bps(a) >
           total[static_cast<std::size_t>(b)] / graph.capacity_Bps(b);
  });
  if (static_cast<int>(order.size()) > limit) order.resize(static_cast<std::size_t>(limit));
  std::vector<LinkLoad> out;
  for (topo::ChannelId c : order) {
    const topo::Channel& channel = graph.channel(c);
    const topo::Link& link = graph.link_of(c);
    LinkLoad load;
    load.name = net::node_name(graph, channel.from) + " -> " + net::node_name(graph, channel.to) +
                " (" + topo::to_string(link.kind) +
                (link.label.empty() ? std::string() : " " + link.label) + ")";
    load.capacity_Bps = graph.capacity_Bps(c);
    for (const workload::Bucket& b : plan.buckets) {
      load.bucket_bytes.push_back(per_size[b.bytes][static_cast<std::size_t>(c)]);
    }
    out.push_back(std::move(load));
  }
  return out;
}

// The time of one host-to-device copy of `bytes` to `gpu_node`, alone on the topology's links.
double input_copy_us(const topo::ClusterGraph& graph, int gpu_node, double bytes, bool pinned) {
  if (bytes <= 0) return 0;
  EventQueue queue;
  net::AnalyticalNetwork network(queue, graph);
  TimePs finished = 0;
  network.start(net::host_to_device(graph, gpu_node, bytes,
                                    pinned ? net::HostMemory::pinned : net::HostMemory::pageable),
                [&finished](TimePs at) { finished = at; });
  queue.run();
  return us_from_ps(finished);
}

// Throws the one-line refusal when `p.memory` does not fit, with the largest batch that does
// (`estimate` at another batch).
void refuse_unless_fits(
    const workload::Model& model, const workload::TrainingOptions& options, const DdpPrediction& p,
    const std::function<workload::MemoryEstimate(const workload::TrainingOptions&)>& estimate) {
  if (p.memory.fits()) return;
  const int largest = workload::largest_fitting_batch(options, estimate);
  throw InputError(model.file + ": key 'batch': " + model.name + " at batch " +
                   std::to_string(options.batch) + " needs " + units::format_size(p.memory.total) +
                   " per GPU, " + p.gpu.name + " has " + units::format_size(p.memory.capacity) +
                   (largest > 0 ? "; the largest batch that fits is " + std::to_string(largest)
                                : "; not even batch 1 fits"));
}

}  // namespace

void time_fsdp_collectives(workload::FsdpPlan& plan, CollectiveTimer& timer,
                           CollectiveTimer* replicas) {
  std::vector<double> gather, scatter, shards;
  for (const workload::FsdpUnit& u : plan.units) {
    gather.push_back(u.all_gather_bytes);
    scatter.push_back(u.reduce_scatter_bytes);
    shards.push_back(u.reduce_scatter_bytes / plan.options.shard_ranks);
  }
  const std::vector<CollectiveTime> g = timer.time(coll::Op::all_gather, gather);
  const std::vector<CollectiveTime> r = timer.time(coll::Op::reduce_scatter, scatter);
  if (replicas != nullptr) {
    const std::vector<CollectiveTime> a = replicas->time(coll::Op::all_reduce, shards);
    for (std::size_t i = 0; i < plan.units.size(); ++i) {
      workload::CollectiveKernel& k = plan.units[i].all_reduce;
      k.alone_us = a[i].alone_us;
      k.ctas = a[i].ctas;
      k.rate_gbps = a[i].rate_gbps;
    }
  }
  for (std::size_t i = 0; i < plan.units.size(); ++i) {
    workload::FsdpUnit& u = plan.units[i];
    u.all_gather.alone_us = g[i].alone_us;
    u.all_gather.ctas = g[i].ctas;
    u.all_gather.rate_gbps = g[i].rate_gbps;
    u.reduce_scatter.alone_us = r[i].alone_us;
    u.reduce_scatter.ctas = r[i].ctas;
    u.reduce_scatter.rate_gbps = r[i].rate_gbps;
  }
}

void time_ddp_collectives(workload::StepPlan& plan, CollectiveTimer& timer) {
  std::vector<double> sizes;
  for (const workload::Bucket& b : plan.buckets) sizes.push_back(b.bytes);
  const std::vector<CollectiveTime> times = timer.time(coll::Op::all_reduce, sizes);
  plan.allreduce_us.clear();
  for (const CollectiveTime& t : times) {
    plan.allreduce_us.push_back(t.alone_us);
    plan.allreduce_ctas.push_back(t.ctas);
    plan.allreduce_rate_gbps.push_back(t.rate_gbps);
    plan.allreduce_label.push_back(t.label);
  }
  if (plan.used_map_bytes > 0)
    plan.used_map_allreduce_us =
        timer.time(coll::Op::all_reduce, {plan.used_map_bytes}).front().alone_us;
  if (plan.broadcast)
    plan.broadcast_us = timer.time(coll::Op::broadcast, {plan.buffer_bytes}).front().alone_us;
}

// The step's host from a node's probe: one process alone, and every process at once where the
// probe timed that; `label` names where the probe comes from ("host probe FILE").
void set_host(workload::TrainingOptions& o, const cal::NodeHost& h, const std::string& label) {
  o.host = h.alone;
  o.host->source = label + " (one process)";
  if (h.all) {
    o.host_all = *h.all;
    o.host_all->source = label + " (" + std::to_string(h.world_size) + " processes at once)";
  }
}

namespace {

// HSDP's groups: `degree` consecutive ranks shard (0: as many as run on the first rank's
// server); the first rank of each such group replicates. The ranks must split into at least two.
void hsdp_groups(const topo::Cluster& cluster, const std::vector<int>& ranks, int degree,
                 std::vector<int>& shard, std::vector<int>& replicas) {
  const auto server_of = [&cluster](int r) {
    return cluster.nodes[static_cast<std::size_t>(cluster.ranks[static_cast<std::size_t>(r)])]
        .server;
  };
  if (degree == 0) {
    degree = static_cast<int>(std::count_if(ranks.begin(), ranks.end(), [&](int r) {
      return server_of(r) == server_of(ranks.front());
    }));
  }
  const auto n = static_cast<int>(ranks.size());
  if (n % degree != 0 || n / degree < 2) {
    throw InputError("key 'shard-degree': hsdp shards over " + std::to_string(degree) +
                     " GPUs and replicates across at least two such groups; " + std::to_string(n) +
                     " ranks " + (n % degree != 0 ? "do not split into them" : "make one") +
                     " (use fsdp, more GPUs or a smaller --shard-degree)");
  }
  shard.assign(ranks.begin(), ranks.begin() + degree);
  for (int g = 0; g < n; g += degree) replicas.push_back(ranks[static_cast<std::size_t>(g)]);
}

}  // namespace

DdpPrediction predict_ddp(const topo::Cluster& cluster, const workload::Model& model,
                          const workload::TrainingOptions& options, const std::vector<int>& ranks,
                          const cal::Calibration* calibration, int links) {
  const bool fsdp = workload::sharded(options.strategy);
  // Every rank is simulated as rank 0: exact while the ranks are alike (one GPU model, the same
  // batch); a cluster of several GPU models is refused rather than simulated as one.
  const auto model_of = [&cluster](int rank) {
    return cluster.nodes[static_cast<std::size_t>(cluster.ranks[static_cast<std::size_t>(rank)])]
        .gpu_model;
  };
  for (int r : ranks) {
    if (model_of(r) != model_of(ranks.front())) {
      throw InputError(
          "key 'ranks': the ranks run on different GPU models; DDP across a "
          "heterogeneous cluster is not simulated");
    }
  }
  DdpPrediction p;
  p.ranks = static_cast<int>(ranks.size());
  std::vector<int> servers;
  servers.reserve(ranks.size());
  for (int r : ranks) {
    servers.push_back(
        cluster.nodes[static_cast<std::size_t>(cluster.ranks[static_cast<std::size_t>(r)])].server);
  }
  std::sort(servers.begin(), servers.end());
  p.servers = static_cast<int>(std::unique(servers.begin(), servers.end()) - servers.begin());
  const int gpu_node = cluster.ranks[static_cast<std::size_t>(ranks.front())];
  p.gpu = cluster.gpu_models[static_cast<std::size_t>(model_of(ranks.front()))];
  p.compute = workload::gpu_compute_priors(p.gpu);
  coll::NcclParams nccl = coll::nccl_priors(coll::comm_arch(cluster, ranks));
  if (calibration != nullptr) {
    nccl = cal::nccl_fit_for(*calibration, "allreduce").params;
    for (const cal::GemmFit& g : calibration->compute.gemm) {
      if (g.dtype == "bf16" && g.efficiency > 0) {
        workload::apply_gemm_fit(p.compute, g.efficiency, g.overhead_us,
                                 "calibration (cuBLAS bf16 sweep)");
      }
    }
  }
  if (!fsdp && !options.parallel.model_parallel_step()) {
    p.memory = workload::estimate_memory(model, options, p.gpu.memory_bytes);
    refuse_unless_fits(model, options, p, [&](const workload::TrainingOptions& o) {
      return workload::estimate_memory(model, o, p.gpu.memory_bytes);
    });
  }
  const topo::ClusterGraph graph(cluster);
  const double input_bytes = options.batch * model.settings.input_bytes_per_sample;
  workload::TrainingOptions step = options;
  if (fsdp) step.ddp.enabled = false;  // FSDP's plan: the plain step's tasks
  if (!step.host && calibration != nullptr && calibration->host)
    set_host(
        step, *calibration->host,
        "host of calibration '" + calibration->machine + "', probe " + calibration->host->file);
  // Several processes on this server: the host as the probe timed it with every process at once.
  const int server = cluster.nodes[static_cast<std::size_t>(gpu_node)].server;
  const auto on_server = std::count_if(ranks.begin(), ranks.end(), [&](int r) {
    return cluster.nodes[static_cast<std::size_t>(cluster.ranks[static_cast<std::size_t>(r)])]
               .server == server;
  });
  if (on_server > 1 && step.host_all) step.host = step.host_all;
  const coll::TunerOptions nccl_options =
      nccl_env_options(calibration != nullptr && calibration->nvls);
  if (options.parallel.model_parallel_step()) {
    if (fsdp) {
      throw InputError("flag '--strategy': " + std::string(workload::to_string(options.strategy)) +
                       " beside --tp, --pp or --tp-impl megatron is not modelled yet; use ddp "
                       "(Megatron's data parallelism)");
    }
    const StepContext context{
        cluster,      graph,
        model,        step,
        ranks,        nccl,
        nccl_options, input_copy_us(graph, gpu_node, input_bytes, options.input_pinned)};
    predict_model_parallel(context, p);
    return p;
  }
  p.plan = workload::plan_step(model, step, p.gpu, p.compute,
                               input_copy_us(graph, gpu_node, input_bytes, options.input_pinned));
  if (fsdp) {
    workload::FsdpOptions f = options.fsdp;
    f.shard_ranks = static_cast<int>(ranks.size());
    // HSDP: a shard group (a server's ranks, or --shard-degree), replicated over the groups (the
    // first rank of each: one of the concurrent replicate groups, timed alone).
    std::vector<int> shard_group = ranks, replica_group;
    if (options.strategy == workload::Strategy::hsdp) {
      hsdp_groups(cluster, ranks, options.fsdp.shard_degree, shard_group, replica_group);
      f.shard_ranks = static_cast<int>(shard_group.size());
      f.replicas = static_cast<int>(replica_group.size());
    }
    const double index = step.host ? step.host->index_us() : workload::reference_host().index_us();
    p.fsdp = true;
    p.fsdp_plan = workload::plan_fsdp(model, p.plan, f, p.compute, index);
    p.memory = workload::estimate_fsdp_memory(model, options, p.fsdp_plan, p.gpu.memory_bytes);
    refuse_unless_fits(model, options, p, [&](const workload::TrainingOptions& o) {
      return workload::estimate_fsdp_memory(model, o, p.fsdp_plan, p.gpu.memory_bytes);
    });
    CollectiveTimer timer(graph, shard_group, nccl, nccl_options);
    std::unique_ptr<CollectiveTimer> replicas;
    if (!replica_group.empty()) {
      replicas = std::make_unique<CollectiveTimer>(
          graph, replica_group, coll::nccl_priors(coll::comm_arch(cluster, replica_group)),
          nccl_options);
    }
    time_fsdp_collectives(p.fsdp_plan, timer, replicas.get());
    p.result = workload::simulate_fsdp_step(p.plan, p.fsdp_plan);
    return p;
  }
  if (options.ddp.enabled && ranks.size() > 1) {
    CollectiveTimer timer(graph, ranks, nccl, nccl_options);
    time_ddp_collectives(p.plan, timer);
    if (links > 0) p.busiest_links = busiest_links(p.plan, graph, ranks, nccl, nccl_options, links);
  }
  p.result = workload::simulate_step(p.plan);
  return p;
}

}  // namespace cs::system
