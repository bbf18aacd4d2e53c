// Published end-to-end training runs (calibrate/published/training.yaml) and their prediction:
// each run is one row of a published table (a model, its TP x PP x DP layout, its GPUs, global
// batch and micro-batch, and the throughput the source measured). The step is predicted as
// `clustersim ddp` would with the row's flags; the source's FLOP count per iteration turns it
// into TFLOP/s per GPU beside the published figure. `clustersim compare` renders the result.
#pragma once

#include <string>
#include <vector>

#include "core/error.hpp"

namespace cs::cli {

struct PublishedRun {
  std::string model;  // resolved against the file's folder; empty: no model file, skipped
  SourceLoc at;       // the run's line
  double params_b = 0;
  int hidden = 0, layers = 0, heads = 0;
  int tp = 1, pp = 1, gpus = 0;
  int global_batch = 0, micro_batch = 1;
  double tflops_per_gpu = 0;  // as published
  std::string role;           // fit | check
};

struct PublishedRunSet {
  std::string name;
  std::string source;
  std::string topology;  // resolved against the file's folder
  int gpus_per_node = 8;
  int seq = 0;
  std::string precision, optimizer, tp_impl, schedule = "1f1b";
  int virtual_stages = 1;
  bool activation_checkpointing = false;
  std::string flops;  // the FLOP formula's name: megatron-sc21
  int vocab = 0;
  std::vector<PublishedRun> runs;
};

// True when the YAML file's sets are training runs (a set holds `runs`), not nccl-tests points.
bool holds_training_runs(const std::string& path);

// Reads and checks a training runs file: file:line:key errors for unknown keys, a role other than
// fit/check, a missing topology or model file, a formula the simulator does not know, a layout
// that does not divide the GPUs, the global batch or the servers.
std::vector<PublishedRunSet> load_published_runs(const std::string& path);

// Megatron-LM's FLOPs per iteration (Narayanan et al., SC21, section 5.1, equation 3; it counts
// the recomputed forward of activation checkpointing): 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
double megatron_sc21_flops(double batch, double seq, double layers, double hidden, double vocab);

struct ComparedRun {
  const PublishedRun* run = nullptr;
  double flops = 0;             // per iteration, the source's formula
  double published_s = 0;       // the iteration time the published TFLOP/s per GPU implies
  double predicted_s = 0;       // 0: not predicted (no model file)
  double predicted_tflops = 0;  // per GPU
  double error = 0;             // (predicted - published) / published, of the iteration time
  double bubble_s = 0, tp_exposed_s = 0, dp_exposed_s = 0;
  int micro_batches = 0;  // per data-parallel rank
  std::string skipped;    // why a run was not predicted
};

struct ComparedRunSet {
  const PublishedRunSet* set = nullptr;
  std::string cluster;  // the topology's name
  std::vector<ComparedRun> runs;
};

// Predicts every run with a model file: the topology resized to gpus / gpus_per_node servers,
// every GPU a rank, the layout in Megatron's order (TP innermost), DDP over the rest, the global
// batch in micro-batches of micro_batch per data-parallel rank.
std::vector<ComparedRunSet> predict_runs(const std::vector<PublishedRunSet>& sets);

}  // namespace cs::cli
