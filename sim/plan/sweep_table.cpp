#include "plan/sweep_table.hpp"

#include <atomic>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/error.hpp"

namespace cs::plan {

namespace {

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

constexpr const char* kShardFormat = "clustersim-sweep-shard-v1";

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
  std::vector<std::string> shard_file;
  std::string sweep;
  int n = 0;
  for (const auto& [path, text] : files) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      throw InputError(path + ": not a sweep shard file (clustersim sweep --shard writes them)");
    }
    if (!j.is_object() || j.value("format", "") != kShardFormat) {
      throw InputError(path + ": not a sweep shard file (clustersim sweep --shard writes them)");
    }
    try {
      const int k = j.at("shard").get<int>();
      if (shard_file.empty()) {
        sweep = j.at("sweep").get<std::string>();
        n = j.at("shards").get<int>();
        const auto points = j.at("points").get<std::size_t>();
        table.columns = j.at("columns").get<std::vector<std::string>>();
        table.numeric = j.at("numeric").get<std::vector<bool>>();
        table.rows.assign(points, {});
        filled.assign(points, false);
        shard_file.assign(static_cast<std::size_t>(n), "");
      } else if (j.at("sweep").get<std::string>() != sweep || j.at("shards").get<int>() != n) {
        throw InputError(path + ": a shard of another sweep (or of another split) than " +
                         files.front().first);
      }
      if (k < 0 || k >= n)
        throw InputError(path + ": shard " + std::to_string(k) + " of " + std::to_string(n) +
                         " is out of range");
      if (!shard_file[static_cast<std::size_t>(k)].empty()) {
        throw InputError(path + ": shard " + std::to_string(k) + "/" + std::to_string(n) +
                         " is also in " + shard_file[static_cast<std::size_t>(k)]);
      }
      shard_file[static_cast<std::size_t>(k)] = path;
      for (const auto& row : j.at("rows")) {
        const auto point = row.at("point").get<std::size_t>();
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
  for (std::size_t k = 0; k < shard_file.size(); ++k) {
    if (shard_file[k].empty()) {
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
