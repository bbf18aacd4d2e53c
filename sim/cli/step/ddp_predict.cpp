// The step's flags, read into options; a calibration applied to a cluster.
#include "cli/step/ddp_predict.hpp"

#include <cstdlib>
#include <sstream>

#include "calibration/measurements/node_host.hpp"
#include "calibration/validate/machine_match.hpp"
#include "core/error.hpp"

namespace cs::cli {

void add_step_flags(CLI::App* cmd, StepFlags& flags) {
  cmd->add_option("--batch,--micro-batch", flags.batch,
                  "Per-GPU batch (with --grad-accum or a pipeline: the micro-batch), >= 1 "
                  "(default: the model file's)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--seq", flags.seq, "Sequence length, >= 1 (default: the model file's)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--strategy", flags.strategy,
                  "Data parallelism: ddp (DistributedDataParallel, the default), fsdp (FSDP2's "
                  "fully_shard per block and the root, one shard group over the ranks) or hsdp "
                  "(FSDP2 sharded within each server, replicated across servers); plan "
                  "also takes auto (each strategy, with and without checkpointing, the fewest "
                  "micro-batches that fit: the fastest named)")
      ->check(CLI::IsMember({"ddp", "fsdp", "hsdp", "auto"}));
  cmd->add_option("--reshard-after-forward", flags.reshard_after_forward,
                  "fsdp: free a block's gathered parameters after its forward (true, the "
                  "default) or keep them for backward (false)")
      ->check(CLI::IsMember({"true", "false"}));
  cmd->add_option("--shard-degree", flags.shard_degree,
                  "hsdp: GPUs a shard group spans, consecutive ranks (default: one server's)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--param-dtype", flags.param_dtype,
                  "fsdp: MixedPrecisionPolicy param_dtype, bf16 (default) or fp32")
      ->check(CLI::IsMember({"bf16", "fp32"}));
  cmd->add_option("--reduce-dtype", flags.reduce_dtype,
                  "fsdp: MixedPrecisionPolicy reduce_dtype, fp32 (default) or bf16")
      ->check(CLI::IsMember({"bf16", "fp32"}));
  cmd->add_option("--grad-accum", flags.grad_accum,
                  "Gradient accumulation: micro-batches of --batch per optimizer step, the "
                  "gradients synchronised in the last (DDP's no_sync, FSDP's "
                  "set_requires_gradient_sync); default 1")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_flag("--sync-every-micro-batch", flags.sync_every_micro,
                "With --grad-accum: synchronise the gradients in every micro-batch (no no_sync; "
                "FSDP keeps no unsharded gradients between them)");
  cmd->add_flag("--activation-checkpointing", flags.activation_checkpointing,
                "Each block of the model in checkpoint_wrapper (non-reentrant): its forward runs "
                "again in backward, only its input kept");
  cmd->add_option("--precision", flags.precision,
                  "bf16 (autocast), fp16 (autocast with GradScaler) or fp32");
  cmd->add_option("--optimizer", flags.optimizer, "sgd or adamw");
  cmd->add_option("--momentum", flags.momentum,
                  "SGD's momentum, >= 0 (default: the model file's; PyTorch's default is 0)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--bucket-cap-mb", flags.ddp.bucket_cap_mb,
                  "DDP bucket cap in MiB (default 25, with a 1 MiB first bucket)")
      ->each([&flags](const std::string&) { flags.ddp.bucket_cap_set = true; });
  cmd->add_flag("--no-ddp{false}", flags.ddp.enabled,
                "The plain training step, without the DDP wrapper");
  cmd->add_flag(
      "--gradient-as-bucket-view", flags.ddp.gradient_as_bucket_view,
      "DDP's gradient_as_bucket_view=True: gradients scaled in their buckets, no copy back");
  cmd->add_flag("--pageable", flags.pageable, "Input in pageable host memory (default: pinned)");
  cmd->add_flag("--no-broadcast-buffers{false}", flags.ddp.broadcast_buffers,
                "DDP's broadcast_buffers=False: no broadcast of module buffers before forward");
  cmd->add_flag("--find-unused-parameters", flags.ddp.find_unused_parameters,
                "DDP's find_unused_parameters=True: a graph walk per step, buckets never rebuilt");
  cmd->add_flag("--first-step", flags.ddp.first_step,
                "The first step, before DDP rebuilds its buckets (default: steady state)");
  cmd->add_option("--compute", flags.compute,
                  "Layer times: measured (scaled through the work model; the default) or work");
  cmd->add_option("--measurement", flags.measurement,
                  "The model file's measurement id to scale from (default: best match)");
  cmd->add_option("--tp", flags.tp,
                  "Tensor-parallel degree: each block's Linears split over this many GPUs "
                  "(Megatron's scheme; default 1)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--pp", flags.pp,
                  "Pipeline stages: the blocks cut into this many stages, --grad-accum "
                  "micro-batches through them (default 1)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_flag("--sequence-parallel", flags.sequence_parallel,
                "With --tp: norms and dropout on 1/TP of the sequence, all-gather and "
                "reduce-scatter in place of the all-reduces");
  cmd->add_option("--schedule", flags.schedule,
                  "Pipeline schedule: gpipe, 1f1b or interleaved-1f1b (default 1f1b)")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved-1f1b"}));
  cmd->add_option("--virtual-stages", flags.virtual_stages,
                  "Model chunks per pipeline rank (interleaved-1f1b; default 1)")
      ->check(CLI::Range(1, 1 << 10));
  cmd->add_option("--pp-blocks,--pp-layers", flags.pp_blocks,
                  "Blocks per pipeline stage, comma-separated (default: even)");
  cmd->add_option("--tp-impl", flags.tp_impl,
                  "Whose tensor parallelism: pytorch (parallelize_module over DTensors, the "
                  "default) or megatron (Megatron-LM's: fused layers, no DTensor host cost, bf16 "
                  "parameters with fp32 main gradients, the DP all-reduce after the last "
                  "backward)")
      ->check(CLI::IsMember({"pytorch", "megatron"}));
  cmd->add_option("--order", flags.order,
                  "Rank order of the groups, innermost first (default tp,dp,pp: Megatron's)");
  cmd->add_option("--host-probe", flags.host_probe,
                  "The node's host probe (calibrate/host/host_probe.py's JSON): host costs are "
                  "carried to it (default: the calibration's, else the reference host)");
}

workload::TrainingOptions step_options(const StepFlags& a, const workload::Model& model) {
  workload::TrainingOptions o = workload::default_options(model);
  if (a.batch > 0) o.batch = a.batch;
  if (a.seq > 0) {
    if (!model.settings.seq) {
      throw InputError("key 'seq': model '" + model.name + "' has no sequence length (" +
                       model.file + ")");
    }
    o.seq = a.seq;
  }
  if (!a.precision.empty()) {
    if (a.precision != "bf16" && a.precision != "fp32" && a.precision != "fp16")
      throw InputError("key 'precision': unknown precision '" + a.precision +
                       "'; valid: bf16, fp32, fp16");
    o.precision = a.precision == "bf16"   ? workload::Precision::bf16
                  : a.precision == "fp16" ? workload::Precision::fp16
                                          : workload::Precision::fp32;
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
  if (!(a.ddp.bucket_cap_mb > 0)) throw InputError("key 'bucket-cap-mb': must be above 0");
  o.ddp = a.ddp;
  if (a.strategy == "auto")
    throw InputError("key 'strategy': auto applies only to plan, which tries each strategy");
  o.strategy = a.strategy == "fsdp"   ? workload::Strategy::fsdp
               : a.strategy == "hsdp" ? workload::Strategy::hsdp
                                      : workload::Strategy::ddp;
  if (!workload::sharded(o.strategy) &&
      (!a.reshard_after_forward.empty() || !a.param_dtype.empty() || !a.reduce_dtype.empty()))
    throw InputError(
        "key 'strategy': --reshard-after-forward, --param-dtype and --reduce-dtype apply only to "
        "--strategy fsdp or hsdp");
  // FSDP2 with fp16 needs ShardedGradScaler, whose found_inf all-reduce is not modelled.
  if (workload::sharded(o.strategy) && o.precision == workload::Precision::fp16)
    throw InputError(
        "key 'precision': fp16 (GradScaler) goes only with --strategy ddp; FSDP's "
        "ShardedGradScaler is not modelled");
  if (a.shard_degree > 0 && o.strategy != workload::Strategy::hsdp)
    throw InputError("key 'shard-degree': applies only to --strategy hsdp");
  o.fsdp.shard_degree = a.shard_degree;
  if (workload::sharded(o.strategy) && !a.ddp.enabled)
    throw InputError("key 'strategy': --no-ddp is the plain step; it does not go with " +
                     a.strategy);
  o.fsdp.reshard_after_forward = a.reshard_after_forward != "false";
  if (a.param_dtype == "fp32") o.fsdp.param_dtype = workload::Dtype::fp32;
  if (a.reduce_dtype == "bf16") o.fsdp.reduce_dtype = workload::Dtype::bf16;
  o.grad_accum = a.grad_accum;
  if (a.sync_every_micro && a.grad_accum < 2)
    throw InputError("key 'sync-every-micro-batch': applies with --grad-accum 2 or more");
  o.sync_every_micro = a.sync_every_micro;
  if (a.activation_checkpointing && model.blocks.empty())
    throw InputError("key 'activation-checkpointing': model '" + model.name + "' (" + model.file +
                     ") has no blocks to checkpoint (a repeat block, or layers under a module "
                     "path with an index)");
  o.activation_checkpointing = a.activation_checkpointing;
  if (a.pageable) o.input_pinned = false;
  if (a.compute != "measured" && a.compute != "work")
    throw InputError("key 'compute': unknown source '" + a.compute + "'; valid: measured, work");
  o.compute =
      a.compute == "work" ? workload::ComputeSource::work : workload::ComputeSource::measured;
  o.measurement = a.measurement;
  o.parallel.tp = a.tp;
  o.parallel.pp = a.pp;
  o.parallel.sequence_parallel = a.sequence_parallel;
  if (a.sequence_parallel && a.tp < 2)
    throw InputError("flag '--sequence-parallel': applies with --tp 2 or more");
  o.parallel.schedule = a.schedule == "gpipe"  ? workload::PipelineSchedule::gpipe
                        : a.schedule == "1f1b" ? workload::PipelineSchedule::one_f_one_b
                                               : workload::PipelineSchedule::interleaved;
  o.parallel.virtual_stages = a.virtual_stages;
  o.parallel.order = a.order;
  o.parallel.megatron = a.tp_impl == "megatron";
  if (!a.pp_blocks.empty()) {
    std::stringstream in(a.pp_blocks);
    for (std::string part; std::getline(in, part, ',');) {
      char* end = nullptr;
      const long n = std::strtol(part.c_str(), &end, 10);
      if (part.empty() || *end != '\0' || n < 1 || n > (1 << 20))
        throw InputError("flag '--pp-blocks': '" + part + "' is not a count of blocks >= 1");
      o.parallel.blocks_per_stage.push_back(static_cast<int>(n));
    }
  }
  if (o.parallel.any() && workload::sharded(o.strategy))
    throw InputError(
        "flag '--tp': tensor and pipeline parallelism run beside --strategy ddp "
        "(Megatron's data parallelism); " +
        a.strategy + " beside them is not modelled yet");
  if (!a.host_probe.empty()) {
    const cal::NodeHost h = cal::read_host_probe_file(a.host_probe, "--host-probe file");
    system::set_host(o, h, "host probe " + h.file);
  }
  return o;
}

void apply_calibration(const cal::Calibration& calibration, topo::Cluster& cluster,
                       const std::vector<int>& ranks) {
  cal::check_calibration_match(calibration, cluster, ranks);
  cal::apply_links(calibration, cluster);
  cal::apply_op_links(cal::nccl_fit_for(calibration, "allreduce"), cluster);
}

}  // namespace cs::cli
