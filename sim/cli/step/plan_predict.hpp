// One candidate of `clustersim plan` (and of a plan sweep): a topology at a server count, its
// DDP step predicted on every GPU, its price summed over its servers. What could not be predicted
// (the model does not fit, a global batch that does not split) becomes the candidate's why_not
// rather than an error, so that the other candidates still compare; a missing price leaves the
// time and makes the cost unknown (cost_unknown).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plan/candidates.hpp"
#include "topology/cluster/cluster.hpp"
#include "workload/ddp/step_plan.hpp"
#include "workload/model/model.hpp"

namespace cs::cli {

// --price TEMPLATE=USD_PER_HOUR, by template name.
using PriceOverrides = std::map<std::string, double>;

// "p5.48xlarge=55.04" into `prices`; InputError naming --price otherwise.
void parse_price_override(const std::string& text, PriceOverrides& prices);

// The candidate `cluster` (loaded, and resized, by the caller: errors there are bad input, not a
// candidate that loses). `global_batch` 0 keeps the per-GPU batch of `options`, else it is split
// over the GPUs. `templates_seen` collects the template names, so that the caller can refuse a
// --price naming none of them.
plan::Candidate predict_candidate(const topo::Cluster& cluster, int global_batch,
                                  const workload::Model& model,
                                  const workload::TrainingOptions& options,
                                  const PriceOverrides& prices,
                                  std::map<std::string, bool>* templates_seen = nullptr);

// plan --strategy auto: the same candidate under DDP, FSDP and (on several servers) HSDP
// sharded per server, each with and without activation checkpointing, each at the fewest
// micro-batches (the largest micro-batch) that fits; then Megatron's layouts, TP within a server
// x PP over the blocks x DDP over the rest, at micro-batches of 1 to 8 samples (checkpointed
// where they do not fit otherwise); the fastest is kept and named in its `strategy`. With a
// global batch the micro-batches divide its share per data-parallel rank; without one,
// `options`' batch runs as one micro-batch. `options`' own --tp or --pp fix those degrees (and
// leave out the data-parallel-only layouts).
// `layouts`, when given, counts the layouts predicted.
plan::Candidate predict_candidate_auto(const topo::Cluster& cluster, int global_batch,
                                       const workload::Model& model,
                                       const workload::TrainingOptions& options,
                                       const PriceOverrides& prices,
                                       std::map<std::string, bool>* templates_seen = nullptr,
                                       int* layouts = nullptr);

// A candidate's figures by column name, in the order of kCandidateColumns. One that cannot run has
// only what was known before it failed (its step and price, where it got that far); one without
// a price has no cost figures.
std::vector<std::pair<std::string, double>> candidate_figures(const plan::Candidate& c);
inline constexpr const char* kCandidateColumns[] = {"step_ms",
                                                    "samples_per_s",
                                                    "tokens_per_s",
                                                    "efficiency",
                                                    "steps",
                                                    "hours",
                                                    "cost_usd",
                                                    "usd_per_million",
                                                    "usd_per_hour",
                                                    "compute_ms",
                                                    "exposed_communication_ms",
                                                    "host_bound_idle_ms",
                                                    "tp_exposed_ms",
                                                    "pipeline_bubble_ms"};

}  // namespace cs::cli
