// The step files of calibrate/parallel/ (schema "clustersim-parallel-steps/1"): PyTorch training
// steps measured one process per GPU under tensor parallelism (`tp`, `tp-sp`: parallelize_module
// over every rank), pipeline parallelism (`pp-gpipe`, `pp-1f1b`: torch.distributed.pipelining,
// one stage per rank) and the same model unsharded on one GPU (`plain`). One file per variant and
// configuration. `clustersim validate --parallel` predicts them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace cs::cal {

inline constexpr const char* kParallelStepsSchema = "clustersim-parallel-steps/1";

struct ParallelStepFile {
  std::string file;
  std::string model;  // a model file's name: <models>/<model>.yaml
  SourceLoc model_at;
  std::string variant;  // plain, tp, tp-sp, pp-gpipe, pp-1f1b
  int world_size = 1;   // GPUs, one process each: the TP degree, or the pipeline's stages
  SourceLoc world_size_at;
  int seq = 0;
  int batch = 1;          // per micro-batch (TP, plain: the whole step's)
  int micro_batches = 1;  // a pipeline's per step
  double step_ms = 0;     // step_ms_median: the median over steps of the slowest rank's step
  std::optional<double> peak_allocated_bytes;  // the largest rank's
  bool pipeline() const { return variant.rfind("pp-", 0) == 0; }
  bool sequence_parallel() const { return variant == "tp-sp"; }
};

// Parses one step file's text. Returns nullopt for JSON of another schema; throws InputError
// "file:line: key 'k': ..." for text that is not JSON or a step file that is malformed.
std::optional<ParallelStepFile> parse_parallel_step_file(const std::string& text,
                                                         const std::string& file_name);

// Every parallel step file of `folder`, in name order; throws InputError when the folder is
// missing or holds none.
std::vector<ParallelStepFile> read_parallel_step_folder(const std::string& folder);

}  // namespace cs::cal
