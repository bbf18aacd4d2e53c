#include "plan/sweep_table.hpp"

#include <atomic>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "plan/sweep_file.hpp"

namespace cs::plan {

namespace {

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

constexpr const char* kShardFormat = "clustersim-sweep-shard-v1";

// --shard K/N takes an int.
constexpr long long kMaxShards = std::numeric_limits<int>::max();

// A count or index of a shard file: an integer from lo to hi, checked before it sizes a table
// (nlohmann_json's get<int> would cast a fraction, and 1e300 is undefined behaviour).
long long shard_integer(const nlohmann::json& j, const std::string& key, long long lo, long long hi,
                        const std::string& path) {
  const nlohmann::json& v = j.at(key);
  if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi) {
    throw InputError(SourceLoc{path, 0}, key,
                     v.dump() + " is not an integer from " + std::to_string(lo) + " to " +
                         std::to_string(hi) + " (a damaged shard file)");
  }
  return v.get<long long>();
}

}  // namespace

std::string to_csv(const SweepTable& table) {
  std::ostringstream out;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    out << (c ? "," : "") << csv_cell(table.columns[c]);
  }
  out << "\n";
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << csv_cell(row[c]);
    out << "\n";
  }
  return out.str();
}

std::string to_json(const SweepTable& table) {
  std::ostringstream out;
  out << "[";
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    out << (r ? ",\n  {" : "\n  {");
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      const std::string& cell = table.rows[r][c];
      out << (c ? ", " : "") << nlohmann::json(table.columns[c]).dump() << ": ";
      // Numbers keep the text the table printed, so JSON and CSV agree digit for digit.
      if (table.numeric[c]) {
        out << (cell.empty() ? "null" : cell);
      } else {
        out << nlohmann::json(cell).dump();
      }
    }
    out << "}";
  }
  out << (table.rows.empty() ? "]\n" : "\n]\n");
  return out.str();
}

std::string shard_text(const SweepTable& table, const Shard& shard) {
  nlohmann::json j;
  j["format"] = kShardFormat;
  j["sweep"] = std::to_string(shard.digest);
  j["shard"] = shard.k;
  j["shards"] = shard.n;
  j["points"] = shard.points;
  j["columns"] = table.columns;
  j["numeric"] = table.numeric;
  j["rows"] = nlohmann::json::array();
  const std::vector<std::size_t> mine = shard_points(shard.points, shard.k, shard.n);
  CS_ASSERT(mine.size() == table.rows.size(), "a shard's table holds its points' rows");
  for (std::size_t i = 0; i < mine.size(); ++i) {
    j["rows"].push_back({{"point", mine[i]}, {"cells", table.rows[i]}});
  }
  return j.dump() + "\n";
}

SweepTable merge_shards(const std::vector<std::pair<std::string, std::string>>& files) {
  SweepTable table;
  std::vector<bool> filled;
  // By shard index: a file may claim any of 2^31 shards, so only those given are stored.
  std::map<int, std::string> shard_file;
  std::string sweep;
  int n = 0;
  for (const auto& [path, text] : files) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      throw InputError(path + ": not a sweep shard file (clustersim sweep --shard writes them)");
    }
    // The format compared as JSON: value("format", "") throws when it is not a string.
    if (!j.is_object() || j.value("format", nlohmann::json()) != kShardFormat) {
      throw InputError(path + ": not a sweep shard file (clustersim sweep --shard writes them)");
    }
    try {
      const auto k = static_cast<int>(shard_integer(j, "shard", 0, kMaxShards, path));
      if (shard_file.empty()) {
        sweep = j.at("sweep").get<std::string>();
        n = static_cast<int>(shard_integer(j, "shards", 1, kMaxShards, path));
        const auto points = static_cast<std::size_t>(
            shard_integer(j, "points", 0, static_cast<long long>(kMaxPoints), path));
        table.columns = j.at("columns").get<std::vector<std::string>>();
        table.numeric = j.at("numeric").get<std::vector<bool>>();
        if (table.numeric.size() != table.columns.size()) {
          throw InputError(SourceLoc{path, 0}, "numeric",
                           std::to_string(table.numeric.size()) + " flags for " +
                               std::to_string(table.columns.size()) +
                               " columns (a damaged shard file)");
        }
        table.rows.assign(points, {});
        filled.assign(points, false);
      } else if (j.at("sweep").get<std::string>() != sweep ||
                 shard_integer(j, "shards", 1, kMaxShards, path) != n) {
        throw InputError(path + ": a shard of another sweep (or of another split) than " +
                         files.front().first);
      }
      if (k < 0 || k >= n)
        throw InputError(path + ": shard " + std::to_string(k) + " of " + std::to_string(n) +
                         " is out of range");
      if (shard_file.count(k) != 0) {
        throw InputError(path + ": shard " + std::to_string(k) + "/" + std::to_string(n) +
                         " is also in " + shard_file[k]);
      }
      shard_file[k] = path;
      for (const auto& row : j.at("rows")) {
        const auto point = static_cast<std::size_t>(
            shard_integer(row, "point", 0, static_cast<long long>(kMaxPoints), path));
        auto cells = row.at("cells").get<std::vector<std::string>>();
        if (point >= table.rows.size() || filled[point] || cells.size() != table.columns.size()) {
          throw InputError(path + ": point " + std::to_string(point) + " does not belong here");
        }
        table.rows[point] = std::move(cells);
        filled[point] = true;
      }
    } catch (const nlohmann::json::exception& e) {
      throw InputError(path + ": a damaged shard file (" + e.what() + ")");
    }
  }
  for (int k = 0; k < n; ++k) {  // stops at the first missing, at most one past the files
    if (shard_file.count(k) == 0) {
      throw InputError("--merge: shard " + std::to_string(k) + "/" + std::to_string(n) +
                       " is missing");
    }
  }
  for (std::size_t i = 0; i < filled.size(); ++i) {
    if (!filled[i]) throw InputError("--merge: point " + std::to_string(i) + " is in no shard");
  }
  return table;
}

std::vector<std::size_t> shard_points(std::size_t count, int k, int n) {
  std::vector<std::size_t> out;
  for (std::size_t i = static_cast<std::size_t>(k); i < count; i += static_cast<std::size_t>(n)) {
    out.push_back(i);
  }
  return out;
}

void run_points(const std::vector<std::size_t>& points, int threads,
                const std::function<void(std::size_t)>& work,
                const std::function<void(std::size_t)>& progress) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::size_t done = 0;
  std::mutex mutex;
  std::exception_ptr first_error;
  const auto worker = [&] {
    while (!failed) {
      const std::size_t i = next++;
      if (i >= points.size()) return;
      try {
        work(points[i]);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!first_error) first_error = std::current_exception();
        failed = true;
        return;
      }
      const std::lock_guard<std::mutex> lock(mutex);
      progress(++done);
    }
  };
  std::vector<std::thread> pool;
  const int n = std::max(1, threads);
  for (int t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace cs::plan
