// TuningLog: a tolerant scanner of NCCL's "<Func>: <n> Bytes -> Algo <a> proto <p>
// channel{Lo..Hi}={lo..hi}" lines; nccl_debug_file_name: where NCCL_DEBUG_FILE sends them.
#include "nccl_log.hpp"

#include <unistd.h>

#include <cstdio>
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

std::string nccl_debug_file_name(const std::string& pattern) {
  char host[1024] = "unknown";
  if (gethostname(host, sizeof host) != 0) std::snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = '\0';
  const std::string hostname = std::string(host).substr(0, std::string(host).find('.'));
  std::string name;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      name += pattern[i];
      continue;
    }
    const char code = pattern[++i];
    if (code == '%') {
      name += '%';
    } else if (code == 'h') {
      name += hostname;
    } else if (code == 'p') {
      name += std::to_string(getpid());
    } else {  // NCCL echoes what it does not know
      name += '%';
      name += code;
    }
  }
  return name;
}

}  // namespace cs_cal
