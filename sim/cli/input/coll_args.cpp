// The coll command's flag checks (coll_args.hpp).
#include "cli/input/coll_args.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "core/units.hpp"

namespace cs::cli {

double parse_nccl_size(const std::string& text, const std::string& key) {
  if (!text.empty()) {
    const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
    const std::string digits = text.substr(0, text.size() - 1);
    double scale = 0;
    if (last == 'K') scale = 1024.0;
    if (last == 'M') scale = 1024.0 * 1024.0;
    if (last == 'G') scale = kGiB;
    if (last == 'T') scale = kGiB * 1024.0;
    double value = 0;
    const char* end = digits.data() + digits.size();
    const auto [used, ec] = std::from_chars(digits.data(), end, value, std::chars_format::fixed);
    if (scale > 0 && !digits.empty() && ec == std::errc() && used == end &&
        digits.find_first_not_of("0123456789.") == std::string::npos)
      return value * scale;
  }
  try {
    return units::parse_size_bytes(text);
  } catch (const UnitError& e) {
    throw InputError("key '" + key + "': " + e.what() + " (nccl-tests style 8, 64K, 1G also work)");
  }
}

std::vector<int> parse_ranks(const std::string& text, int cluster_ranks) {
  std::vector<int> out;
  auto bad = [&](const std::string& why) {
    return InputError("key 'ranks': '" + text + "' " + why + "; give a count N (ranks 0..N-1) " +
                      "or a list like 0,1,8,9 or 0-7,16-23 of ranks 0.." +
                      std::to_string(cluster_ranks - 1));
  };
  if (text.empty()) {
    for (int r = 0; r < cluster_ranks; ++r) out.push_back(r);
    return out;
  }
  auto to_int = [&](const std::string& s) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9)
      throw bad("is not a rank list");
    return std::stoi(s);
  };
  auto in_range = [&](int r) {
    if (r >= cluster_ranks)
      throw bad("is out of range: rank " + std::to_string(r) + " does not exist");
    return r;
  };
  if (text.find_first_of(",-") == std::string::npos) {
    const int n = to_int(text);
    if (n < 1) throw bad("asks for no ranks; a collective needs at least 1");
    if (n > cluster_ranks) throw bad("asks for more ranks than the cluster has");
    for (int r = 0; r < n; ++r) out.push_back(r);
    return out;
  }
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto dash = item.find('-');
    if (dash == std::string::npos) {
      out.push_back(in_range(to_int(item)));
    } else {
      const int lo = to_int(item.substr(0, dash));
      const int hi = in_range(to_int(item.substr(dash + 1)));
      if (hi < lo) throw bad("has a range that runs backwards");
      for (int r = lo; r <= hi; ++r) out.push_back(r);
    }
  }
  return out;
}

void check_steps(double min_bytes, double factor, double increment) {
  if (increment < 0)
    throw InputError("key 'stepbytes': -i must be a size of 0 or more (0: use -f)");
  if (increment > 0) return;
  if (!std::isfinite(factor))
    throw InputError("key 'stepfactor': -f must be a finite number above 1");
  if (min_bytes > 0 && factor > 1 && !(std::floor(min_bytes * factor) > min_bytes)) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%.10g", factor);
    throw InputError("key 'stepfactor': -f " + std::string(shown) + " does not grow " +
                     std::to_string(static_cast<long long>(min_bytes)) +
                     " bytes (each size is floor(previous x factor)); give a larger -f or -b");
  }
}

MemoryLimit memory_limit(const topo::Cluster& cluster, const std::vector<int>& ranks) {
  MemoryLimit limit;
  for (const int r : ranks) {
    const topo::Node& gpu = cluster.nodes[static_cast<std::size_t>(cluster.ranks[r])];
    const topo::GpuModel& model = cluster.gpu_models[static_cast<std::size_t>(gpu.gpu_model)];
    const double bytes = std::max(0.0, std::floor((model.memory_bytes - kGiB) / 3));
    if (bytes < limit.max_bytes) limit = MemoryLimit{bytes, r};
  }
  return limit;
}

std::string memory_rule(const topo::Cluster& cluster, const MemoryLimit& limit) {
  const topo::Node& gpu = cluster.nodes[static_cast<std::size_t>(cluster.ranks[limit.rank])];
  const topo::GpuModel& model = cluster.gpu_models[static_cast<std::size_t>(gpu.gpu_model)];
  return "nccl-tests' memory rule, (memory - 1 GiB) / 3 per buffer on rank " +
         std::to_string(limit.rank) + " (" + gpu.name + ", " + model.name + ", " +
         units::format_size(model.memory_bytes) + ")";
}

}  // namespace cs::cli
