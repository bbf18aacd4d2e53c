// `clustersim validate --ddp`'s arithmetic: measured DDP steps (ddp_steps.hpp) against predicted
// ones, the DDP overhead (a DDP step less the plain step of the same run) and the summary of
// |error| per GPU count. The predictions come from the caller (the CLI runs the workload layer's
// step, which this layer may not use); nothing here simulates.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibration/measurements/ddp_steps.hpp"

namespace cs::cal {

// A DDP step less the plain step of its run, measured and predicted; errors are relative to
// |measured| (nullopt where the measured overhead is 0).
struct DdpOverhead {
  double measured_ms = 0;
  double prior_ms = 0;
  std::optional<double> calibrated_ms;
  std::optional<double> prior_error;
  std::optional<double> calibrated_error;
};

// One measured variant of one run and its predictions. The caller fills the fields up to
// calibrated_ms; validate_ddp_steps fills the rest.
struct DdpStepRow {
  std::string data;  // the folder's name
  std::string file;  // the step file: rows of one file are one run
  std::string model;
  int batch = 1;
  int gpus = 1;
  std::string variant;  // plain, ddp<cap>
  bool plain = false;
  bool fsdp = false;  // an FSDP2 variant: summed as "fsdp step" and "fsdp overhead"
  // "-ac", "-accum4", "-ac-accum4" or "": a variant with modifiers is summed in the "ac step" or
  // "accum step" group, not with the plain steps, and its overhead is over the plain step with
  // the same modifiers.
  std::string modifiers;
  bool activation_checkpointing = false;
  int grad_accum = 1;
  double measured_ms = 0;
  double prior_ms = 0;
  std::optional<double> calibrated_ms;  // with a calibration
  double prior_error = 0;               // (predicted - measured) / measured
  std::optional<double> calibrated_error;
  std::optional<DdpOverhead> overhead;  // DDP variants of a run that has a plain step
  // Peak memory, PyTorch's allocator's (the largest rank's max_memory_allocated) against the
  // memory check's peak without what lies outside the allocator; where the run recorded it.
  std::optional<double> measured_peak_bytes;
  double predicted_peak_bytes = 0;
  std::optional<double> memory_error;  // (predicted - measured) / measured
};

// Median and worst |error| of one kind of figure over one set of GPU counts.
struct DdpSummaryRow {
  std::string what;  // "ddp step", "plain step", "ddp overhead"
  std::string gpus;  // "1", ">=2", "all"
  int points = 0;
  double prior_median = 0;
  double prior_worst = 0;
  std::optional<double> calibrated_median;  // with a calibration and points
  std::optional<double> calibrated_worst;
};

struct DdpValidation {
  std::vector<std::string> data;  // the folders' names, in the order given
  std::string topology;
  std::string calibration;  // what the calibrated column is; "" without one
  std::string nccl;         // how NCCL was set ("NVLS off, as the runs set NCCL_NVLS_ENABLE=0")
  std::string host;         // the host the host costs were carried to
  std::vector<DdpStepRow> rows;
  std::vector<DdpSummaryRow> summary;  // what x gpus, in that order, empty groups included
  bool calibrated() const { return !calibration.empty(); }
};

// Fills each row's errors and overhead and returns them with the summary; rows keep their order.
// `calibrated`: every row has calibrated_ms.
DdpValidation validate_ddp_steps(std::vector<DdpStepRow> rows, bool calibrated);

// A row's measured side: what run `f` of folder `data` measured for variant `v`.
DdpStepRow measured_row(const std::string& data, const DdpStepFile& f, const DdpVariant& v);

}  // namespace cs::cal
