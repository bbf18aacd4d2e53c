// The step files of calibrate/ddp/ddp_steps.py (schema "clustersim-ddp-steps/1"): PyTorch
// training steps measured one process per GPU, without DDP (`plain`) and under DDP with a bucket
// cap (`ddp<cap>`), one file per model, batch and GPU count. `clustersim validate --ddp` predicts
// them (calibrate/README.md, "DDP steps").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace cs::cal {

inline constexpr const char* kDdpStepsSchema = "clustersim-ddp-steps/1";
// calibrate/fsdp/fsdp_steps.py's files: the same run fields, variants plain, ddp<cap> and FSDP2's
// (fsdp, fsdp-noreshard, fsdp-default), each with -ac (activation checkpointing) and -accumK
// (K micro-batches a step) after it, and #2 (a second build) last.
inline constexpr const char* kFsdpStepsSchema = "clustersim-fsdp-steps/1";

// One way of running the step: its name in the file and its measured time.
struct DdpVariant {
  std::string name;          // "plain", "ddp25", "ddp2.5", "fsdp", "fsdp-noreshard"
  double bucket_cap_mb = 0;  // ddp<cap>: the cap in MiB; 0: plain (no DDP wrapper) or FSDP
  double step_ms = 0;        // step_ms_median: the median over steps of the slowest rank's step
  bool fsdp = false;         // an FSDP2 variant
  bool reshard_after_forward = true;      // FSDP2's
  bool simulated = true;                  // false: a setting the simulator does not run
  bool activation_checkpointing = false;  // -ac
  int grad_accum = 1;                     // -accumK
  // torch.cuda.max_memory_allocated() of the largest rank over the steps, where recorded.
  std::optional<double> peak_allocated_bytes;
  // The name's modifiers ("-ac-accum4"): variants of one run with the same modifiers compare.
  std::string modifiers() const;
  bool plain() const { return !fsdp && bucket_cap_mb == 0; }
};

struct DdpStepFile {
  std::string file;
  std::string model;   // a model file's name: <models>/<model>.yaml
  SourceLoc model_at;  // where the file names it, for an error about the model file
  int batch = 1;       // per GPU
  std::optional<int> seq;
  std::string precision;  // bf16 or fp32
  std::string optimizer;  // sgd or adamw
  std::optional<double> momentum;
  int world_size = 1;  // GPUs, one process each
  SourceLoc world_size_at;
  // The run's NCCL_NVLS_ENABLE (node.nccl_env): false for "0", true for another integer;
  // nullopt where the file does not record it.
  std::optional<bool> nvls;
  std::vector<DdpVariant> variants;  // plain first, then by bucket cap
};

// Parses one step file's text. Returns nullopt for JSON of another schema (or none: a host probe,
// a timeline); throws InputError "file:line: key 'k': ..." for text that is not JSON or a step
// file that is malformed.
std::optional<DdpStepFile> parse_ddp_step_file(const std::string& text,
                                               const std::string& file_name);

// A folder of a DDP run: every *.json file read (step files and the others beside them), in name
// order, and the step files among them, in order of model, batch and GPU count.
struct DdpStepFolder {
  std::string folder;
  std::vector<std::string> files;
  std::vector<DdpStepFile> steps;
};

// Reads every *.json file of `folder`; throws InputError when the folder is missing or holds no
// step file.
DdpStepFolder read_ddp_step_folder(const std::string& folder);

}  // namespace cs::cal
