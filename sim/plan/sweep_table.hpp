// A sweep's results as a table of text cells (each number already printed, so that a threaded,
// an MPI and a merged sharded run write the same bytes), its CSV and JSON forms, shard files and
// their merge, and the thread pool that fills it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cs::plan {

struct SweepTable {
  std::vector<std::string> columns;
  std::vector<bool> numeric;  // per column: a number in JSON (empty cell: null), else a string
  std::vector<std::vector<std::string>> rows;  // by point index
};

// CSV with a header (RFC 4180 quoting where a cell needs it); JSON: an array of row objects.
std::string to_csv(const SweepTable& table);
std::string to_json(const SweepTable& table);

// A shard's file: which sweep (its digest), shard k of n, the total point count, the columns, and
// the rows of the points it ran (index i with i mod n == k).
struct Shard {
  std::uint64_t digest = 0;
  int k = 0;
  int n = 1;
  std::size_t points = 0;
};
std::string shard_text(const SweepTable& table, const Shard& shard);
// Joins shard files (path, text) into the table a single run writes. InputError naming the file
// when one is not a shard file, belongs to another sweep, repeats a shard, or when a shard is
// missing.
SweepTable merge_shards(const std::vector<std::pair<std::string, std::string>>& files);

// The points of shard k of n: indices i < count with i mod n == k (round-robin, so that expensive
// neighbouring points spread over the shards).
std::vector<std::size_t> shard_points(std::size_t count, int k, int n);

// Runs `work(i)` for every i in `points` on `threads` threads (at least 1), calling `progress`
// with the number done so far after each point (serialized). An exception in `work` stops the
// pool and is rethrown here.
void run_points(const std::vector<std::size_t>& points, int threads,
                const std::function<void(std::size_t)>& work,
                const std::function<void(std::size_t)>& progress);

}  // namespace cs::plan
