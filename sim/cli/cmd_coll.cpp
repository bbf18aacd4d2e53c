// `clustersim coll`: an nccl-tests run in simulation. For a topology, a collective, a rank count or
// list and a size ladder, prints nccl-tests' table (size, count, type, time, algbw, busbw) plus the
// algorithm, protocol and channels NCCL's tuner chose per row; --csv and --json for machines.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "calibration/calfile/calibration_file.hpp"
#include "calibration/calfile/host_floor.hpp"
#include "calibration/validate/machine_match.hpp"
#include "cli/commands.hpp"
#include "cli/input/coll_args.hpp"
#include "cli/input/node_counts.hpp"
#include "cli/output/version.hpp"
#include "collectives/sweep.hpp"
#include "collectives/tuner/collnet.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "topology/graph.hpp"
#include "topology/loader.hpp"

namespace cs::cli {
namespace {

struct CollArgs {
  std::string topology;
  std::string op = "allreduce";
  std::string ranks;
  std::string min_bytes = "8";
  std::string max_bytes = "128M";
  double factor = 2;
  std::string increment = "0";
  std::string dtype = "float";
  std::string algo;
  std::string proto;
  std::string nvls;
  std::string collnet;
  std::string nccl;
  std::string fidelity = "flow";
  std::string calibration;
  bool host_paced = false;
  std::string nodes;
  bool csv = false;
  bool json = false;
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : fallback;
}

const char* redop_of(coll::Op op) {
  return op == coll::Op::all_reduce || op == coll::Op::reduce_scatter || op == coll::Op::reduce
             ? "sum"
             : "none";
}

int root_of(coll::Op op) {
  return op == coll::Op::broadcast || op == coll::Op::reduce ? 0 : -1;
}

std::string algo_name(const coll::TunerChoice& c) {
  return c.p2p ? "P2P" : coll::to_string(c.estimate.algo);
}

// One count of servers (0: as the file says): a text or CSV table into `out`, or a JSON object into
// `json`. `several` marks a run over several --nodes counts: CSV rows then begin with the count of
// servers and ranks, and only the first table has a header.
void run_coll(const CollArgs& a, int servers, bool several, std::ostringstream& out,
              nlohmann::json& json) {
  const auto op = coll::parse_op(a.op);
  if (!op)
    throw InputError("key 'op': unknown collective '" + a.op + "'; valid: " + coll::valid_ops());
  const auto dtype = coll::parse_dtype(a.dtype);
  if (!dtype)
    throw InputError("key 'dtype': unknown type '" + a.dtype + "'; valid: " + coll::valid_dtypes());
  coll::Fidelity fidelity = coll::Fidelity::flow;
  if (a.fidelity == "analytical") {
    fidelity = coll::Fidelity::analytical;
  } else if (a.fidelity != "flow") {
    throw InputError("key 'fidelity': unknown fidelity '" + a.fidelity +
                     "'; valid: flow, analytical");
  }
  coll::TunerOptions options;
  options.algo_mask = coll::parse_algo_mask(a.algo.empty() ? env_or("NCCL_ALGO", "") : a.algo,
                                            a.algo.empty() ? "NCCL_ALGO" : "algo");
  options.proto_mask = coll::parse_proto_mask(a.proto.empty() ? env_or("NCCL_PROTO", "") : a.proto,
                                              a.proto.empty() ? "NCCL_PROTO" : "proto");
  options.nvls = a.nvls.empty()
                     ? coll::parse_enable(env_or("NCCL_NVLS_ENABLE", ""), "NCCL_NVLS_ENABLE")
                     : coll::parse_enable(a.nvls, "nvls");
  options.nccl_version = coll::parse_nccl_version(a.nccl, "nccl");
  options.collnet = a.collnet.empty() ? coll::parse_enable(env_or("NCCL_COLLNET_ENABLE", ""),
                                                           "NCCL_COLLNET_ENABLE")
                                      : coll::parse_enable(a.collnet, "collnet");
  const double increment = parse_nccl_size(a.increment, "stepbytes");
  const double min_bytes = parse_nccl_size(a.min_bytes, "minbytes");
  double max_bytes = parse_nccl_size(a.max_bytes, "maxbytes");
  check_steps(min_bytes, a.factor, increment);
  coll::size_ladder(min_bytes, max_bytes, a.factor, increment);  // its checks, before any file

  topo::Cluster cluster = topo::load_cluster(a.topology, {servers});
  const std::vector<int> ranks = parse_ranks(a.ranks, static_cast<int>(cluster.ranks.size()));
  // Past the GPUs' memory nccl-tests lowers -e, and so does this, saying so as it does.
  std::string reduced;
  const MemoryLimit memory = memory_limit(cluster, ranks);
  if (max_bytes > memory.max_bytes) {
    if (min_bytes > memory.max_bytes) {
      throw InputError("key 'minbytes': " + a.min_bytes + " (" + units::format_size(min_bytes) +
                       ") is past " + memory_rule(cluster, memory) + ": at most " +
                       units::format_size(memory.max_bytes));
    }
    max_bytes = memory.max_bytes;
    char text[64];
    std::snprintf(text, sizeof text, "%.0f", max_bytes);
    reduced = "Reducing maxBytes to " + std::string(text) + " due to memory limitation (" +
              memory_rule(cluster, memory) + ")";
  }
  const std::vector<double> sizes = coll::size_ladder(min_bytes, max_bytes, a.factor, increment);
  // A calibration file replaces NCCL's priors with the fit for this collective and sets the
  // fitted link efficiencies and latencies on the cluster before its graph is built.
  coll::NcclParams params = coll::nccl_priors(coll::comm_arch(cluster, ranks));
  cal::HostFloors floors;
  std::string nvls_source = options.nvls ? "" : " (NCCL's default)";
  if (!a.calibration.empty()) {
    const cal::Calibration calibration = cal::load_calibration(a.calibration);
    cal::check_calibration_match(calibration, cluster, ranks);
    cal::apply_links(calibration, cluster);
    const cal::NcclFit& fit = cal::nccl_fit_for(calibration, coll::to_string(*op));
    cal::apply_op_links(fit, cluster);
    params = fit.params;
    floors = fit.host_floors;
    // Unless the flag or NCCL_NVLS_ENABLE says otherwise, NVLS as the calibration's runs had it.
    if (!options.nvls && calibration.nvls) {
      options.nvls = calibration.nvls;
      nvls_source = " (as the calibration's runs: NCCL_NVLS_ENABLE=" +
                    std::string(*calibration.nvls ? "1" : "0") + ")";
    }
  }
  const topo::ClusterGraph graph(cluster);
  coll::Communicator comm(graph, ranks, params);
  std::vector<coll::SweepRow> rows = coll::sweep(comm, *op, sizes, *dtype, options, fidelity);
  // nccl-tests' timing: each call costs the longer of the host's launch floor and the GPUs' time;
  // the floor is the calibration's at this rank count, else the prior (calfile/host_floor.hpp).
  const int n = static_cast<int>(ranks.size());
  const std::optional<double> fitted_floor_us = floors.fitted("default", n);
  const double floor_us = fitted_floor_us.value_or(cal::prior_host_floor_us(n));
  if (a.host_paced) {
    for (coll::SweepRow& r : rows) {
      r.time_us = std::max(floor_us, r.time_us);
      r.algbw_GBps = r.bytes / (r.time_us * 1e3);
      r.busbw_GBps = r.algbw_GBps * coll::busbw_factor(*op, n);
    }
  }
  const coll::CommShape& shape = comm.layout().shape;

  // CSV and JSON stay tables; the note that nccl-tests prints goes beside them.
  if ((a.json || a.csv) && !reduced.empty()) std::cerr << "clustersim: note: " << reduced << "\n";
  if (a.json) {
    nlohmann::json out_json;
    out_json["clustersim_version"] = version_text();
    out_json["topology"] = cluster.name;
    out_json["op"] = coll::to_string(*op);
    out_json["nranks"] = shape.n_ranks;
    out_json["nnodes"] = shape.n_nodes;
    out_json["ranks"] = ranks;
    out_json["dtype"] = dtype->name;
    out_json["fidelity"] = a.fidelity;
    out_json["params"] = comm.params().source;
    out_json["host_paced"] = a.host_paced;
    if (a.host_paced) out_json["host_floor_us"] = floor_us;
    out_json["rows"] = nlohmann::json::array();
    for (const auto& r : rows) {
      out_json["rows"].push_back({{"size_bytes", r.bytes},
                                  {"count", r.count},
                                  {"type", dtype->name},
                                  {"redop", redop_of(*op)},
                                  {"root", root_of(*op)},
                                  {"time_us", r.time_us},
                                  {"algbw_GBps", r.algbw_GBps},
                                  {"busbw_GBps", r.busbw_GBps},
                                  {"algo", algo_name(r.choice)},
                                  {"proto", coll::to_string(r.choice.estimate.proto)},
                                  {"channels", r.choice.n_channels},
                                  {"predicted_us", r.choice.estimate.time_us}});
    }
    json = std::move(out_json);
    return;
  }
  char line[256];
  if (a.csv) {
    if (out.tellp() == 0) {
      out << (several ? "servers,ranks," : "")
          << "size,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,algo,proto,channels\n";
    }
    for (const auto& r : rows) {
      if (several) out << static_cast<int>(cluster.servers.size()) << "," << n << ",";
      std::snprintf(line, sizeof line, "%.0f,%lld,%s,%s,%d,%.3f,%.3f,%.3f,%s,%s,%d\n", r.bytes,
                    r.count, dtype->name.c_str(), redop_of(*op), root_of(*op), r.time_us,
                    r.algbw_GBps, r.busbw_GBps, algo_name(r.choice).c_str(),
                    coll::to_string(r.choice.estimate.proto), r.choice.n_channels);
      out << line;
    }
    return;
  }
  if (out.tellp() != 0) out << "\n";
  out << "# clustersim coll: " << coll::to_string(*op) << " on " << cluster.name << ", "
      << shape.n_ranks << (shape.n_ranks == 1 ? " rank on " : " ranks on ") << shape.n_nodes
      << " node(s), fidelity " << a.fidelity << ", " << comm.params().source << "\n";
  if (a.host_paced) {
    std::string source;
    if (!fitted_floor_us) {
      source = a.calibration.empty() ? " (prior)"
                                     : " (prior: the calibration fitted none for " +
                                           std::string(coll::to_string(*op)) + " at " +
                                           std::to_string(n) + (n == 1 ? " rank)" : " ranks)");
    }
    out << "# host-paced: each call max(host floor " << floor_us << " us" << source
        << ", the GPUs' time), as nccl-tests times it\n";
  }
  if (!reduced.empty()) out << "# " << reduced << "\n";
  if (shape.n_ranks == 1) {
    out << "# one rank: NCCL runs no algorithm, it copies the send buffer into the receive "
           "buffer on the GPU (out of place); algo, proto and channels are the tuner's "
           "unused pick\n";
  }
  out << "# ring graph: " << shape.ring.n_channels << " channels x " << shape.ring.bw_intra_GBps
      << " GB/s, run on "
      << std::min(shape.ring.n_channels * comm.params().runtime_channel_multiplier,
                  comm.params().max_channels)
      << "; NVLS " << (coll::nvls_enabled(shape, options) ? "on" : "off") << nvls_source;
  if (options.nccl_version > 0) out << "; NCCL " << a.nccl << "'s choice";
  if (shape.sharp)
    out << "; CollNet (SHARP) " << (coll::collnet_enabled(shape, options) ? "on" : "off")
        << (options.collnet ? "" : " (NCCL's default)");
  out << "\n#\n";
  std::snprintf(line, sizeof line, "#%12s %13s %9s %7s %7s %10s %8s %8s  %-6s %-6s %8s\n", "size",
                "count", "type", "redop", "root", "time", "algbw", "busbw", "algo", "proto",
                "channels");
  out << line;
  std::snprintf(line, sizeof line, "#%12s %13s %9s %7s %7s %10s %8s %8s\n", "(B)", "(elements)", "",
                "", "", "(us)", "(GB/s)", "(GB/s)");
  out << line;
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line,
                  " %12.0f %13lld %9s %7s %7d %10.2f %8.2f %8.2f  %-6s %-6s %8d\n", r.bytes,
                  r.count, dtype->name.c_str(), redop_of(*op), root_of(*op), r.time_us,
                  r.algbw_GBps, r.busbw_GBps, algo_name(r.choice).c_str(),
                  coll::to_string(r.choice.estimate.proto), r.choice.n_channels);
    out << line;
  }
}

}  // namespace

void add_coll_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "coll",
      "Simulate an nccl-tests collective sweep on a topology, on every rank unless -n says "
      "otherwise");
  auto args = std::make_shared<CollArgs>();
  cmd->add_option("--topology,-t", args->topology, "Topology YAML file")->required();
  cmd->add_option("--op", args->op, "Collective: " + coll::valid_ops());
  cmd->add_option("--ranks,-n", args->ranks,
                  "Rank count N (0..N-1) or list 0,1,8,9 / 0-7 (default: every rank of the "
                  "topology, or of each --nodes size)");
  cmd->add_option("-b,--minbytes", args->min_bytes, "Smallest size (8, 64K, 1G = GiB)");
  cmd->add_option("-e,--maxbytes", args->max_bytes, "Largest size");
  cmd->add_option("-f,--stepfactor", args->factor, "Size multiplier between rows");
  cmd->add_option("-i,--stepbytes", args->increment, "Size increment between rows (instead of -f)");
  cmd->add_option("--dtype,-d", args->dtype, "Element type: " + coll::valid_dtypes());
  cmd->add_option("--algo", args->algo,
                  "Force algorithms (like NCCL_ALGO): " + coll::valid_algos());
  cmd->add_option("--proto", args->proto,
                  "Force protocols (like NCCL_PROTO): " + coll::valid_protos());
  cmd->add_option("--nvls", args->nvls,
                  "NVLS and NVLSTree on or off, as NCCL_NVLS_ENABLE=1/0 (default: that variable, "
                  "else NCCL's default: on where the NVSwitch has multicast, sm90 or newer)");
  cmd->add_option("--collnet", args->collnet,
                  "CollNet (in-network reduction, where the fabric has sharp: true) on or off, as "
                  "NCCL_COLLNET_ENABLE=1/0 (default: that variable, else NCCL's default: off)");
  cmd->add_option(
      "--nccl", args->nccl,
      "The NCCL release whose algorithm choice to follow, e.g. 2.24.3 (default: 2.28.9, "
      "the release of the priors; before 2.28 NCCL priced NVLS and NVLSTree otherwise)");
  cmd->add_option("--fidelity", args->fidelity, "Network model: flow (congestion) or analytical");
  cmd->add_option("--calibration", args->calibration,
                  "Calibration file (clustersim fit): fitted NCCL parameters and link figures");
  cmd->add_flag("--host-paced", args->host_paced,
                "Time calls as nccl-tests does, one host thread launching every rank: each "
                "takes max(the host floor, the GPUs' time); the floor is the calibration's, "
                "else a prior measured per rank (printed in the header)");
  auto* csv = cmd->add_flag("--csv", args->csv, "Print CSV");
  cmd->add_flag("--json", args->json, "Print JSON")->excludes(csv);
  add_nodes_option(cmd, args->nodes, true);
  cmd->callback([args] {
    // Every count runs before anything is printed: a count that fails prints nothing.
    const std::vector<int> counts = parse_node_counts(args->nodes);
    std::ostringstream out;
    nlohmann::json json = nlohmann::json::array();
    for (const int servers : counts) {
      nlohmann::json one;
      run_coll(*args, servers, counts.size() > 1, out, one);
      if (args->json) json.push_back(std::move(one));
    }
    if (args->json) {
      std::cout << (counts.size() == 1 ? json.front() : json).dump(2) << "\n";
    } else {
      std::cout << out.str();
    }
  });
}

}  // namespace cs::cli
