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
    // Each GPU's share, in options.grad_accum micro-batches.
    const int per_step = c.gpus * o.grad_accum;
    if (global_batch % per_step != 0) {
      c.why_not = "a global batch of " + std::to_string(global_batch) +
                  " does not split evenly over " + std::to_string(c.gpus) + " GPUs" +
                  (o.grad_accum > 1 ? " x " + std::to_string(o.grad_accum) + " micro-batches"
                                    : std::string());
      return c;
    }
    o.batch = global_batch / per_step;
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
    const workload::StepBreakdown& b = all.result.breakdown;
    c.step_s = b.step_us / 1e6;
    // The same per-GPU step on one GPU, for the scaling efficiency: none where it does not fit
    // one GPU (a sharded model), and the efficiency is then unknown.
    try {
      c.single_gpu_step_s =
          predict_ddp(cluster, model, o, {0}, nullptr).result.breakdown.step_us / 1e6;
    } catch (const InputError&) {
      c.single_gpu_step_s = 0;
    }
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

namespace {

std::string layout_name(const workload::TrainingOptions& o) {
  std::string s = workload::to_string(o.strategy);
  if (o.activation_checkpointing) s += " + checkpointing";
  if (o.grad_accum > 1)
    s += ", " + std::to_string(o.grad_accum) + " x " + std::to_string(o.batch) +
         (o.sync_every_micro ? " micro-batches, each synchronised" : " micro-batches");
  return s;
}

}  // namespace

plan::Candidate predict_candidate_auto(const topo::Cluster& cluster, int global_batch,
                                       const workload::Model& model,
                                       const workload::TrainingOptions& options,
                                       const PriceOverrides& prices,
                                       std::map<std::string, bool>* templates_seen) {
  const int gpus = static_cast<int>(cluster.ranks.size());
  const int share = global_batch > 0 ? global_batch / gpus : options.batch;
  std::optional<plan::Candidate> best;
  plan::Candidate last;
  struct Layout {
    workload::Strategy strategy;
    bool checkpointing, sync_every;
  };
  const workload::Strategy ddp = workload::Strategy::ddp;
  const workload::Strategy fsdp = workload::Strategy::fsdp;
  const workload::Strategy hsdp = workload::Strategy::hsdp;
  // FSDP2 accumulating without reducing keeps unsharded gradients: reducing every micro-batch
  // is the layout that fits when that does not.
  // HSDP (a shard group per server) where there are servers to replicate across.
  for (const Layout layout :
       {Layout{ddp, false, false}, Layout{ddp, true, false}, Layout{fsdp, false, false},
        Layout{fsdp, true, false}, Layout{fsdp, false, true}, Layout{fsdp, true, true},
        Layout{hsdp, false, false}, Layout{hsdp, true, false}, Layout{hsdp, false, true},
        Layout{hsdp, true, true}}) {
    if (layout.strategy == hsdp && cluster.servers.size() < 2) continue;
    {
      const bool checkpointing = layout.checkpointing;
      if (checkpointing && model.blocks.empty()) continue;
      workload::TrainingOptions o = options;
      o.strategy = layout.strategy;
      o.activation_checkpointing = checkpointing;
      // The fewest micro-batches that fit: accumulation only when the global batch needs it.
      for (int micro = 1; micro <= share; ++micro) {
        if (share % micro != 0 || (global_batch <= 0 && micro > 1)) continue;
        if (layout.sync_every && micro == 1) continue;
        o.grad_accum = micro;
        o.sync_every_micro = layout.sync_every;
        o.batch = share / micro;
        plan::Candidate c = predict_candidate(cluster, global_batch > 0 ? global_batch : 0, model,
                                              o, prices, templates_seen);
        c.strategy = layout_name(o);
        if (!c.why_not.empty()) {
          last = std::move(c);
          if (global_batch > 0 && global_batch % gpus != 0) return last;
          continue;
        }
        if (!best || c.step_s < best->step_s) best = std::move(c);
        break;
      }
    }
  }
  if (!best) {
    last.why_not = "no strategy fits (the last tried, " + last.strategy + "): " + last.why_not;
    return last;
  }
  return *best;
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
  add("efficiency", c.efficiency, runs && c.efficiency > 0);
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
