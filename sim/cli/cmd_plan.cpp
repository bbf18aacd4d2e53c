// `clustersim plan`: which cluster trains a model to a target soonest and cheapest. For every
// topology x server count: the memory check, the DDP step, throughput, scaling efficiency, time
// and cost to the target, cost per million samples or tokens; sorted by cost, the time/cost
// Pareto front marked, optionally drawn.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/input/node_counts.hpp"
#include "cli/output/gnuplot.hpp"
#include "cli/output/output_guard.hpp"
#include "cli/output/version.hpp"
#include "cli/step/ddp_predict.hpp"
#include "cli/step/plan_predict.hpp"
#include "cli/step/trust.hpp"
#include "core/error.hpp"
#include "plan/candidates.hpp"
#include "topology/loader.hpp"
#include "workload/model/model_loader.hpp"

namespace cs::cli {
namespace {

struct PlanArgs {
  std::string model;
  std::vector<std::string> topologies;
  std::string nodes;
  std::string samples;
  std::string tokens;
  std::string steps;
  double max_hours = 0;
  double max_cost = 0;
  std::vector<std::string> prices;
  int global_batch = 0;
  StepFlags step;
  bool csv = false;
  bool json = false;
  std::string plot;
};

// "300e9", "300B" (billion), "1.5T", "500M", "20K": a count above 0.
double parse_amount(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  const std::string suffix = end != nullptr ? std::string(end) : "";
  const std::map<std::string, double> scale = {{"", 1},    {"K", 1e3}, {"k", 1e3}, {"M", 1e6},
                                               {"B", 1e9}, {"G", 1e9}, {"T", 1e12}};
  const auto s = scale.find(suffix);
  if (text.empty() || end == text.c_str() || s == scale.end() || !std::isfinite(value)) {
    throw InputError(flag + ": '" + text + "' is not a count (e.g. 300e9, 300B, 1.5T, 500M)");
  }
  value *= s->second;
  if (!(value >= 1)) throw InputError(flag + ": '" + text + "' must be at least 1");
  return value;
}

plan::Target parse_target(const PlanArgs& a) {
  plan::Target t;
  if (!a.samples.empty()) t = {plan::TargetKind::samples, parse_amount("--samples", a.samples)};
  if (!a.tokens.empty()) t = {plan::TargetKind::tokens, parse_amount("--tokens", a.tokens)};
  if (!a.steps.empty()) t = {plan::TargetKind::steps, parse_amount("--steps", a.steps)};
  const int given = !a.samples.empty() + !a.tokens.empty() + !a.steps.empty();
  if (given != 1) throw InputError("plan: give exactly one of --samples, --tokens, --steps");
  return t;
}

// 3e11 -> "300 billion": the target as a person says it.
std::string amount_text(double amount) {
  const struct {
    double scale;
    const char* word;
  } words[] = {{1e12, " trillion"}, {1e9, " billion"}, {1e6, " million"}, {1, ""}};
  char text[64];
  for (const auto& w : words) {
    if (amount >= w.scale) {
      std::snprintf(text, sizeof text, "%.6g%s", amount / w.scale, w.word);
      return text;
    }
  }
  std::snprintf(text, sizeof text, "%.6g", amount);
  return text;
}

const char* per_million(plan::TargetKind kind) {
  return kind == plan::TargetKind::tokens ? "tokens" : "samples";
}

std::string text_table(const std::vector<plan::Candidate>& cs, const workload::Model& model,
                       const workload::TrainingOptions& options, const plan::Target& target,
                       bool auto_strategy) {
  std::ostringstream out;
  char line[512];
  out << "# clustersim plan: " << model.name << " for " << amount_text(target.amount) << " "
      << plan::to_string(target.kind) << ", " << workload::to_string(options.precision) << ", "
      << workload::to_string(options.optimizer)
      << (auto_strategy ? ", on every GPU the fastest of DDP, FSDP2, HSDP and TP x PP x DDP, "
                          "with or without checkpointing, in the micro-batches that fit (in [])\n"
          : options.parallel.any()
              ? ", TP " + std::to_string(options.parallel.tp) + " x PP " +
                    std::to_string(options.parallel.pp) + " x DDP over the rest\n"
          : options.strategy == workload::Strategy::fsdp ? ", FSDP2 over every GPU\n"
                                                         : ", DDP on every GPU\n");
  int most_gpus = 1;
  int most_servers = 1;
  bool model_parallel = false;
  for (const plan::Candidate& c : cs) {
    most_gpus = std::max(most_gpus, c.gpus);
    most_servers = std::max(most_servers, c.servers);
    model_parallel = model_parallel || (c.why_not.empty() && c.model_parallel > 1);
  }
  out << trust_line(options.strategy, most_gpus, most_servers) << "\n";
  if (model_parallel || options.parallel.any()) out << kModelParallelTrust << "\n";
  out << "# cheapest first; * = on the time/cost Pareto front (no candidate both faster and "
         "cheaper); cost = hours x price, billed per second\n";
  std::snprintf(line, sizeof line, "#  %-24s %5s %5s %5s %9s %12s %6s %9s %11s %8s %8s %8s %9s\n",
                "topology", "nodes", "gpus", "batch", "step ms",
                target.kind == plan::TargetKind::tokens ? "tokens/s" : "samples/s", "eff", "hours",
                "cost USD", "USD/M", "USD/h", "exposed", "compute");
  if (model_parallel) line[std::strlen(line) - 1] = '\0';
  out << line << (model_parallel ? "     TP   bubble\n" : "");
  std::snprintf(line, sizeof line, "#  %-24s %5s %5s %5s %9s %12s %6s %9s %11s %8s %8s %8s %9s\n",
                "", "", "", model_parallel ? "/DP" : "/GPU", "", "", "", "", "",
                per_million(target.kind), "", "comm ms", "ms");
  if (model_parallel) line[std::strlen(line) - 1] = '\0';
  out << line << (model_parallel ? "  wait ms       ms\n" : "");
  std::vector<const plan::Candidate*> out_of_run;
  for (const plan::Candidate& c : cs) {
    if (!c.why_not.empty()) {
      out_of_run.push_back(&c);
      continue;
    }
    // Beside the row: a limit it passes, and why its cost is unknown.
    std::string notes = c.over_limit;
    if (!c.cost_unknown.empty()) {
      notes += (notes.empty() ? "" : "; ") + ("cost unknown: " + c.cost_unknown);
    }
    if (!notes.empty()) notes = "  (" + notes + ")";
    if (!c.strategy.empty()) notes = "  [" + c.strategy + "]" + notes;
    char eff[16] = "-";
    if (c.efficiency > 0) std::snprintf(eff, sizeof eff, "%.1f%%", 100 * c.efficiency);
    char cost[3][32] = {"unknown", "-", "-"};
    if (c.cost_unknown.empty()) {
      std::snprintf(cost[0], sizeof cost[0], "%.0f", c.usd);
      std::snprintf(cost[1], sizeof cost[1], "%.3f", c.usd_per_million);
      std::snprintf(cost[2], sizeof cost[2], "%.2f", c.usd_per_hour);
    }
    char more[64] = "";
    if (model_parallel)
      std::snprintf(more, sizeof more, " %9.2f %8.2f", c.tp_exposed_ms, c.pipeline_bubble_ms);
    std::snprintf(line, sizeof line,
                  "%s  %-24s %5d %5d %5d %9.2f %12.1f %6s %9.1f %11s %8s %8s %8.2f "
                  "%9.2f%s%s\n",
                  c.pareto ? "*" : " ", c.topology.c_str(), c.servers, c.gpus, c.batch_per_gpu,
                  c.step_s * 1e3,
                  target.kind == plan::TargetKind::tokens ? c.tokens_per_s : c.samples_per_s, eff,
                  c.hours, cost[0], cost[1], cost[2], c.exposed_communication_ms, c.compute_ms,
                  more, notes.c_str());
    out << line;
  }
  for (const plan::Candidate* c : out_of_run) {
    out << "-  " << c->topology << " x" << c->servers << " (" << c->gpus << " GPUs): " << c->why_not
        << "\n";
  }
  // Where each figure came from: prices and kernel times, once each.
  std::map<std::string, bool> seen;
  for (const plan::Candidate& c : cs) {
    if (!c.price_source.empty() && !seen[c.price_source]) {
      out << "# price: " << c.price_source << "\n";
      seen[c.price_source] = true;
    }
  }
  for (const plan::Candidate& c : cs) {
    if (!c.compute_note.empty() && !seen[c.compute_note]) {
      out << "# compute: " << c.compute_note << "\n";
      seen[c.compute_note] = true;
    }
  }
  return out.str();
}

nlohmann::json candidate_json(const plan::Candidate& c) {
  nlohmann::json j = {{"topology", c.topology},
                      {"servers", c.servers},
                      {"gpus", c.gpus},
                      {"batch_per_gpu", c.batch_per_gpu}};
  for (const auto& [name, value] : candidate_figures(c)) j[name] = value;
  if (c.why_not.empty()) {
    j["pareto"] = c.pareto;
    j["over_limit"] = c.over_limit;
  } else {
    j["why_not"] = c.why_not;
  }
  if (!c.cost_unknown.empty()) j["cost_unknown"] = c.cost_unknown;
  if (!c.strategy.empty()) j["strategy"] = c.strategy;
  if (!c.price_source.empty()) j["price_source"] = c.price_source;
  if (!c.compute_note.empty()) j["compute"] = c.compute_note;
  return j;
}

// Free text in quotes, its quotes doubled (RFC 4180).
std::string csv_quoted(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string csv_table(const std::vector<plan::Candidate>& cs) {
  std::ostringstream out;
  out << "topology,servers,gpus,batch_per_gpu";
  for (const char* name : kCandidateColumns) out << "," << name;
  const bool layouts = std::any_of(cs.begin(), cs.end(),
                                   [](const plan::Candidate& c) { return !c.strategy.empty(); });
  out << ",pareto,over_limit,why_not,cost_unknown" << (layouts ? ",strategy" : "") << "\n";
  char number[64];
  for (const plan::Candidate& c : cs) {
    out << c.topology << "," << c.servers << "," << c.gpus << "," << c.batch_per_gpu;
    const auto known = candidate_figures(c);
    for (const char* name : kCandidateColumns) {
      out << ",";
      for (const auto& [have, value] : known) {
        if (have != name) continue;
        std::snprintf(number, sizeof number, "%.6f", value);
        out << number;
      }
    }
    out << "," << (c.why_not.empty() ? (c.pareto ? "true" : "false") : "") << "," << c.over_limit
        << "," << csv_quoted(c.why_not) << "," << csv_quoted(c.cost_unknown)
        << (layouts ? "," + csv_quoted(c.strategy) : std::string()) << "\n";
  }
  return out.str();
}

void run_plan(const PlanArgs& a) {
  std::vector<NamedPath> inputs = {{"--model file", a.model}};
  for (const std::string& t : a.topologies) inputs.push_back({"--topology file", t});
  refuse_outputs_over_inputs({{"--plot", a.plot}}, inputs);
  if (!a.plot.empty()) GnuplotJob::check_target("--plot", a.plot);
  const plan::Target target = parse_target(a);
  if (a.max_hours < 0) throw InputError("--max-hours: must be above 0");
  if (a.max_cost < 0) throw InputError("--max-cost: must be above 0");
  if (a.global_batch < 0) throw InputError("--global-batch: must be above 0");
  PriceOverrides prices;
  for (const std::string& p : a.prices) parse_price_override(p, prices);
  const std::vector<int> counts = parse_node_counts(a.nodes);
  const workload::Model model = workload::load_model_file(a.model);
  // --strategy auto: the options as for DDP; each candidate then tries every layout.
  const bool auto_strategy = a.step.strategy == "auto";
  StepFlags flags = a.step;
  if (auto_strategy) flags.strategy = "ddp";
  const workload::TrainingOptions options = step_options(flags, model);

  std::vector<plan::Candidate> candidates;
  std::map<std::string, bool> templates;
  for (const std::string& t : a.topologies) {
    for (const int servers : counts) {
      const topo::Cluster cluster = topo::load_cluster(t, {servers});
      candidates.push_back(
          auto_strategy
              ? predict_candidate_auto(cluster, a.global_batch, model, options, prices, &templates)
              : predict_candidate(cluster, a.global_batch, model, options, prices, &templates));
    }
  }
  for (const auto& [name, usd] : prices) {
    if (!templates.count(name)) {
      std::string known;
      for (const auto& [seen, unused] : templates) known += (known.empty() ? "" : ", ") + seen;
      throw InputError("--price: no candidate has a server template '" + name +
                       "'; templates: " + known);
    }
  }
  for (plan::Candidate& c : candidates) plan::evaluate(c, target, {a.max_hours, a.max_cost});
  plan::mark_pareto(candidates);
  plan::sort_by_cost(candidates);
  if (!a.plot.empty()) {
    plot_plan(candidates,
              "clustersim plan: " + model.name + ", " + amount_text(target.amount) + " " +
                  to_string(target.kind),
              a.plot);
  }
  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const plan::Candidate& c : candidates) rows.push_back(candidate_json(c));
    std::cout << nlohmann::json{{"clustersim_version", version_text()},
                                {"model", model.name},
                                {"target",
                                 {{"kind", to_string(target.kind)}, {"amount", target.amount}}},
                                {"candidates", rows}}
                     .dump(2)
              << "\n";
  } else if (a.csv) {
    std::cout << csv_table(candidates);
  } else {
    std::cout << text_table(candidates, model, options, target, auto_strategy);
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Time and cost to train a model on candidate clusters, cheapest first; each candidate runs "
      "on every GPU of the topology, or of each --nodes size");
  cmd->add_option("--model,-m", args->model, "Model file (models/*.yaml)")->required();
  cmd->add_option("--topology,-t", args->topologies, "Topology YAML file (repeatable)")->required();
  add_nodes_option(cmd, args->nodes, true);
  cmd->add_option("--samples", args->samples, "Train on this many samples (e.g. 1.2B)");
  cmd->add_option("--tokens", args->tokens, "Train on this many tokens (e.g. 300B)");
  cmd->add_option("--steps", args->steps, "Train for this many optimizer steps");
  cmd->add_option("--max-hours", args->max_hours, "Mark candidates that take longer");
  cmd->add_option("--max-cost", args->max_cost, "Mark candidates that cost more (USD)");
  cmd->add_option("--price", args->prices,
                  "TEMPLATE=USD_PER_HOUR: a server template's price (repeatable; overrides the "
                  "file's price_per_hour)");
  cmd->add_option("--global-batch", args->global_batch,
                  "Keep this global batch on every candidate (per-GPU batch = it / GPUs; with "
                  "--tp/--pp, per data-parallel rank, and with --pp in micro-batches of --batch) "
                  "instead of the per-GPU one");
  add_step_flags(cmd, args->step);
  cmd->add_option("--plot", args->plot, "Draw cost against time into OUT.png or OUT.svg");
  auto* csv = cmd->add_flag("--csv", args->csv, "Print CSV");
  cmd->add_flag("--json", args->json, "Print JSON")->excludes(csv);
  cmd->callback([args] { run_plan(*args); });
}

}  // namespace cs::cli
