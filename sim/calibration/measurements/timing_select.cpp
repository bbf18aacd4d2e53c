// Choosing one timing per NCCL point: index the records by point, then keep the wanted one.
#include "calibration/measurements/timing_select.hpp"

#include <map>
#include <tuple>

#include "core/error.hpp"

namespace cs::cal {
namespace {

using PointKey = std::tuple<std::string, int, double, std::string, std::string>;

PointKey key_of(const NcclPoint& p) {
  return {p.op, p.n_ranks, p.bytes, p.forced_algo, p.forced_proto};
}

// Index of each point's record per timing; throws on a second record of one point and timing.
struct PointRecords {
  int host_paced = -1;
  int gated = -1;
};

std::map<PointKey, PointRecords> index_points(const std::vector<NcclPoint>& nccl) {
  std::map<PointKey, PointRecords> points;
  for (int i = 0; i < static_cast<int>(nccl.size()); ++i) {
    const NcclPoint& p = nccl[i];
    PointRecords& r = points[key_of(p)];
    int& slot = p.timing == NcclTiming::gated ? r.gated : r.host_paced;
    if (slot >= 0) {
      const SourceLoc& first = nccl[slot].loc;
      throw InputError(p.loc, "timing",
                       std::string("a second ") + to_string(p.timing) + " record of this point (" +
                           p.op + " on " + std::to_string(p.n_ranks) + " ranks, " +
                           std::to_string(static_cast<long long>(p.bytes)) +
                           " bytes); the first is at " + first.file + ":" +
                           std::to_string(first.line));
    }
    slot = i;
  }
  return points;
}

}  // namespace

std::string TimingSelection::describe() const {
  std::string out =
      std::string("timing: ") + to_string(timing) + " (" + std::to_string(kept) + " NCCL records";
  if (timing == NcclTiming::gated)
    out += "; host_paced for " + std::to_string(fallback) + " points without a gated one";
  return out + "; " + std::to_string(dropped) + " records of the other timing left out)";
}

TimingSelection select_nccl_timing(Measurements& data, NcclTiming timing) {
  const std::map<PointKey, PointRecords> points = index_points(data.nccl);
  std::vector<bool> keep(data.nccl.size(), false);
  TimingSelection s;
  s.timing = timing;
  for (const auto& [key, r] : points) {
    if (timing == NcclTiming::gated && r.gated >= 0) {
      keep[r.gated] = true;
      ++s.kept;
    } else if (r.host_paced >= 0) {
      keep[r.host_paced] = true;
      ++(timing == NcclTiming::gated ? s.fallback : s.kept);
    }
  }
  std::vector<NcclPoint> kept;
  for (std::size_t i = 0; i < data.nccl.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(data.nccl[i]));
  }
  s.dropped = static_cast<int>(data.nccl.size() - kept.size());
  data.nccl = std::move(kept);
  return s;
}

NcclTiming nccl_timing_option(const std::string& text, const std::string& key) {
  const std::optional<NcclTiming> t = parse_nccl_timing(text);
  if (!t) throw InputError("key '" + key + "': '" + text + "' is not host_paced or gated");
  return *t;
}

}  // namespace cs::cal
