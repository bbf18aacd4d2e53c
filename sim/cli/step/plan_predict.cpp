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
  // A data-parallel rank is TP x PP GPUs under model parallelism, one GPU otherwise.
  c.model_parallel = o.parallel.tp * o.parallel.pp;
  if (c.gpus % c.model_parallel != 0) {
    c.why_not = "TP " + std::to_string(o.parallel.tp) + " x PP " + std::to_string(o.parallel.pp) +
                " does not divide " + std::to_string(c.gpus) + " GPUs";
    return c;
  }
  const int replicas = c.gpus / c.model_parallel;
  if (global_batch > 0 && o.parallel.pp > 1 && o.grad_accum == 1) {
    // A pipeline runs micro-batches: of --batch samples (the model file's batch by default), as
    // many as each data-parallel rank's share holds.
    const int unit = replicas * o.batch;
    if (global_batch % unit != 0) {
      c.why_not = "a global batch of " + std::to_string(global_batch) +
                  " does not split into micro-batches of " + std::to_string(o.batch) + " over " +
                  std::to_string(replicas) + " data-parallel ranks";
      return c;
    }
    o.grad_accum = global_batch / unit;
  } else if (global_batch > 0) {
    // Each data-parallel rank's share, in options.grad_accum micro-batches.
    const int per_step = replicas * o.grad_accum;
    if (global_batch % per_step != 0) {
      c.why_not = "a global batch of " + std::to_string(global_batch) +
                  " does not split evenly over " + std::to_string(replicas) +
                  (c.model_parallel > 1 ? " data-parallel ranks" : " GPUs") +
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
    // one GPU (a sharded model, or one split by TP or PP), and the efficiency is then unknown.
    try {
      c.single_gpu_step_s =
          c.model_parallel > 1
              ? 0
              : predict_ddp(cluster, model, o, {0}, nullptr).result.breakdown.step_us / 1e6;
    } catch (const InputError&) {
      c.single_gpu_step_s = 0;
    }
    c.compute_note = all.gpu.name + ": " + all.plan.compute_note + "; host: " + all.plan.host_note;
    // With DDP's overlapped buckets the TP waits are part of the exposed communication; with
    // the all-reduce after the last backward (a pipeline, Megatron's data parallelism), of the
    // forward and backward: compute and data-parallel communication leave them out.
    const bool pipeline = o.parallel.reduce_after_backward();
    c.compute_ms =
        (b.forward_us + b.backward_us + b.optimizer_us - (pipeline ? b.tp_exposed_us : 0.0)) / 1e3;
    c.exposed_communication_ms =
        (b.exposed_communication_us - (pipeline ? 0.0 : b.tp_exposed_us)) / 1e3;
    c.host_bound_idle_ms = b.host_bound_idle_us / 1e3;
    c.tp_exposed_ms = b.tp_exposed_us / 1e3;
    c.pipeline_bubble_ms = b.pipeline_bubble_us / 1e3;
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
  std::string s;
  if (o.parallel.any()) {
    s = "TP " + std::to_string(o.parallel.tp) + " x PP " + std::to_string(o.parallel.pp) + ", ";
  }
  s += workload::to_string(o.strategy);
  if (o.activation_checkpointing) s += " + checkpointing";
  if (o.grad_accum > 1)
    s += ", " + std::to_string(o.grad_accum) + " x " + std::to_string(o.batch) +
         (o.sync_every_micro ? " micro-batches, each synchronised" : " micro-batches");
  return s;
}

struct Search {
  const topo::Cluster& cluster;
  int global_batch;
  const workload::Model& model;
  const PriceOverrides& prices;
  std::map<std::string, bool>* templates_seen;
  std::optional<plan::Candidate> best;
  plan::Candidate last;
  int tried = 0;

  // Predicts `o` as a candidate; true when it runs (and keeps it if it is the fastest yet).
  bool run(const workload::TrainingOptions& o) {
    ++tried;
    plan::Candidate c = predict_candidate(cluster, global_batch > 0 ? global_batch : 0, model, o,
                                          prices, templates_seen);
    c.strategy = layout_name(o);
    if (!c.why_not.empty()) {
      last = std::move(c);
      return false;
    }
    if (!best || c.step_s < best->step_s) best = std::move(c);
    return true;
  }
};

// The data-parallel layouts: DDP, FSDP2 and (on several servers) HSDP per server, each with and
// without checkpointing, at the fewest micro-batches that fit.
void search_data_parallel(Search& s, const workload::TrainingOptions& options, int share) {
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
    if (layout.strategy == hsdp && s.cluster.servers.size() < 2) continue;
    if (layout.checkpointing && s.model.blocks.empty()) continue;
    workload::TrainingOptions o = options;
    o.strategy = layout.strategy;
    o.activation_checkpointing = layout.checkpointing;
    o.parallel.megatron = false;  // PyTorch's DDP and FSDP2; --tp-impl is for the layouts below
    // The fewest micro-batches that fit: accumulation only when the global batch needs it.
    for (int micro = 1; micro <= share; ++micro) {
      if (share % micro != 0 || (s.global_batch <= 0 && micro > 1)) continue;
      if (layout.sync_every && micro == 1) continue;
      o.grad_accum = micro;
      o.sync_every_micro = layout.sync_every;
      o.batch = share / micro;
      if (s.run(o)) break;
    }
  }
}

// Megatron's layouts: TP over the divisors of a server's GPUs (`options`' own --tp if given), PP
// over the divisors of the blocks (its --pp if given), DDP over the rest of the GPUs; each with
// micro-batches of 1, 2, 4 and 8 samples while they fit, with checkpointing only from the size
// that does not fit without it. The pipeline runs options' schedule.
void search_model_parallel(Search& s, const workload::TrainingOptions& options) {
  const int gpus = static_cast<int>(s.cluster.ranks.size());
  const int per_server = static_cast<int>(s.cluster.servers.front().gpus.size());
  const int blocks = static_cast<int>(s.model.blocks.size());
  if (blocks == 0) return;
  std::vector<int> tps, pps;
  for (int tp = 1; tp <= per_server; tp *= 2) {
    if (options.parallel.tp > 1 ? tp == options.parallel.tp : per_server % tp == 0)
      tps.push_back(tp);
  }
  for (int pp = 1; pp <= blocks; ++pp) {
    if (options.parallel.pp > 1 ? pp == options.parallel.pp : blocks % pp == 0) pps.push_back(pp);
  }
  for (int tp : tps) {
    for (int pp : pps) {
      if (tp * pp == 1 || gpus % (tp * pp) != 0) continue;
      const int dp = gpus / (tp * pp);
      if (s.global_batch > 0 && s.global_batch % dp != 0) continue;
      const int share = s.global_batch > 0 ? s.global_batch / dp : options.batch;
      workload::TrainingOptions o = options;
      o.strategy = workload::Strategy::ddp;
      o.parallel.tp = tp;
      o.parallel.pp = pp;
      o.sync_every_micro = false;
      o.activation_checkpointing = false;
      // Without a global batch the batch runs as one micro-batch.
      const std::vector<int> micros =
          s.global_batch > 0 ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{share};
      for (int micro : micros) {
        if (share % micro != 0) continue;
        o.batch = micro;
        o.grad_accum = share / micro;
        if (s.run(o)) continue;
        if (o.activation_checkpointing) break;
        o.activation_checkpointing = true;  // this size and those above, recomputed
        if (!s.run(o)) break;
      }
    }
  }
}

}  // namespace

plan::Candidate predict_candidate_auto(const topo::Cluster& cluster, int global_batch,
                                       const workload::Model& model,
                                       const workload::TrainingOptions& options,
                                       const PriceOverrides& prices,
                                       std::map<std::string, bool>* templates_seen, int* layouts) {
  const int gpus = static_cast<int>(cluster.ranks.size());
  Search s{cluster, global_batch, model, prices, templates_seen, std::nullopt, {}, 0};
  if (!options.parallel.any()) {
    // A global batch that does not split over the GPUs leaves data parallelism out (the attempt
    // says why); model parallelism has fewer data-parallel ranks to split it over.
    if (global_batch > 0 && global_batch % gpus != 0)
      s.run(options);
    else
      search_data_parallel(s, options, global_batch > 0 ? global_batch / gpus : options.batch);
  }
  if (!model.blocks.empty()) search_model_parallel(s, options);
  if (layouts != nullptr) *layouts = s.tried;
  if (!s.best) {
    s.last.why_not = "no layout fits (the last tried, " + s.last.strategy + "): " + s.last.why_not;
    return s.last;
  }
  return *s.best;
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
  add("tp_exposed_ms", c.tp_exposed_ms, c.step_s > 0);
  add("pipeline_bubble_ms", c.pipeline_bubble_ms, c.step_s > 0);
  return out;
}

}  // namespace cs::cli
