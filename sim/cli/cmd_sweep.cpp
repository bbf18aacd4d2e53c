// `clustersim sweep SWEEP.yaml`: a command (ddp, coll or plan) over the cartesian product of the
// file's axes, one CSV or JSON row per point in a fixed order, on every core; under mpirun the
// points split over the ranks, with --shard K/N over a job array, and --merge joins the shards into
// the file a single run writes.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "cli/output/output_files.hpp"
#include "cli/output/output_guard.hpp"
#include "cli/sweep_mpi.hpp"
#include "cli/sweep_points.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "plan/sweep_file.hpp"
#include "plan/sweep_table.hpp"

namespace cs::cli {
namespace {

struct SweepArgs {
  std::vector<std::string> inputs;
  std::string output;
  bool json = false;
  int threads = 0;
  std::string shard;
  bool merge = false;
  bool quiet = false;
};

struct ShardSpec {
  int k = 0;
  int n = 1;
};

// "2/8": shard 2 of 8 (0-based).
ShardSpec parse_shard(const std::string& text) {
  int k = -1;
  int n = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%d/%d%c", &k, &n, &tail) != 2 || n < 1 || k < 0 || k >= n) {
    throw InputError("--shard: '" + text + "' is not K/N with 0 <= K < N (e.g. 0/4)");
  }
  return {k, n};
}

// Progress on standard error: a line rewritten in place on a terminal, else every tenth.
class Progress {
 public:
  Progress(std::size_t total, bool quiet) : total_(total), quiet_(quiet) {
    tty_ = ::isatty(STDERR_FILENO) != 0;
  }
  void operator()(std::size_t done) {
    if (quiet_) return;
    const std::size_t tenth = done * 10 / (total_ ? total_ : 1);
    if (!tty_ && tenth == last_tenth_ && done != total_) return;
    last_tenth_ = tenth;
    std::fprintf(stderr, "%sclustersim sweep: %zu/%zu points%s", tty_ ? "\r" : "", done, total_,
                 tty_ && done != total_ ? "" : "\n");
  }

 private:
  std::size_t total_;
  bool quiet_;
  bool tty_ = false;
  std::size_t last_tenth_ = 0;
};

void write_output(const SweepArgs& a, const std::string& text) {
  if (a.output.empty()) {
    std::cout << text;
    return;
  }
  OutputFiles files;
  files.add("-o", a.output, text);
  files.write_all();
}

std::string table_text(const SweepArgs& a, const plan::SweepTable& table) {
  return a.json ? plan::to_json(table) : plan::to_csv(table);
}

void run_merge(const SweepArgs& a) {
  if (!a.shard.empty()) throw InputError("--merge: joins shards; it takes no --shard");
  if (a.inputs.empty()) throw InputError("--merge: give the shard files to join");
  std::vector<NamedPath> inputs;
  std::vector<std::pair<std::string, std::string>> files;
  for (const std::string& path : a.inputs) {
    inputs.push_back({"shard file", path});
    files.emplace_back(path, read_input_file(path, "shard file"));
  }
  refuse_outputs_over_inputs({{"-o", a.output}}, inputs);
  write_output(a, table_text(a, plan::merge_shards(files)));
}

void run_sweep(const SweepArgs& a) {
  if (a.merge) {
    run_merge(a);
    return;
  }
  if (a.inputs.size() != 1) {
    throw InputError("sweep: give one sweep file (or --merge and the shard files to join)");
  }
  refuse_outputs_over_inputs({{"-o", a.output}}, {{"sweep file", a.inputs.front()}});
  if (a.threads < 0) throw InputError("--threads: must be at least 1");
  const bool sharded = !a.shard.empty();
  const ShardSpec shard = sharded ? parse_shard(a.shard) : ShardSpec{};
  if (sharded && a.json)
    throw InputError("--json: a shard file has its own format; give it to --merge");
  const MpiWorld mpi;
  if (sharded && mpi.size() > 1) throw InputError("--shard: not under mpirun (the ranks split it)");

  const plan::SweepFile sweep = plan::load_sweep_file(a.inputs.front());
  const SweepPoints points(sweep);
  const std::size_t total = points.count();
  const std::vector<std::size_t> mine = sharded ? plan::shard_points(total, shard.k, shard.n)
                                                : plan::shard_points(total, mpi.rank(), mpi.size());
  const unsigned cores = std::thread::hardware_concurrency();
  const int threads = a.threads > 0 ? a.threads : mpi.size() > 1 ? 1 : static_cast<int>(cores);

  plan::SweepTable table{points.columns(), points.numeric(), {}};
  table.rows.resize(mine.size());
  std::vector<std::size_t> positions(mine.size());
  for (std::size_t i = 0; i < positions.size(); ++i) positions[i] = i;
  Progress progress(mine.size(), a.quiet || mpi.rank() != 0);
  plan::run_points(
      positions, threads, [&](std::size_t i) { table.rows[i] = points.run(mine[i]); },
      [&](std::size_t done) { progress(done); });

  if (sharded) {
    write_output(a, plan::shard_text(table, {sweep.digest, shard.k, shard.n, total}));
    return;
  }
  if (mpi.size() > 1) {
    // Every rank's rows to rank 0, which puts them back in point order.
    const std::vector<std::string> parts = mpi.gather(nlohmann::json(table.rows).dump());
    if (mpi.rank() != 0) return;
    table.rows.assign(total, {});
    for (int r = 0; r < mpi.size(); ++r) {
      const auto rows = nlohmann::json::parse(parts[static_cast<std::size_t>(r)])
                            .get<std::vector<std::vector<std::string>>>();
      const std::vector<std::size_t> theirs = plan::shard_points(total, r, mpi.size());
      for (std::size_t i = 0; i < rows.size(); ++i) table.rows[theirs[i]] = rows[i];
    }
  }
  write_output(a, table_text(a, table));
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Run ddp, coll or plan over the cartesian product of a sweep file's axes, every point on "
      "every GPU of its cluster");
  cmd->add_option("files", args->inputs, "The sweep file (with --merge: the shard files)")
      ->required();
  cmd->add_option("-o,--output", args->output, "Write the table here (default: standard output)");
  cmd->add_flag("--json", args->json, "JSON rows instead of CSV");
  cmd->add_option("--threads", args->threads,
                  "Threads (default: every core; 1 per rank under mpirun)");
  cmd->add_option("--shard", args->shard,
                  "K/N: run only points i with i mod N == K and write a shard file for --merge");
  cmd->add_flag("--merge", args->merge, "Join shard files into the table a single run writes");
  cmd->add_flag("--quiet,-q", args->quiet, "No progress on standard error");
  cmd->callback([args] { run_sweep(*args); });
}

}  // namespace cs::cli
