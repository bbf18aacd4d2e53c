// `clustersim ddp`: one training step of a model on a topology's GPUs, with PyTorch DDP or without
// it: step time, samples/s and where the time went; --trace writes the host thread and the GPU's
// streams as a Chrome trace. One GPU for now: DDP across GPUs comes with the collective part.
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "calibration/calibration_file.hpp"
#include "calibration/machine_match.hpp"
#include "cli/coll_args.hpp"
#include "cli/commands.hpp"
#include "cli/ddp_report.hpp"
#include "cli/output_files.hpp"
#include "cli/output_guard.hpp"
#include "collectives/communicator.hpp"
#include "collectives/sweep.hpp"
#include "core/error.hpp"
#include "core/event_queue.hpp"
#include "network/analytical_network.hpp"
#include "network/copies.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"
#include "workload/memory_check.hpp"
#include "workload/model_loader.hpp"
#include "workload/step_plan.hpp"
#include "workload/step_sim.hpp"

namespace cs::cli {
namespace {

struct DdpArgs {
  std::string topology;
  std::string model;
  std::string ranks = "1";
  int batch = 0;
  int seq = 0;
  std::string precision;
  std::string optimizer;
  double bucket_cap_mb = workload::kDefaultBucketCapMb;
  bool no_ddp = false;
  bool bucket_view = false;
  bool pageable = false;
  std::string compute = "measured";
  std::string measurement;
  std::string calibration;
  bool csv = false;
  bool json = false;
  std::string trace;
};

// Each bucket's all-reduce across `ranks`, alone on the topology (flow fidelity, NCCL's priors
// or the calibration's constants, NCCL's own choice of algorithm, protocol and channels): DDP
// runs one NCCL stream per rank, so a rank's all-reduces never overlap one another, and with
// every rank alike they all start together. Sets the plan's times, SM shares and labels.
void time_allreduces(workload::StepPlan& plan, const topo::ClusterGraph& graph,
                     const std::vector<int>& ranks, const coll::NcclParams& params, int sm_count) {
  coll::Communicator comm(graph, ranks, params);
  coll::TunerOptions options;
  options.nvls_enabled = false;  // as the calibration machines ran
  const coll::DataType fp32{"float", 4};
  std::vector<double> sizes;
  for (const workload::Bucket& b : plan.buckets) sizes.push_back(b.bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const std::vector<coll::SweepRow> rows =
      coll::sweep(comm, coll::Op::all_reduce, sizes, fp32, options, coll::Fidelity::flow);
  plan.allreduce_us.clear();
  for (const workload::Bucket& b : plan.buckets) {
    const auto at = std::lower_bound(sizes.begin(), sizes.end(), b.bytes) - sizes.begin();
    const coll::SweepRow& row = rows[static_cast<std::size_t>(at)];
    plan.allreduce_us.push_back(row.time_us);
    plan.allreduce_sm_share.push_back(
        std::min(1.0, static_cast<double>(row.choice.n_channels) / sm_count));
    plan.allreduce_label.push_back(std::string(coll::to_string(row.choice.estimate.algo)) + "/" +
                                   coll::to_string(row.choice.estimate.proto) + "/" +
                                   std::to_string(row.choice.n_channels));
  }
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

workload::StepOptions options_of(const DdpArgs& a, const workload::Model& model) {
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
  }
  if (!(a.bucket_cap_mb > 0)) throw InputError("key 'bucket-cap-mb': must be above 0");
  o.bucket_cap_mb = a.bucket_cap_mb;
  o.ddp = !a.no_ddp;
  o.gradient_as_bucket_view = a.bucket_view;
  if (a.pageable) o.input_pinned = false;
  if (a.compute != "measured" && a.compute != "work")
    throw InputError("key 'compute': unknown source '" + a.compute + "'; valid: measured, work");
  o.compute =
      a.compute == "work" ? workload::ComputeSource::work : workload::ComputeSource::measured;
  o.measurement = a.measurement;
  return o;
}

void run_ddp(const DdpArgs& a) {
  refuse_outputs_over_inputs({{"--trace", a.trace}}, {{"--topology file", a.topology},
                                                      {"--model file", a.model},
                                                      {"--calibration file", a.calibration}});
  topo::Cluster cluster = topo::load_cluster(a.topology);
  const workload::Model model = workload::load_model_file(a.model);
  const std::vector<int> ranks = parse_ranks(a.ranks, static_cast<int>(cluster.ranks.size()));
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
  const workload::StepOptions options = options_of(a, model);
  const int gpu_node = cluster.ranks[static_cast<std::size_t>(ranks.front())];
  const auto& node = cluster.nodes[static_cast<std::size_t>(gpu_node)];
  workload::GpuCompute compute =
      workload::gpu_compute_priors(cluster.gpu_models[static_cast<std::size_t>(node.gpu_model)]);
  coll::NcclParams nccl = coll::nccl_priors(coll::comm_arch(cluster, ranks));
  if (!a.calibration.empty()) {
    const cal::Calibration calibration = cal::load_calibration(a.calibration);
    cal::check_calibration_match(calibration, cluster, ranks);
    cal::apply_links(calibration, cluster);
    const cal::NcclFit& fit = cal::nccl_fit_for(calibration, "allreduce");
    cal::apply_op_links(fit, cluster);
    nccl = fit.params;
    for (const cal::GemmFit& g : calibration.compute.gemm) {
      if (g.dtype == "bf16" && g.efficiency > 0) {
        workload::apply_gemm_fit(compute, g.efficiency, g.overhead_us,
                                 "calibration (cuBLAS bf16 sweep)");
      }
    }
  }
  const topo::GpuModel& gpu = cluster.gpu_models[static_cast<std::size_t>(node.gpu_model)];
  const workload::MemoryEstimate memory =
      workload::estimate_memory(model, options, gpu.memory_bytes);
  if (!memory.fits()) {
    const int largest = workload::largest_fitting_batch(model, options, gpu.memory_bytes);
    throw InputError(model.file + ": key 'batch': " + model.name + " at batch " +
                     std::to_string(options.batch) + " needs " + units::format_size(memory.total) +
                     " per GPU, " + gpu.name + " has " + units::format_size(memory.capacity) +
                     (largest > 0 ? "; the largest batch that fits is " + std::to_string(largest)
                                  : "; not even batch 1 fits"));
  }
  const topo::ClusterGraph graph(cluster);
  const double input_bytes = options.batch * model.settings.input_bytes_per_sample;
  workload::StepPlan plan =
      workload::plan_step(model, options, gpu, compute,
                          input_copy_us(graph, gpu_node, input_bytes, options.input_pinned));
  if (options.ddp && ranks.size() > 1) time_allreduces(plan, graph, ranks, nccl, compute.sm_count);
  const workload::StepResult result = workload::simulate_step(plan);

  DdpReport report{
      model, cluster, gpu, options, plan, result, memory, compute, static_cast<int>(ranks.size())};
  OutputFiles files;
  files.add("--trace", a.trace, ddp_trace_json(report));
  files.write_all();
  if (a.json) {
    std::cout << ddp_json(report).dump(2) << "\n";
  } else if (a.csv) {
    std::cout << ddp_csv(report);
  } else {
    std::cout << ddp_text(report);
  }
}

}  // namespace

void add_ddp_command(CLI::App& app) {
  auto args = std::make_shared<DdpArgs>();
  CLI::App* cmd = app.add_subcommand(
      "ddp", "Predict one training step of a model (PyTorch DDP, or --no-ddp) on a topology");
  cmd->add_option("--topology,-t", args->topology, "Topology YAML file")->required();
  cmd->add_option("--model,-m", args->model, "Model file (models/*.yaml)")->required();
  cmd->add_option("--ranks,-n", args->ranks,
                  "Rank count N (0..N-1) or list 0,1,8,9 / 0-7 (default 1)");
  cmd->add_option("--batch", args->batch, "Per-GPU batch (default: the model file's)");
  cmd->add_option("--seq", args->seq, "Sequence length (default: the model file's)");
  cmd->add_option("--precision", args->precision, "bf16 (autocast) or fp32");
  cmd->add_option("--optimizer", args->optimizer, "sgd (momentum) or adamw");
  cmd->add_option("--bucket-cap-mb", args->bucket_cap_mb, "DDP bucket cap in MiB (default 25)");
  cmd->add_flag("--no-ddp", args->no_ddp, "The plain training step, without the DDP wrapper");
  cmd->add_flag("--gradient-as-bucket-view", args->bucket_view,
                "DDP's gradient_as_bucket_view=True: no copies into and out of buckets");
  cmd->add_flag("--pageable", args->pageable, "Input in pageable host memory (default: pinned)");
  cmd->add_option("--compute", args->compute,
                  "Layer times: measured (scaled through the work model; the default) or work");
  cmd->add_option("--measurement", args->measurement,
                  "The model file's measurement id to scale from (default: best match)");
  cmd->add_option("--calibration,-c", args->calibration,
                  "Calibration file: its GEMM fit and copy rates replace the priors");
  auto* csv = cmd->add_flag("--csv", args->csv, "Print CSV");
  cmd->add_flag("--json", args->json, "Print JSON")->excludes(csv);
  cmd->add_option("--trace", args->trace, "Write a Chrome trace (Perfetto) of the step");
  cmd->callback([args] { run_ddp(*args); });
}

}  // namespace cs::cli
