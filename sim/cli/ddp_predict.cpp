// One DDP step predicted on a set of ranks: shared by `ddp` and `scale`.
#include "cli/ddp_predict.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "calibration/measurements/node_host.hpp"
#include "calibration/validate/machine_match.hpp"
#include "collectives/communicator.hpp"
#include "collectives/sweep.hpp"
#include "core/error.hpp"
#include "core/event_queue.hpp"
#include "core/units.hpp"
#include "network/analytical_network.hpp"
#include "network/copies.hpp"
#include "network/flow_network.hpp"
#include "network/flow_report.hpp"
#include "topology/graph.hpp"

namespace cs::cli {
namespace {

// NCCL's defaults (NVLS where the servers support it, CollNet off), with NCCL_NVLS_ENABLE and
// NCCL_COLLNET_ENABLE from the environment as a job would pass them, else NVLS as a calibration's
// runs had it.
coll::TunerOptions nccl_env_options(const cal::Calibration* calibration) {
  coll::TunerOptions o;
  const char* v = std::getenv("NCCL_NVLS_ENABLE");
  o.nvls = coll::parse_enable(v != nullptr ? v : "", "NCCL_NVLS_ENABLE");
  if (!o.nvls && calibration != nullptr) o.nvls = calibration->nvls;
  const char* collnet = std::getenv("NCCL_COLLNET_ENABLE");
  o.collnet = coll::parse_enable(collnet != nullptr ? collnet : "", "NCCL_COLLNET_ENABLE");
  return o;
}

// Each bucket's all-reduce across `ranks`, alone on the topology (flow fidelity, NCCL's priors
// or the calibration's constants, NCCL's own choice of algorithm, protocol and channels): DDP
// runs one NCCL stream per rank, so a rank's all-reduces never overlap one another, and with
// every rank alike they all start together. Sets the plan's times, CTA counts and labels, and
// the time of the buffers' broadcast.
void time_allreduces(workload::StepPlan& plan, const topo::ClusterGraph& graph,
                     const std::vector<int>& ranks, const coll::NcclParams& params,
                     const coll::TunerOptions& options) {
  coll::Communicator comm(graph, ranks, params);
  const coll::DataType fp32{"float", 4};
  std::vector<double> sizes;
  for (const workload::Bucket& b : plan.buckets) sizes.push_back(b.bytes);
  if (plan.used_map_bytes > 0) sizes.push_back(plan.used_map_bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const std::vector<coll::SweepRow> rows =
      coll::sweep(comm, coll::Op::all_reduce, sizes, fp32, options, coll::Fidelity::flow);
  if (plan.broadcast) {
    const std::vector<coll::SweepRow> b = coll::sweep(
        comm, coll::Op::broadcast, {plan.buffer_bytes}, fp32, options, coll::Fidelity::flow);
    plan.broadcast_us = b.front().time_us;
  }
  const auto row_of = [&](double bytes) -> const coll::SweepRow& {
    const auto at = std::lower_bound(sizes.begin(), sizes.end(), bytes) - sizes.begin();
    return rows[static_cast<std::size_t>(at)];
  };
  if (plan.used_map_bytes > 0) plan.used_map_allreduce_us = row_of(plan.used_map_bytes).time_us;
  const double n = static_cast<double>(ranks.size());
  plan.allreduce_us.clear();
  for (const workload::Bucket& b : plan.buckets) {
    const coll::SweepRow& row = row_of(b.bytes);
    plan.allreduce_us.push_back(row.time_us);
    plan.allreduce_ctas.push_back(row.choice.n_channels);
    // What each channel's CTA moves per second alone: the bytes the rank's SMs move over the
    // call's time and channels. Ring and Tree copy and reduce the bus bytes (nccl-tests' busbw
    // convention); NVLS leaves the reduction to the switch: a rank's SMs load its reduced shard
    // (S / ranks of its server) and multicast it back, and NVLSTree adds the shard's trip up and
    // down the tree across servers (4 shards).
    const coll::Algo algo = row.choice.estimate.algo;
    const double ppn =
        static_cast<double>(comm.layout().shape.n_ranks) / std::max(comm.layout().shape.n_nodes, 1);
    const double sm_bytes = algo == coll::Algo::nvls        ? 2 * b.bytes / ppn
                            : algo == coll::Algo::nvls_tree ? 4 * b.bytes / ppn
                                                            : 2 * (n - 1) / n * b.bytes;
    plan.allreduce_rate_gbps.push_back(row.time_us > 0 && row.choice.n_channels > 0
                                           ? sm_bytes / (row.time_us * 1e-6) /
                                                 row.choice.n_channels / 1e9
                                           : 0.0);
    plan.allreduce_label.push_back(std::string(coll::to_string(row.choice.estimate.algo)) + "/" +
                                   coll::to_string(row.choice.estimate.proto) + "/" +
                                   std::to_string(row.choice.n_channels));
  }
}

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

}  // namespace

void add_step_flags(CLI::App* cmd, StepFlags& flags) {
  cmd->add_option("--batch", flags.batch, "Per-GPU batch (default: the model file's)");
  cmd->add_option("--seq", flags.seq, "Sequence length (default: the model file's)");
  cmd->add_option("--precision", flags.precision, "bf16 (autocast) or fp32");
  cmd->add_option("--optimizer", flags.optimizer, "sgd or adamw");
  cmd->add_option("--momentum", flags.momentum,
                  "SGD's momentum, >= 0 (default: the model file's; PyTorch's default is 0)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--bucket-cap-mb", flags.bucket_cap_mb,
                  "DDP bucket cap in MiB (default 25, with a 1 MiB first bucket)")
      ->each([&flags](const std::string&) { flags.bucket_cap_set = true; });
  cmd->add_flag("--no-ddp", flags.no_ddp, "The plain training step, without the DDP wrapper");
  cmd->add_flag(
      "--gradient-as-bucket-view", flags.bucket_view,
      "DDP's gradient_as_bucket_view=True: gradients scaled in their buckets, no copy back");
  cmd->add_flag("--pageable", flags.pageable, "Input in pageable host memory (default: pinned)");
  cmd->add_flag("--no-broadcast-buffers", flags.no_broadcast_buffers,
                "DDP's broadcast_buffers=False: no broadcast of module buffers before forward");
  cmd->add_flag("--find-unused-parameters", flags.find_unused,
                "DDP's find_unused_parameters=True: a graph walk per step, buckets never rebuilt");
  cmd->add_flag("--first-step", flags.first_step,
                "The first step, before DDP rebuilds its buckets (default: steady state)");
  cmd->add_option("--compute", flags.compute,
                  "Layer times: measured (scaled through the work model; the default) or work");
  cmd->add_option("--measurement", flags.measurement,
                  "The model file's measurement id to scale from (default: best match)");
  cmd->add_option("--host-probe", flags.host_probe,
                  "The node's host probe (calibrate/host/host_probe.py's JSON): host costs are "
                  "carried to it (default: the calibration's, else the reference host)");
}

namespace {

// The step's host from a node's probe: one process alone, and every process at once where the
// probe timed that; `label` names where the probe comes from ("host probe FILE").
void set_host(workload::StepOptions& o, const cal::NodeHost& h, const std::string& label) {
  o.host = h.alone;
  o.host->source = label + " (one process)";
  if (h.all) {
    o.host_all = *h.all;
    o.host_all->source = label + " (" + std::to_string(h.world_size) + " processes at once)";
  }
}

}  // namespace

workload::StepOptions step_options(const StepFlags& a, const workload::Model& model) {
  workload::StepOptions o = workload::default_options(model);
  if (a.batch > 0) o.batch = a.batch;
  if (a.seq > 0) {
    if (!model.settings.seq) {
      throw InputError("key 'seq': model '" + model.name + "' has no sequence length (" +
                       model.file + ")");
    }
    o.seq = a.seq;
  }
  if (!a.precision.empty()) {
    if (a.precision != "bf16" && a.precision != "fp32")
      throw InputError("key 'precision': unknown precision '" + a.precision +
                       "'; valid: bf16, fp32");
    o.precision = a.precision == "bf16" ? workload::Precision::bf16 : workload::Precision::fp32;
  }
  if (!a.optimizer.empty()) {
    if (a.optimizer != "sgd" && a.optimizer != "adamw")
      throw InputError("key 'optimizer': unknown optimizer '" + a.optimizer +
                       "'; valid: sgd, adamw");
    o.optimizer =
        a.optimizer == "sgd" ? workload::OptimizerKind::sgd : workload::OptimizerKind::adamw;
    // Another optimizer than the file's: PyTorch's default momentum (0) unless given.
    if (o.optimizer != model.settings.optimizer) o.momentum = 0;
  }
  if (a.momentum >= 0) {
    if (o.optimizer != workload::OptimizerKind::sgd)
      throw InputError("key 'momentum': applies only to --optimizer sgd");
    o.momentum = a.momentum;
  }
  if (!(a.bucket_cap_mb > 0)) throw InputError("key 'bucket-cap-mb': must be above 0");
  o.broadcast_buffers = !a.no_broadcast_buffers;
  o.find_unused_parameters = a.find_unused;
  o.first_step = a.first_step;
  o.bucket_cap_mb = a.bucket_cap_mb;
  o.bucket_cap_set = a.bucket_cap_set;
  o.ddp = !a.no_ddp;
  o.gradient_as_bucket_view = a.bucket_view;
  if (a.pageable) o.input_pinned = false;
  if (a.compute != "measured" && a.compute != "work")
    throw InputError("key 'compute': unknown source '" + a.compute + "'; valid: measured, work");
  o.compute =
      a.compute == "work" ? workload::ComputeSource::work : workload::ComputeSource::measured;
  o.measurement = a.measurement;
  if (!a.host_probe.empty()) {
    const cal::NodeHost h = cal::read_host_probe_file(a.host_probe, "--host-probe file");
    set_host(o, h, "host probe " + h.file);
  }
  return o;
}

void apply_calibration(const cal::Calibration& calibration, topo::Cluster& cluster,
                       const std::vector<int>& ranks) {
  cal::check_calibration_match(calibration, cluster, ranks);
  cal::apply_links(calibration, cluster);
  cal::apply_op_links(cal::nccl_fit_for(calibration, "allreduce"), cluster);
}

DdpPrediction predict_ddp(const topo::Cluster& cluster, const workload::Model& model,
                          const workload::StepOptions& options, const std::vector<int>& ranks,
                          const cal::Calibration* calibration, int links) {
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
  p.memory = workload::estimate_memory(model, options, p.gpu.memory_bytes);
  if (!p.memory.fits()) {
    const int largest = workload::largest_fitting_batch(model, options, p.gpu.memory_bytes);
    throw InputError(model.file + ": key 'batch': " + model.name + " at batch " +
                     std::to_string(options.batch) + " needs " +
                     units::format_size(p.memory.total) + " per GPU, " + p.gpu.name + " has " +
                     units::format_size(p.memory.capacity) +
                     (largest > 0 ? "; the largest batch that fits is " + std::to_string(largest)
                                  : "; not even batch 1 fits"));
  }
  const topo::ClusterGraph graph(cluster);
  const double input_bytes = options.batch * model.settings.input_bytes_per_sample;
  workload::StepOptions step = options;
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
  p.plan = workload::plan_step(model, step, p.gpu, p.compute,
                               input_copy_us(graph, gpu_node, input_bytes, options.input_pinned));
  if (options.ddp && ranks.size() > 1) {
    const coll::TunerOptions nccl_options = nccl_env_options(calibration);
    time_allreduces(p.plan, graph, ranks, nccl, nccl_options);
    if (links > 0) p.busiest_links = busiest_links(p.plan, graph, ranks, nccl, nccl_options, links);
  }
  p.result = workload::simulate_step(p.plan);
  return p;
}

}  // namespace cs::cli
