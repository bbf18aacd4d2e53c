#include "cli/sweep_points.hpp"

#include <cstdio>
#include <filesystem>

#include "cli/input/coll_args.hpp"
#include "cli/step/ddp_predict.hpp"
#include "cli/step/plan_predict.hpp"
#include "collectives/sweep.hpp"
#include "core/error.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"
#include "workload/model/model_loader.hpp"

namespace cs::cli {
namespace {

// Each command's result columns after the axis values; `numeric` marks those JSON writes as
// numbers. Every command ends with `error`.
struct Column {
  const char* name;
  bool numeric;
};
const std::vector<Column> kDdpColumns = {{"gpus", true},
                                         {"servers", true},
                                         {"batch_per_gpu", true},
                                         {"step_ms", true},
                                         {"samples_per_s", true},
                                         {"tokens_per_s", true},
                                         {"compute_ms", true},
                                         {"exposed_communication_ms", true},
                                         {"communication_ms", true},
                                         {"host_bound_idle_ms", true},
                                         {"memory_gib", true}};
const std::vector<Column> kCollColumns = {
    {"ranks", true},   {"servers", true},    {"size_bytes", true},
    {"time_us", true}, {"algbw_GBps", true}, {"busbw_GBps", true},
    {"algo", false},   {"proto", false},     {"channels", true}};

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6f", value);
  return text;
}

const std::string& axis_or(const std::map<std::string, std::string>& at, const std::string& key,
                           const std::string& fallback) {
  const auto it = at.find(key);
  return it == at.end() ? fallback : it->second;
}

int servers_of(const std::map<std::string, std::string>& at) {
  const std::string& nodes = axis_or(at, "nodes", "0");
  return std::stoi(nodes);
}

// The step's settings a point's axes give; the rest stay the model file's.
StepFlags step_flags(const std::map<std::string, std::string>& at) {
  StepFlags flags;
  flags.batch = std::stoi(axis_or(at, "batch", "0"));
  flags.seq = std::stoi(axis_or(at, "seq", "0"));
  flags.precision = axis_or(at, "precision", "");
  flags.optimizer = axis_or(at, "optimizer", "");
  if (at.count("momentum")) flags.momentum = std::stod(at.at("momentum"));
  if (at.count("host_probe")) flags.host_probe = at.at("host_probe");  // resolved by the caller
  flags.tp = std::stoi(axis_or(at, "tp", "1"));
  flags.pp = std::stoi(axis_or(at, "pp", "1"));
  flags.grad_accum = std::stoi(axis_or(at, "grad_accum", "1"));
  if (at.count("bucket_cap_mb")) {
    flags.ddp.bucket_cap_mb = std::stod(at.at("bucket_cap_mb"));
    flags.ddp.bucket_cap_set = true;
  }
  return flags;
}

}  // namespace

SweepPoints::SweepPoints(const plan::SweepFile& sweep) : sweep_(sweep) {
  for (const plan::Axis& axis : sweep_.axes) {
    for (std::size_t i = 0; i < axis.values.size(); ++i) {
      const std::string& v = axis.values[i];
      // A path that names nothing is the sweep file's mistake: its line, not the missing file's.
      if ((axis.name == "model" || axis.name == "topology" || axis.name == "host_probe") &&
          !std::filesystem::exists(path_of(v))) {
        throw InputError(axis.locs[i], axis.name,
                         "no " + axis.name + " file " +
                             std::filesystem::path(path_of(v)).lexically_normal().string() +
                             " (paths are relative to the sweep file's folder)");
      }
      if (axis.name == "model" && !models_.count(v)) {
        models_.emplace(v, workload::load_model_file(path_of(v)));
      } else if (axis.name == "topology") {
        topo::load_cluster(path_of(v));  // the file as written must load
      } else if (axis.name == "op" && !coll::parse_op(v)) {
        throw InputError(axis.locs[i], "op",
                         "unknown collective '" + v + "'; valid: " + coll::valid_ops());
      } else if (axis.name == "dtype" && !coll::parse_dtype(v)) {
        throw InputError(axis.locs[i], "dtype",
                         "unknown type '" + v + "'; valid: " + coll::valid_dtypes());
      } else if (axis.name == "size") {
        try {
          parse_nccl_size(v, "size");
        } catch (const InputError& e) {
          throw InputError(axis.locs[i], "size", e.what());
        }
      }
    }
  }
  for (const plan::Axis& axis : sweep_.axes) {
    columns_.push_back(axis.name);
    numeric_.push_back(plan::numeric_axis(axis.name));
  }
  if (sweep_.command == plan::SweepCommand::plan) {
    for (const char* name : {"servers", "gpus", "batch_per_gpu"}) {
      columns_.emplace_back(name);
      numeric_.push_back(true);
    }
    for (const char* name : kCandidateColumns) {
      columns_.emplace_back(name);
      numeric_.push_back(true);
    }
    columns_.emplace_back("cost_unknown");  // a point without a price: why it has no cost
    numeric_.push_back(false);
  } else {
    for (const Column& c : sweep_.command == plan::SweepCommand::ddp ? kDdpColumns : kCollColumns) {
      columns_.emplace_back(c.name);
      numeric_.push_back(c.numeric);
    }
  }
  columns_.emplace_back("error");
  numeric_.push_back(false);
  result_columns_ = columns_.size() - sweep_.axes.size();
}

std::string SweepPoints::path_of(const std::string& value) const {
  const std::filesystem::path p(value);
  return p.is_absolute() || sweep_.dir.empty() ? value : (sweep_.dir / p).string();
}

std::shared_ptr<const topo::Cluster> SweepPoints::cluster(const std::string& topology,
                                                          int servers) const {
  const auto key = std::make_pair(topology, servers);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = clusters_.find(key);
    if (it != clusters_.end()) return it->second;
  }
  // Loaded outside the lock; two threads may load the same file at once, and keep either copy.
  auto loaded =
      std::make_shared<const topo::Cluster>(topo::load_cluster(path_of(topology), {servers}));
  const std::lock_guard<std::mutex> lock(mutex_);
  return clusters_.emplace(key, std::move(loaded)).first->second;
}

std::vector<std::string> SweepPoints::run(std::size_t index) const {
  const std::vector<std::size_t> at = plan::point_coordinates(sweep_, index);
  std::map<std::string, std::string> values;
  std::vector<std::string> cells;
  for (std::size_t a = 0; a < sweep_.axes.size(); ++a) {
    values[sweep_.axes[a].name] = sweep_.axes[a].values[at[a]];
    cells.push_back(sweep_.axes[a].values[at[a]]);
  }
  std::vector<std::string> results;
  try {
    switch (sweep_.command) {
      case plan::SweepCommand::ddp:
        results = run_ddp(values);
        break;
      case plan::SweepCommand::coll:
        results = run_coll(values);
        break;
      case plan::SweepCommand::plan:
        results = run_plan(values);
        break;
    }
  } catch (const InputError& e) {
    // This point cannot run (past the fabric's size, the model does not fit): say why, go on.
    results.assign(result_columns_, "");
    results.back() = e.what();
  }
  cells.insert(cells.end(), results.begin(), results.end());
  return cells;
}

std::vector<std::string> SweepPoints::run_ddp(const std::map<std::string, std::string>& at) const {
  const std::shared_ptr<const topo::Cluster> c = cluster(at.at("topology"), servers_of(at));
  const workload::Model& model = models_.at(at.at("model"));
  StepFlags flags = step_flags(at);
  if (!flags.host_probe.empty()) flags.host_probe = path_of(flags.host_probe);
  const workload::TrainingOptions options = step_options(flags, model);
  std::vector<int> ranks(c->ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r] = static_cast<int>(r);
  const DdpPrediction p = predict_ddp(*c, model, options, ranks, nullptr);
  const workload::StepBreakdown& b = p.result.breakdown;
  const int replicas = p.ranks / options.parallel.degree();
  const double samples_per_s =
      static_cast<double>(workload::samples_per_step(options)) * replicas / (b.step_us / 1e6);
  return {std::to_string(p.ranks),
          std::to_string(p.servers),
          std::to_string(options.batch),
          number(b.step_us / 1e3),
          number(samples_per_s),
          number(samples_per_s * options.seq.value_or(0)),
          number((b.forward_us + b.backward_us + b.optimizer_us) / 1e3),
          number(b.exposed_communication_us / 1e3),
          number(b.communication_us / 1e3),
          number(b.host_bound_idle_us / 1e3),
          number(p.memory.total / (1024.0 * 1024 * 1024)),
          ""};
}

std::vector<std::string> SweepPoints::run_coll(const std::map<std::string, std::string>& at) const {
  const std::shared_ptr<const topo::Cluster> c = cluster(at.at("topology"), servers_of(at));
  const coll::Op op = *coll::parse_op(axis_or(at, "op", "allreduce"));
  const coll::DataType dtype = *coll::parse_dtype(axis_or(at, "dtype", "float"));
  const double bytes = parse_nccl_size(at.at("size"), "size");
  std::vector<int> ranks(c->ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r] = static_cast<int>(r);
  const topo::ClusterGraph graph(*c);
  coll::Communicator comm(graph, ranks, coll::nccl_priors(coll::comm_arch(*c, ranks)));
  const std::vector<coll::SweepRow> rows =
      coll::sweep(comm, op, {bytes}, dtype, coll::TunerOptions{}, coll::Fidelity::flow);
  const coll::SweepRow& r = rows.front();
  return {std::to_string(ranks.size()),
          std::to_string(c->servers.size()),
          number(r.bytes),
          number(r.time_us),
          number(r.algbw_GBps),
          number(r.busbw_GBps),
          r.choice.p2p ? "P2P" : coll::to_string(r.choice.estimate.algo),
          coll::to_string(r.choice.estimate.proto),
          std::to_string(r.choice.n_channels),
          ""};
}

std::vector<std::string> SweepPoints::run_plan(const std::map<std::string, std::string>& at) const {
  const workload::Model& model = models_.at(at.at("model"));
  StepFlags flags = step_flags(at);
  if (!flags.host_probe.empty()) flags.host_probe = path_of(flags.host_probe);
  const workload::TrainingOptions options = step_options(flags, model);
  const std::shared_ptr<const topo::Cluster> resized = cluster(at.at("topology"), servers_of(at));
  plan::Candidate c = predict_candidate(*resized, std::stoi(axis_or(at, "global_batch", "0")),
                                        model, options, sweep_.prices);
  plan::evaluate(c, sweep_.target, {});
  std::vector<std::string> cells = {std::to_string(c.servers), std::to_string(c.gpus),
                                    std::to_string(c.batch_per_gpu)};
  const auto known = candidate_figures(c);
  for (const char* name : kCandidateColumns) {
    std::string cell;
    for (const auto& [have, value] : known) {
      if (have == name) cell = number(value);
    }
    cells.push_back(cell);
  }
  cells.push_back(c.cost_unknown);
  cells.push_back(c.why_not);
  return cells;
}

}  // namespace cs::cli
