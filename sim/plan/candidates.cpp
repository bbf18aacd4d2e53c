#include "plan/candidates.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "core/error.hpp"

namespace cs::plan {

const char* to_string(TargetKind kind) {
  switch (kind) {
    case TargetKind::samples:
      return "samples";
    case TargetKind::tokens:
      return "tokens";
    case TargetKind::steps:
      return "steps";
  }
  return "?";
}

void evaluate(Candidate& c, const Target& target, const Limits& limits) {
  if (!c.why_not.empty()) return;
  CS_ASSERT(c.step_s > 0 && c.gpus > 0 && c.batch_per_gpu > 0, c.topology);
  CS_ASSERT(target.amount > 0, "target");
  CS_ASSERT(c.model_parallel > 0 && c.gpus % c.model_parallel == 0, c.topology);
  const int replicas = c.gpus / c.model_parallel;
  const double samples_per_step = static_cast<double>(c.batch_per_gpu) * replicas;
  c.samples_per_s = samples_per_step / c.step_s;
  c.tokens_per_s = c.samples_per_s * c.seq;
  c.efficiency = c.single_gpu_step_s > 0
                     ? c.samples_per_s / c.gpus / (c.batch_per_gpu / c.single_gpu_step_s)
                     : 0.0;
  double work_per_s = c.samples_per_s;  // what usd_per_million counts: samples or tokens
  switch (target.kind) {
    case TargetKind::samples:
      c.steps = std::ceil(target.amount / samples_per_step);
      break;
    case TargetKind::tokens:
      if (c.seq <= 0) {
        c.why_not = "the model has no sequence length, so tokens do not apply (give --samples)";
        return;
      }
      c.steps = std::ceil(target.amount / (samples_per_step * c.seq));
      work_per_s = c.tokens_per_s;
      break;
    case TargetKind::steps:
      c.steps = std::ceil(target.amount);
      break;
  }
  c.hours = c.steps * c.step_s / 3600.0;
  const bool priced = c.cost_unknown.empty();
  if (priced) {
    c.usd = c.hours * c.usd_per_hour;
    c.usd_per_million = c.usd_per_hour / 3600.0 / work_per_s * 1e6;
  }
  if (limits.max_hours > 0 && c.hours > limits.max_hours) {
    c.over_limit = "over --max-hours";
  } else if (priced && limits.max_usd > 0 && c.usd > limits.max_usd) {
    c.over_limit = "over --max-cost";
  }
}

void mark_pareto(std::vector<Candidate>& candidates) {
  std::vector<Candidate*> open;
  for (Candidate& c : candidates) {
    c.pareto = false;
    if (c.why_not.empty() && c.cost_unknown.empty() && c.over_limit.empty()) open.push_back(&c);
  }
  // Fastest first (cheapest first among equal times): a candidate is on the front when it is
  // cheaper than every faster one.
  std::sort(open.begin(), open.end(), [](const Candidate* a, const Candidate* b) {
    return std::tie(a->hours, a->usd) < std::tie(b->hours, b->usd);
  });
  double cheapest = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < open.size(); ++i) {
    Candidate* c = open[i];
    // An exact tie on both (the same cluster twice) puts both on the front.
    const bool tie = i > 0 && open[i - 1]->pareto && open[i - 1]->hours == c->hours &&
                     open[i - 1]->usd == c->usd;
    if (c->usd < cheapest || tie) {
      c->pareto = true;
      cheapest = std::min(cheapest, c->usd);
    }
  }
}

void sort_by_cost(std::vector<Candidate>& candidates) {
  // 0: a cost to sort by; 1: a time but no cost; 2: no numbers.
  const auto group = [](const Candidate& c) {
    return !c.why_not.empty() ? 2 : !c.cost_unknown.empty() ? 1 : 0;
  };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&group](const Candidate& a, const Candidate& b) {
                     const int ga = group(a);
                     const int gb = group(b);
                     if (ga != gb) return ga < gb;
                     if (ga == 2) return false;
                     return std::tie(a.usd, a.hours, a.topology, a.servers) <
                            std::tie(b.usd, b.hours, b.topology, b.servers);
                   });
}

}  // namespace cs::plan
