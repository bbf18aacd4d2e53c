// What the step commands (`ddp`, `scale`, `plan`, `sweep`, `validate --ddp`) share: the step's
// flags read into options, and a calibration applied to the cluster before a step is predicted
// (system/ddp_step.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "calibration/calfile/calibration_file.hpp"
#include "system/ddp_step.hpp"
#include "topology/cluster/cluster.hpp"
#include "workload/ddp/memory_check.hpp"
#include "workload/ddp/step_plan.hpp"
#include "workload/ddp/step_sim.hpp"
#include "workload/model/model.hpp"
#include "workload/work/work_model.hpp"

namespace cs::cli {

// The flags that set a step's options; each left unset keeps the model file's default.
struct StepFlags {
  int batch = 0;
  int seq = 0;
  std::string precision;
  std::string optimizer;
  double momentum = -1;                   // --momentum; below 0: the model file's
  workload::DdpOptions ddp;               // DDP's flags, read straight into its options
  std::string strategy = "ddp";           // --strategy ddp|fsdp
  std::string reshard_after_forward;      // --reshard-after-forward true|false (fsdp)
  std::string param_dtype, reduce_dtype;  // --param-dtype, --reduce-dtype (fsdp)
  int grad_accum = 1;                     // --grad-accum N
  int shard_degree = 0;                   // --shard-degree N (hsdp)
  bool sync_every_micro = false;          // --sync-every-micro-batch
  bool activation_checkpointing = false;  // --activation-checkpointing
  bool pageable = false;
  std::string compute = "measured";
  std::string measurement;
  std::string host_probe;  // --host-probe FILE
  // Tensor and pipeline parallelism (workload::ModelParallelOptions).
  int tp = 1, pp = 1;
  bool sequence_parallel = false;
  std::string schedule = "1f1b";
  int virtual_stages = 1;
  std::string pp_blocks;  // --pp-blocks 9,8,8,7
  std::string order = "tp,dp,pp";
  std::string tp_impl = "pytorch";  // --tp-impl pytorch|megatron
};
void add_step_flags(CLI::App* cmd, StepFlags& flags);
workload::TrainingOptions step_options(const StepFlags& flags, const workload::Model& model);

// The step itself is predicted below the CLI (system/ddp_step.hpp).
using system::DdpPrediction;
using system::LinkLoad;
using system::predict_ddp;

// Applies a calibration's link fits and the all-reduce's NCCL link fits to the cluster.
void apply_calibration(const cal::Calibration& calibration, topo::Cluster& cluster,
                       const std::vector<int>& ranks);

}  // namespace cs::cli
