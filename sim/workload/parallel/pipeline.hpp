// Pipeline parallelism: the model's blocks cut into stages, each stage's ranks running their
// micro-batches' forward and backward passes in a schedule's order (GPipe, 1F1B, interleaved
// 1F1B with virtual stages), activations and their gradients sent between neighbouring stages.
// The step is a task graph over the pipeline's ranks: a task starts when its rank has finished
// the task before it and its input has arrived; the bubble is what the ranks wait, not a formula.
// Rules and sources: workload/parallel/README.md.
#pragma once

#include <string>
#include <vector>

#include "workload/model/model.hpp"
#include "workload/step/strategy.hpp"

namespace cs::workload {

// One task of a rank: a micro-batch's forward or backward through one of its model chunks
// (stage = chunk * ranks + rank: Megatron's interleaved placement; one chunk per rank without
// interleaving).
struct PipelineTask {
  bool backward = false;
  int chunk = 0;  // the rank's model chunk, 0 .. virtual_stages - 1
  int micro = 0;  // the micro-batch
};

// Each rank's tasks in the order its schedule runs them: GPipe every forward then every
// backward; 1F1B (PipeDream-Flush, PyTorch's Schedule1F1B and Megatron's non-interleaved
// schedule) ranks - rank - 1 warm-up forwards, then one forward and one backward in turn, then
// the remaining backwards; interleaved 1F1B Megatron's order over `virtual_stages` chunks per rank
// (micro_batches a multiple of ranks). Throws InputError naming the flag when the schedule
// cannot run these counts.
std::vector<std::vector<PipelineTask>> pipeline_order(PipelineSchedule schedule, int ranks,
                                                      int virtual_stages, int micro_batches);

// The most micro-batches whose activations a rank holds at once under `order` (forwards run,
// backwards not yet), per rank, counted in model chunks.
std::vector<int> in_flight(const std::vector<std::vector<PipelineTask>>& order);

// Times of the pipeline's parts, per stage (chunk * ranks + rank): a micro-batch's forward and
// backward, the send of its activations to the next stage (and of their gradient back: the same
// bytes), and what each rank does after its last backward (the data-parallel gradient
// synchronisation and the optimizer step).
struct PipelineTimes {
  std::vector<double> forward_us, backward_us;  // per stage
  std::vector<double> send_us;                  // per stage boundary s -> s + 1
  std::vector<double> tail_us;                  // per rank
};

struct PipelineSpan {
  int rank = 0;
  PipelineTask task;
  double start_us = 0, end_us = 0;
};

struct PipelineRun {
  double step_us = 0;
  std::vector<double> busy_us;  // per rank: its forwards and backwards
  std::vector<double> end_us;   // per rank: its last backward's end
  std::vector<PipelineSpan> spans;
  // The rank that ends last: its waits inside the pipeline (end - busy) are the bubble.
  int critical_rank = 0;
  double bubble_us = 0;
};

// Runs the task graph: each rank's tasks in order, a forward after the previous stage's forward
// of that micro-batch plus its send, a backward after the next stage's backward plus its send
// (the last stage's after its own forward); the step ends when every rank's tail ends.
PipelineRun run_pipeline(const std::vector<std::vector<PipelineTask>>& order,
                         const PipelineTimes& times);

// The layers of stage `stage` of `stages`: the blocks split as `blocks_per_stage` says (empty:
// evenly, the first stages taking one more when they do not divide), the layers before the first
// block on the first stage and those after the last block on the last. Returns [first, end) in
// Model::layers.
std::pair<int, int> stage_layers(const Model& model, int stages, int stage,
                                 const std::vector<int>& blocks_per_stage);

// A stage's own model: its layers and blocks, the measurements' optimizer and host times carried
// by its share of the parameters and of the measured kernels.
Model stage_model(const Model& model, int first_layer, int end_layer);

}  // namespace cs::workload
