// Capacity planning's arithmetic: from a candidate cluster's predicted step to the time and money a
// training run takes on it, and which candidates no other beats on both (the Pareto front).
// Pure functions over plain numbers; the step itself comes from the DDP model
// (cli/step/ddp_predict).
#pragma once

#include <string>
#include <vector>

namespace cs::plan {

// What the run must get through: samples, tokens (samples x sequence length) or optimizer steps.
enum class TargetKind { samples, tokens, steps };
struct Target {
  TargetKind kind = TargetKind::samples;
  double amount = 0;  // > 0
};
const char* to_string(TargetKind kind);  // "samples", "tokens", "steps"

// One cluster size of one topology, as the step model predicted it. A candidate that could not be
// predicted (the model does not fit) carries the reason instead of the numbers; one without a
// price has its time and throughput, and the reason its cost is unknown.
struct Candidate {
  std::string topology;
  int servers = 0;
  int gpus = 0;
  int batch_per_gpu = 0;         // samples per data-parallel rank per step
  int model_parallel = 1;        // GPUs per data-parallel rank (TP x PP); 1 for DDP and FSDP
  int seq = 0;                   // tokens per sample; 0 when the model has no sequence
  double step_s = 0;             // predicted time of one training step
  double single_gpu_step_s = 0;  // the same per-GPU batch on one GPU, for scaling efficiency
  double usd_per_hour = 0;       // the whole cluster: sum over its servers' prices
  std::string price_source;
  std::string compute_note;  // where the GPU's kernel times come from
  // From the step's breakdown, to see what holds a candidate back (per step, milliseconds).
  double compute_ms = 0;  // forward + backward + optimizer on the compute stream
  double exposed_communication_ms = 0;
  double host_bound_idle_ms = 0;
  double tp_exposed_ms = 0;       // the compute stream waiting on tensor-parallel collectives
  double pipeline_bubble_ms = 0;  // the pipeline's idle time on its last rank
  std::string strategy;           // with plan --strategy auto: the layout picked ("fsdp, 4 x 2")
  std::string why_not;            // non-empty: no numbers below, this says why
  std::string cost_unknown;       // non-empty: no price, so no cost figures below; this says why

  // Filled by evaluate():
  double samples_per_s = 0;
  double tokens_per_s = 0;
  double efficiency = 0;  // throughput per GPU against one GPU's
  double steps = 0;       // optimizer steps to reach the target (whole steps)
  double hours = 0;
  double usd = 0;
  double usd_per_million = 0;  // per million samples, or tokens when the target is tokens
  std::string over_limit;      // non-empty: the run passes --max-hours or --max-cost
  bool pareto = false;
};

struct Limits {
  double max_hours = 0;  // 0: none
  double max_usd = 0;    // 0: none
};

// Fills the derived numbers of a candidate that has a step time, and its cost where it has a
// price. The run takes ceil(target / work per step) steps; on-demand instances bill by the second
// (AWS EC2 for Linux), so cost is hours x price without rounding to whole hours. --max-cost does
// not mark a candidate whose cost is unknown.
void evaluate(Candidate& c, const Target& target, const Limits& limits);

// Marks every evaluated candidate with a cost, within the limits, that no other such candidate
// beats on both time and cost (no worse on one, better on the other). O(n log n).
void mark_pareto(std::vector<Candidate>& candidates);

// Cheapest first, ties by time, topology and servers; then candidates without a price, fastest
// first; candidates without numbers last, in their given order.
void sort_by_cost(std::vector<Candidate>& candidates);

}  // namespace cs::plan
