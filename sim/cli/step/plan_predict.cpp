#include "cli/step/plan_predict.hpp"

#include <cmath>
#include <cstdlib>
#include <vector>

#include "cli/step/ddp_predict.hpp"
#include "core/error.hpp"

namespace cs::cli {

void parse_price_override(const std::string& text, PriceOverrides& prices) {
  const std::size_t eq = text.find('=');
  const std::string name = eq == std::string::npos ? "" : text.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : text.substr(eq + 1);
  char* end = nullptr;
  const double usd = std::strtod(value.c_str(), &end);
  if (name.empty() || value.empty() || *end != '\0' || !std::isfinite(usd) || !(usd > 0)) {
    throw InputError("--price: '" + text +
                     "' is not TEMPLATE=USD_PER_HOUR with a price above 0 (e.g. "
                     "p5.48xlarge=55.04)");
  }
  prices[name] = usd;
}

namespace {

// The cluster's price per hour, summed over its servers; no price and a reason when a template has
// none.
struct ClusterPrice {
  double usd_per_hour = 0;
  std::string source;
  std::string missing;
};

ClusterPrice cluster_price(const topo::Cluster& cluster, const PriceOverrides& prices) {
  ClusterPrice out;
  std::map<std::string, std::string> sources;
  for (const topo::Server& s : cluster.servers) {
    const auto given = prices.find(s.template_name);
    if (given != prices.end()) {
      out.usd_per_hour += given->second;
      sources[s.template_name] = "--price";
      continue;
    }
    const topo::ServerPrice* p = cluster.price_of(s.template_name);
    if (p == nullptr) {
      return {0, "",
              "no price for server template '" + s.template_name + "'; give --price " +
                  s.template_name + "=USD_PER_HOUR"};
    }
    out.usd_per_hour += p->usd_per_hour;
    sources[s.template_name] = p->source + ", " + p->date;
  }
  for (const auto& [name, source] : sources) {
    out.source += (out.source.empty() ? "" : "; ") + name + ": " + source;
  }
  return out;
}

}  // namespace

plan::Candidate predict_candidate(const topo::Cluster& cluster, int global_batch,
                                  const workload::Model& model,
                                  const workload::TrainingOptions& options,
                                  const PriceOverrides& prices,
                                  std::map<std::string, bool>* templates_seen) {
  plan::Candidate c;
  c.topology = cluster.name;
  c.servers = static_cast<int>(cluster.servers.size());
  c.gpus = static_cast<int>(cluster.ranks.size());
  if (templates_seen != nullptr) {
    for (const topo::Server& s : cluster.servers) (*templates_seen)[s.template_name] = true;
  }
  workload::TrainingOptions o = options;
  if (global_batch > 0) {
    if (global_batch % c.gpus != 0) {
      c.why_not = "a global batch of " + std::to_string(global_batch) +
                  " does not split evenly over " + std::to_string(c.gpus) + " GPUs";
      return c;
    }
    o.batch = global_batch / c.gpus;
  }
  c.batch_per_gpu = workload::samples_per_step(o);
  c.seq = o.seq.value_or(0);
  const ClusterPrice price = cluster_price(cluster, prices);
  c.usd_per_hour = price.usd_per_hour;
  c.price_source = price.source;
  std::vector<int> ranks(static_cast<std::size_t>(c.gpus));
  for (int r = 0; r < c.gpus; ++r) ranks[static_cast<std::size_t>(r)] = r;
  try {
    const DdpPrediction all = predict_ddp(cluster, model, o, ranks, nullptr);
    const DdpPrediction one = predict_ddp(cluster, model, o, {0}, nullptr);
    const workload::StepBreakdown& b = all.result.breakdown;
    c.step_s = b.step_us / 1e6;
    c.single_gpu_step_s = one.result.breakdown.step_us / 1e6;
    c.compute_note = all.gpu.name + ": " + all.plan.compute_note + "; host: " + all.plan.host_note;
    c.compute_ms = (b.forward_us + b.backward_us + b.optimizer_us) / 1e3;
    c.exposed_communication_ms = b.exposed_communication_us / 1e3;
    c.host_bound_idle_ms = b.host_bound_idle_us / 1e3;
  } catch (const InputError& e) {
    // The model does not fit this GPU, or the cluster mixes GPU models: this candidate is out.
    c.why_not = e.what();
    return c;
  }
  c.cost_unknown = price.missing;
  return c;
}

std::vector<std::pair<std::string, double>> candidate_figures(const plan::Candidate& c) {
  std::vector<std::pair<std::string, double>> out;
  const bool runs = c.why_not.empty();
  const bool priced = runs && c.cost_unknown.empty();
  const auto add = [&](const char* name, double value, bool known) {
    if (known) out.emplace_back(name, value);
  };
  add("step_ms", c.step_s * 1e3, c.step_s > 0);
  add("samples_per_s", c.samples_per_s, runs);
  add("tokens_per_s", c.tokens_per_s, runs);
  add("efficiency", c.efficiency, runs);
  add("steps", c.steps, runs);
  add("hours", c.hours, runs);
  add("cost_usd", c.usd, priced);
  add("usd_per_million", c.usd_per_million, priced);
  add("usd_per_hour", c.usd_per_hour, c.usd_per_hour > 0);
  add("compute_ms", c.compute_ms, c.step_s > 0);
  add("exposed_communication_ms", c.exposed_communication_ms, c.step_s > 0);
  add("host_bound_idle_ms", c.host_bound_idle_ms, c.step_s > 0);
  return out;
}

}  // namespace cs::cli
