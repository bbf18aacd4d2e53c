// TuningLog: a tolerant scanner of NCCL's "<Func>: <n> Bytes -> Algo <a> proto <p>
// channel{Lo..Hi}={lo..hi}" lines.
#include "nccl_log.hpp"

#include <regex>

namespace cs_cal {

TuningLog::TuningLog(std::istream& in) {
  static const std::regex kLine(
      R"(NCCL INFO ([A-Za-z]+): (\d+) Bytes -> Algo (\S+) proto (\S+)(?: channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\})?)");
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find(" Bytes -> Algo ") == std::string::npos) continue;
    std::smatch m;
    if (!std::regex_search(line, m, kLine)) continue;
    const int channels = m[5].matched ? std::stoi(m[6].str()) - std::stoi(m[5].str()) + 1 : 0;
    auto& slot = tally_[{m[1].str(), std::stoll(m[2].str())}][{m[3].str(), m[4].str(), channels}];
    if (slot.first == 0) slot.second = number;
    ++slot.first;
    ++lines_;
  }
}

std::optional<TuningChoice> TuningLog::choice(const std::string& function,
                                              std::int64_t bytes) const {
  const auto found = tally_.find({function, bytes});
  if (found == tally_.end()) return std::nullopt;
  TuningChoice best;
  size_t best_line = 0;
  for (const auto& [choice, seen] : found->second) {
    best.total_calls += seen.first;
    if (seen.first > best.calls || (seen.first == best.calls && seen.second < best_line)) {
      best.algo = std::get<0>(choice);
      best.proto = std::get<1>(choice);
      best.channels = std::get<2>(choice);
      best.calls = seen.first;
      best_line = seen.second;
    }
  }
  return best;
}

}  // namespace cs_cal
