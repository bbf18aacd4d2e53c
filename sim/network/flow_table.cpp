// CSV parsing of connection matrices: header, rows, node names, units, one error per bad cell.
#include "network/flow_table.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "core/input_file.hpp"
#include "network/copies.hpp"

namespace cs::net {
namespace {

constexpr std::array<std::string_view, 5> kColumns{"id", "src", "dst", "bytes", "start"};
constexpr std::string_view kColumnList = "id, src, dst, bytes, start";

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = line.find(',', begin);
    fields.push_back(trim(line.substr(begin, comma - begin)));
    if (comma == std::string_view::npos) return fields;
    begin = comma + 1;
  }
}

// Resolves node names and "rank:N" with one hash map, and says what would be valid on a miss.
class NodeNames {
 public:
  explicit NodeNames(const topo::Cluster& cluster) : cluster_(cluster) {
    for (std::size_t v = 0; v < cluster.nodes.size(); ++v) {
      index_.emplace(cluster.nodes[v].name, static_cast<int>(v));
    }
  }

  int resolve(std::string_view text, const SourceLoc& loc, const std::string& column) const {
    if (text.empty()) throw InputError(loc, column, "empty; " + hint());
    if (text.starts_with("rank:")) {
      const std::string_view digits = text.substr(5);
      int rank = -1;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
      if (ec != std::errc() || end != digits.data() + digits.size() || rank < 0 ||
          static_cast<std::size_t>(rank) >= cluster_.ranks.size()) {
        throw InputError(loc, column, "'" + std::string(text) + "' is not a rank; " + hint());
      }
      return cluster_.ranks[static_cast<std::size_t>(rank)];
    }
    const auto found = index_.find(std::string(text));
    if (found == index_.end()) {
      throw InputError(loc, column, "no node named '" + std::string(text) + "'; " + hint());
    }
    return found->second;
  }

 private:
  std::string hint() const {
    std::string out = "valid: rank:0";
    if (cluster_.ranks.size() > 1) out += "..rank:" + std::to_string(cluster_.ranks.size() - 1);
    out += " or a node name such as";
    const std::size_t shown = std::min<std::size_t>(cluster_.nodes.size(), 4);
    for (std::size_t v = 0; v < shown; ++v) out += " '" + cluster_.nodes[v].name + "'";
    if (cluster_.nodes.size() > shown)
      out += " (" + std::to_string(cluster_.nodes.size()) + " nodes)";
    return out;
  }

  const topo::Cluster& cluster_;
  std::unordered_map<std::string, int> index_;
};

// Column positions by name, from the header line.
std::array<std::size_t, kColumns.size()> read_header(const std::vector<std::string_view>& fields,
                                                     const SourceLoc& loc) {
  std::array<std::size_t, kColumns.size()> position;
  position.fill(std::string_view::npos);
  for (std::size_t f = 0; f < fields.size(); ++f) {
    const auto known = std::find(kColumns.begin(), kColumns.end(), fields[f]);
    if (known == kColumns.end()) {
      throw InputError(loc, std::string(fields[f]),
                       "unknown column; the columns are " + std::string(kColumnList));
    }
    auto& slot = position[static_cast<std::size_t>(known - kColumns.begin())];
    if (slot != std::string_view::npos) {
      throw InputError(loc, std::string(fields[f]), "column named twice");
    }
    slot = f;
  }
  for (std::size_t c = 0; c < kColumns.size(); ++c) {
    if (position[c] == std::string_view::npos) {
      throw InputError(loc, std::string(kColumns[c]),
                       "missing column; the header must name " + std::string(kColumnList));
    }
  }
  return position;
}

double parse_bytes(std::string_view text, const SourceLoc& loc) {
  double bytes = 0;
  try {
    bytes = units::parse_size_bytes(text);
  } catch (const UnitError& e) {
    throw InputError(loc, "bytes", e.what());
  }
  if (!(bytes >= 0) || !std::isfinite(bytes)) {
    throw InputError(loc, "bytes", "'" + std::string(text) + "' must be a size >= 0");
  }
  return bytes;
}

TimePs parse_start(std::string_view text, const SourceLoc& loc) {
  double seconds = 0;
  try {
    seconds = units::parse_time_s(text);
  } catch (const UnitError& e) {
    throw InputError(loc, "start", e.what());
  }
  // 1e6 s (11.6 days) keeps every start and finish well inside TimePs.
  if (!(seconds >= 0) || seconds > 1e6) {
    throw InputError(loc, "start", "'" + std::string(text) + "' must be a time in [0, 1e6 s]");
  }
  return ps_from_seconds(seconds);
}

// The slowest rate a flow can be held to by itself: a link direction's effective bandwidth, or a
// device-local copy's (device_copy_Bps).
double slowest_rate_Bps(const topo::Cluster& cluster) {
  double slowest = std::numeric_limits<double>::infinity();
  for (const topo::Link& l : cluster.links) {
    if (l.effective_bandwidth_Bps() > 0) slowest = std::min(slowest, l.effective_bandwidth_Bps());
  }
  for (const topo::GpuModel& m : cluster.gpu_models) {
    if (m.memory_bandwidth_Bps > 0) slowest = std::min(slowest, device_copy_Bps(m));
  }
  return slowest;
}

// Simulated time ends at kEndOfTimeSeconds, 9.22e6 s. Starts stay below 1e6 s
// (parse_start). Under max-min sharing every flow gets at least the slowest rate divided by the
// number of flows, so the flow model's projected drain of any flow, and the time by which all
// have drained, stay below flows x largest size / slowest rate; keeping that below 4e6 s keeps
// every start + drain + route latency inside TimePs with room to spare.
constexpr double kMaxDrainSeconds = 4e6;

void check_drain_time(const std::vector<FlowRequest>& rows, const topo::Cluster& cluster,
                      const std::vector<std::string>& bytes_text) {
  if (rows.empty()) return;
  std::size_t largest = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].bytes > rows[largest].bytes) largest = i;
  }
  const double slowest = slowest_rate_Bps(cluster);
  const double n = static_cast<double>(rows.size());
  const double bound_s = n * rows[largest].bytes / slowest;
  if (!(bound_s <= kMaxDrainSeconds)) {
    throw InputError(rows[largest].loc, "bytes",
                     "'" + bytes_text[largest] +
                         "' is too large to simulate: " + std::to_string(rows.size()) +
                         " flow(s) of up to this size at the cluster's slowest rate (" +
                         units::format_bandwidth(slowest) + ") could take " +
                         units::format_time(bound_s) + "; at most 4e6 s fits in simulated time");
  }
}

// A control character in a field (a NUL from a binary file, a lone CR inside a line).
void check_text(std::string_view field, const SourceLoc& loc, const std::string& key) {
  for (const char c : field) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) continue;
    if (c == '\t') continue;
    char code[8];
    std::snprintf(code, sizeof code, "0x%02x", byte);
    throw InputError(
        loc, key, std::string("control character ") + code + " in the text; is this a CSV file?");
  }
}

}  // namespace

std::vector<FlowRequest> parse_flow_table(std::string_view csv, const std::string& file,
                                          const topo::Cluster& cluster) {
  const NodeNames names(cluster);
  std::vector<FlowRequest> rows;
  std::vector<std::string> bytes_text;  // as written, for the size check's message
  std::unordered_set<std::string> ids;
  std::array<std::size_t, kColumns.size()> column{};
  bool have_header = false;
  int header_line = 0;
  int line_number = 0;
  // A UTF-8 byte order mark, as spreadsheet programs write it, is not part of the header.
  std::size_t begin = csv.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  while (begin <= csv.size()) {
    const std::size_t newline = csv.find('\n', begin);
    const std::string_view line = trim(csv.substr(
        begin, newline == std::string_view::npos ? csv.size() - begin : newline - begin));
    begin = newline == std::string_view::npos ? csv.size() + 1 : newline + 1;
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    const SourceLoc loc{file, line_number};
    const auto fields = split_fields(line);
    // Binary data is named as such before one of its bytes is taken for a quote.
    if (!have_header) {
      for (const std::string_view f : fields) check_text(f, loc, "");
    }
    if (line.find('"') != std::string_view::npos) {
      throw InputError(loc, "", "quoted fields are not supported; names and sizes need no quotes");
    }
    if (!have_header) {
      column = read_header(fields, loc);
      have_header = true;
      header_line = line_number;
      continue;
    }
    if (fields.size() != kColumns.size()) {
      throw InputError(loc, "",
                       "the row has " + std::to_string(fields.size()) +
                           " fields; the header names " + std::to_string(kColumns.size()) + " (" +
                           std::string(kColumnList) + ")");
    }
    for (std::size_t c = 0; c < kColumns.size(); ++c)
      check_text(fields[column[c]], loc, std::string(kColumns[c]));
    FlowRequest row;
    row.loc = loc;
    row.id = std::string(fields[column[0]]);
    if (row.id.empty()) throw InputError(loc, "id", "empty; every flow needs an id");
    if (!ids.insert(row.id).second) {
      throw InputError(loc, "id", "'" + row.id + "' is used by an earlier row; ids are unique");
    }
    row.src = names.resolve(fields[column[1]], loc, "src");
    row.dst = names.resolve(fields[column[2]], loc, "dst");
    row.bytes = parse_bytes(fields[column[3]], loc);
    row.start = parse_start(fields[column[4]], loc);
    rows.push_back(std::move(row));
    bytes_text.emplace_back(fields[column[3]]);
  }
  if (!have_header) {
    throw InputError(SourceLoc{file, 1}, "",
                     "no header line; it must name " + std::string(kColumnList));
  }
  if (rows.empty()) {
    throw InputError(
        SourceLoc{file, header_line}, "",
        "no flows after the header; give one row per flow (" + std::string(kColumnList) + ")");
  }
  check_drain_time(rows, cluster, bytes_text);
  return rows;
}

std::vector<FlowRequest> load_flow_table(const std::string& path, const topo::Cluster& cluster) {
  return parse_flow_table(read_input_file(path, "flows file"), path, cluster);
}

}  // namespace cs::net
