// Reads NCCL's TUNING debug lines (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING) to learn which
// algorithm, protocol and channel count NCCL chose for each collective call. NCCL 2.2x prints, from
// rank 0 of each communicator, one line per call:
//   host:pid:tid [0] NCCL INFO AllReduce: 4194304 Bytes -> Algo RING proto LL128
//   channel{Lo..Hi}={0..23}
// where Bytes is the count passed to the call times the type size.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <tuple>

namespace cs_cal {

struct TuningChoice {
  std::string algo;     // as NCCL prints it: RING, TREE, NVLS, PAT, ...
  std::string proto;    // LL, LL128, SIMPLE
  int channels = 0;     // Hi - Lo + 1
  int calls = 0;        // lines that agreed on this choice
  int total_calls = 0;  // lines for this (function, bytes)
};

class TuningLog {
 public:
  // Tallies every TUNING line of `in`; other lines are ignored.
  explicit TuningLog(std::istream& in);
  // The choice NCCL made most often for `function` ("AllReduce", ...) at `bytes` (ties: first
  // seen).
  std::optional<TuningChoice> choice(const std::string& function, std::int64_t bytes) const;
  size_t lines() const { return lines_; }

 private:
  using Key = std::pair<std::string, std::int64_t>;
  using Choice = std::tuple<std::string, std::string, int>;
  std::map<Key, std::map<Choice, std::pair<int, size_t>>> tally_;  // count, first line
  size_t lines_ = 0;
};

// The file NCCL writes this process's log to for NCCL_DEBUG_FILE=`pattern`: %h becomes the host
// name up to its first '.', %p the process id, %% one '%' (NCCL's debug.cc, ncclDebugInit).
std::string nccl_debug_file_name(const std::string& pattern);

}  // namespace cs_cal
