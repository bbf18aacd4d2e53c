// What `clustersim ddp` and `clustersim scale` share: the step's flags, and one DDP step
// predicted on a set of ranks of a topology (memory check, layer times, bucket all-reduces on the
// collective model, the step in time).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "calibration/calfile/calibration_file.hpp"
#include "topology/cluster.hpp"
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
  double momentum = -1;  // --momentum; below 0: the model file's
  double bucket_cap_mb = workload::kDefaultBucketCapMb;
  bool bucket_cap_set = false;
  bool no_ddp = false;
  bool bucket_view = false;
  bool pageable = false;
  bool no_broadcast_buffers = false;
  bool find_unused = false;
  bool first_step = false;
  std::string compute = "measured";
  std::string measurement;
  std::string host_probe;  // --host-probe FILE
};
void add_step_flags(CLI::App* cmd, StepFlags& flags);
workload::StepOptions step_options(const StepFlags& flags, const workload::Model& model);

// A link direction among the busiest of the step's all-reduces, for the trace: its name, its
// capacity, and the bytes each bucket's all-reduce moves over it (the collective alone on the
// flow network; the same bytes whatever compute stretches it to).
struct LinkLoad {
  std::string name;  // "from -> to (kind label)"
  double capacity_Bps = 0;
  std::vector<double> bucket_bytes;  // per bucket
};

struct DdpPrediction {
  topo::GpuModel gpu;
  workload::GpuCompute compute;
  workload::StepPlan plan;
  workload::StepResult result;
  workload::MemoryEstimate memory;
  int ranks = 1;
  int servers = 1;                      // distinct servers the ranks run on
  std::vector<LinkLoad> busiest_links;  // filled when asked (predict_ddp's `links`), busiest first
};

// One step of `model` on `ranks` of `cluster` (a calibration, when given, already applied to the
// cluster's links by the caller through apply_calibration). Throws InputError when the ranks run
// on several GPU models or the step does not fit in a GPU's memory (with the largest batch).
// `links` > 0 also fills busiest_links with that many link directions (it re-runs each distinct
// bucket size once on the flow network: only for the trace).
DdpPrediction predict_ddp(const topo::Cluster& cluster, const workload::Model& model,
                          const workload::StepOptions& options, const std::vector<int>& ranks,
                          const cal::Calibration* calibration, int links = 0);

// Applies a calibration's link fits and the all-reduce's NCCL link fits to the cluster.
void apply_calibration(const cal::Calibration& calibration, topo::Cluster& cluster,
                       const std::vector<int>& ranks);

}  // namespace cs::cli
