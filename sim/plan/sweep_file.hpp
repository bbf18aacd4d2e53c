// A sweep file: one command (ddp, coll or plan) run over the cartesian product of axes. The file
// says which command, each axis's values in order, and for plan its target and prices; points are
// numbered with the first axis varying slowest, so every run, threaded, MPI or sharded, lists them
// in the same order.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "plan/candidates.hpp"

namespace cs::plan {

// The most points one sweep may have: a sweep file's axes and a shard file's point count.
inline constexpr std::size_t kMaxPoints = 10'000'000;

enum class SweepCommand { ddp, coll, plan };
const char* to_string(SweepCommand command);

struct Axis {
  std::string name;                 // "topology", "nodes", "batch", ...
  std::vector<std::string> values;  // as written in the file (printed so in every row)
  std::vector<SourceLoc> locs;      // each value's line, for messages about it
};

struct SweepFile {
  std::string file;
  std::string dir;  // the file's folder: relative topology and model paths start there
  SweepCommand command = SweepCommand::ddp;
  std::vector<Axis> axes;                // in file order
  Target target;                         // plan only
  std::map<std::string, double> prices;  // plan only: template -> USD per hour
  std::uint64_t digest = 0;              // FNV-1a of the file's bytes: shards of one sweep share it
};

// Reads and checks a sweep file: the keys per command, axes that are non-empty lists of scalars,
// integers and numbers where an axis needs one, the point count (at most 10,000,000). Values that
// name files or collectives are checked by the caller, which knows them (cli/sweep_points).
// Throws InputError "file:line: key 'k': ..." otherwise.
SweepFile load_sweep_file(const std::string& path);
SweepFile parse_sweep(const std::string& text, const std::string& file);

std::size_t point_count(const SweepFile& sweep);
// The value index on each axis of point `index` (first axis slowest).
std::vector<std::size_t> point_coordinates(const SweepFile& sweep, std::size_t index);

// Whether an axis holds numbers (nodes, batch, seq, global_batch: integers; bucket_cap_mb).
bool numeric_axis(const std::string& name);

// The axes each command accepts, and those it requires.
const std::vector<std::string>& allowed_axes(SweepCommand command);
const std::vector<std::string>& required_axes(SweepCommand command);

}  // namespace cs::plan
