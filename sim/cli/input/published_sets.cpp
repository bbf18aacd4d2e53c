// Published sets: the strict reading of the YAML file and one simulation per point.
#include "cli/input/published_sets.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "cli/input/coll_args.hpp"
#include "collectives/sweep.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/units.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"
#include "topology/parse/yaml_fields.hpp"

namespace cs::cli {
namespace {

using topo::yaml::Fields;

// Environment variables the simulator reads from a set's `env`. NCCL_TUNER_PLUGIN names the
// aws-ofi-nccl tuner in the published p5 runs, which the model applies wherever the servers are
// p5 instances on EFA (collectives/tuner/ofi_tuner.hpp), as the plugin does.
const std::vector<std::string> kModelledEnv = {"NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE",
                                               "NCCL_TUNER_PLUGIN"};

double parse_figure(const std::string& text, const SourceLoc& at, const std::string& key) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value > 0) || !(value < 1e12))
    throw InputError(at, key, "'" + text + "' is not a positive number");
  return value;
}

// A flag of the set: absent is false.
bool flag(const Fields& f, const std::string& key) {
  if (!f.has(key)) return false;
  const std::string text = f.text(key);
  if (text != "true" && text != "false")
    f.fail(key, "'" + text + "' is not a boolean; valid: true, false");
  return text == "true";
}

// "8 69.12; 16 72.64" -> (size, figure) pairs; sizes as nccl-tests writes them (1K = 1024).
std::vector<std::pair<double, double>> parse_pairs(const Fields& f, const std::string& key) {
  const SourceLoc at = f.loc(key);
  std::vector<std::pair<double, double>> out;
  std::stringstream items(f.text(key));
  std::string item;
  while (std::getline(items, item, ';')) {
    std::stringstream words(item);
    std::string size_text;
    std::string figure_text;
    std::string extra;
    if (!(words >> size_text >> figure_text) || (words >> extra))
      throw InputError(at, key, "'" + item + "' is not a pair 'SIZE FIGURE' (e.g. '1M 123.2')");
    double bytes = 0;
    try {
      bytes = parse_nccl_size(size_text, key);
    } catch (const InputError&) {
      throw InputError(at, key, "'" + size_text + "' is not a size (8, 64K, 1G)");
    }
    out.emplace_back(bytes, parse_figure(figure_text, at, key));
  }
  if (out.empty()) throw InputError(at, key, "no points; give 'SIZE FIGURE; SIZE FIGURE ...'");
  return out;
}

PublishedSet parse_set(const YAML::Node& node, const std::string& file, const std::string& dir,
                       const SourceLoc& at) {
  const Fields f(node, "set", "sets", file, at,
                 {"name", "role", "source", "topology", "nodes", "gpus_per_node", "op", "in_place",
                  "nvls", "nccl", "env", "time_us", "busbw_GBps"});
  PublishedSet s;
  s.name = f.text("name");
  s.role = f.text("role");
  if (s.role != "fit" && s.role != "check")
    f.fail("role", "'" + s.role + "' is not a role; valid: fit, check");
  s.source = f.text("source");
  const std::string topology = f.text("topology");
  s.topology = (std::filesystem::path(dir) / topology).lexically_normal().string();
  std::error_code ec;  // a path the system cannot look up (a name too long) is no file either
  if (!std::filesystem::is_regular_file(s.topology, ec))
    f.fail("topology", "no topology file " + s.topology);
  s.nodes = static_cast<int>(f.integer("nodes", 1, 1000000));
  s.gpus_per_node = static_cast<int>(f.optional_integer("gpus_per_node", 1, 1024).value_or(0));
  s.gpus_per_node_loc = f.loc("gpus_per_node");
  s.op = f.text("op");
  const auto op = coll::parse_op(s.op);
  if (!op) f.fail("op", "unknown collective '" + s.op + "'; valid: " + coll::valid_ops());
  s.in_place = flag(f, "in_place");
  s.nvls = flag(f, "nvls");
  if (f.has("nccl")) {
    try {
      s.nccl_version = coll::parse_nccl_version(f.text("nccl"), "nccl");
    } catch (const InputError& e) {
      throw InputError(f.loc("nccl"), "", e.what());  // the parser's message, at the line
    }
  }
  if (f.has("env")) {
    const YAML::Node env = f.node("env");
    if (!env.IsMap()) f.fail("env", "must be a map of variable to value");
    for (const auto& entry : env) {
      const std::string name = topo::yaml::scalar_text(
          entry.first, "env", topo::yaml::loc_of(entry.first, file, f.loc("env")));
      const SourceLoc value_at = topo::yaml::loc_of(entry.second, file, f.loc("env"));
      s.env[name] = topo::yaml::scalar_text(entry.second, name, value_at);
      // The masks predict_sets reads, checked here where the line is known.
      try {
        if (name == "NCCL_ALGO") coll::parse_algo_mask(s.env[name], name);
        if (name == "NCCL_PROTO") coll::parse_proto_mask(s.env[name], name);
        if (name == "NCCL_NVLS_ENABLE" || name == "NCCL_COLLNET_ENABLE")
          coll::parse_enable(s.env[name], name);
      } catch (const InputError& e) {
        throw InputError(value_at, "", e.what());
      }
    }
  }
  std::map<double, PublishedPoint> points;
  if (f.has("time_us")) {
    for (const auto& [bytes, us] : parse_pairs(f, "time_us")) points[bytes] = {bytes, us, 0};
  }
  if (f.has("busbw_GBps")) {
    // The time follows once the set's rank count is known (predict_sets).
    for (const auto& [bytes, busbw] : parse_pairs(f, "busbw_GBps")) {
      if (points.count(bytes) != 0)
        f.fail("busbw_GBps", "a size in time_us again: " + units::format_size(bytes));
      points[bytes] = {bytes, 0, busbw};
    }
  }
  if (points.empty()) f.fail("time_us", "missing: give time_us, busbw_GBps or both");
  for (const auto& [bytes, p] : points) s.points.push_back(p);
  return s;
}

}  // namespace

std::vector<PublishedSet> load_published_sets(const std::string& path) {
  const std::string text = read_input_file(path, "published sets file");
  check_is_text(text, path, "a published sets file is YAML text");
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(SourceLoc{path, e.mark.line >= 0 ? e.mark.line + 1 : 0}, "",
                     "malformed YAML: " + e.msg);
  }
  const Fields f(root, "the published sets file", "", path, SourceLoc{path, 1}, {"sets"});
  const YAML::Node sets = f.list("sets");
  const std::string dir = std::filesystem::path(path).parent_path().string();
  std::vector<PublishedSet> out;
  for (const YAML::Node& node : sets) {
    out.push_back(parse_set(node, path, dir, topo::yaml::loc_of(node, path, f.loc("sets"))));
  }
  if (out.empty()) f.fail("sets", "no sets");
  return out;
}

std::vector<ComparedSet> predict_sets(const std::vector<PublishedSet>& sets) {
  std::vector<ComparedSet> out;
  out.reserve(sets.size());
  for (const PublishedSet& s : sets) {
    const coll::Op op = *coll::parse_op(s.op);
    const topo::Cluster cluster = topo::load_cluster(s.topology, {s.nodes});
    // Ranks as a launcher places them: the first gpus_per_node GPUs of each server, server order.
    std::vector<int> rank_of_node(cluster.nodes.size(), -1);
    for (std::size_t r = 0; r < cluster.ranks.size(); ++r)
      rank_of_node[static_cast<std::size_t>(cluster.ranks[r])] = static_cast<int>(r);
    std::vector<int> ranks;
    for (const topo::Server& server : cluster.servers) {
      const std::size_t take =
          s.gpus_per_node > 0 ? static_cast<std::size_t>(s.gpus_per_node) : server.gpus.size();
      if (take > server.gpus.size())
        throw InputError(s.gpus_per_node_loc, "gpus_per_node",
                         std::to_string(take) + " is more than the " +
                             std::to_string(server.gpus.size()) + " GPUs of server '" +
                             server.name + "' of " +
                             std::filesystem::path(s.topology).filename().string());
      for (std::size_t k = 0; k < take; ++k)
        ranks.push_back(rank_of_node[static_cast<std::size_t>(server.gpus[k])]);
    }
    const int n = static_cast<int>(ranks.size());
    coll::TunerOptions options;
    const auto env = [&](const std::string& key) {
      const auto it = s.env.find(key);
      return it == s.env.end() ? std::string() : it->second;
    };
    options.algo_mask = coll::parse_algo_mask(env("NCCL_ALGO"), "NCCL_ALGO");
    options.proto_mask = coll::parse_proto_mask(env("NCCL_PROTO"), "NCCL_PROTO");
    options.nvls = env("NCCL_NVLS_ENABLE").empty()
                       ? std::optional<bool>(s.nvls)
                       : coll::parse_enable(env("NCCL_NVLS_ENABLE"), "NCCL_NVLS_ENABLE");
    options.nccl_version = s.nccl_version;
    options.collnet = coll::parse_enable(env("NCCL_COLLNET_ENABLE"), "NCCL_COLLNET_ENABLE");

    const topo::ClusterGraph graph(cluster);
    coll::Communicator comm(graph, ranks, coll::nccl_priors(coll::comm_arch(cluster, ranks)));
    ComparedSet c;
    c.set = &s;
    c.cluster = cluster.name;
    c.ranks = n;
    for (const auto& [key, value] : s.env) {
      bool modelled = false;
      for (const std::string& m : kModelledEnv) modelled = modelled || m == key;
      if (!modelled) c.unmodelled_env.push_back(key + "=" + value);
    }
    const coll::DataType dtype = *coll::parse_dtype("float");
    for (const PublishedPoint& p : s.points) {
      const std::vector<coll::SweepRow> rows =
          coll::sweep(comm, op, {p.bytes}, dtype, options, coll::Fidelity::flow);
      ComparedPoint cp;
      cp.published = p;
      if (p.busbw_GBps > 0) {  // nccl-tests: busbw = S / t x factor, so t = S x factor / busbw
        cp.published.time_us = p.bytes * coll::busbw_factor(op, n) / (p.busbw_GBps * 1e3);
      }
      cp.predicted_us = rows.front().time_us;
      cp.error = (cp.predicted_us - cp.published.time_us) / cp.published.time_us;
      cp.choice = rows.front().choice;
      c.points.push_back(cp);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace cs::cli
