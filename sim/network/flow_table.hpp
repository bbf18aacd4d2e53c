// A connection matrix read from CSV (columns id, src, dst, bytes, start): the input of
// `clustersim flows`. Parsing and validation only; replay_flows() runs it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/units.hpp"
#include "topology/cluster/cluster.hpp"

namespace cs::net {

struct FlowRequest {
  std::string id;
  int src = -1;  // node index
  int dst = -1;
  double bytes = 0;
  TimePs start = 0;
  SourceLoc loc;  // the CSV line
};

// Parses CSV text. The first line that is neither blank nor a '#' comment is the header; it
// names the five columns, in any order. src and dst are node names ("node0/gpu3") or "rank:N";
// bytes takes a size ("1GiB", "4096"); start a time with its unit ("0us", "1.5ms"). A UTF-8 byte
// order mark and CR line ends are read as plain text. Throws InputError "file:line: key 'column':
// what is wrong; what would be valid", also for a header without rows, a control character, and
// sizes that the replay could not finish inside simulated time (flows x largest size / the
// cluster's slowest rate above 4e6 s).
std::vector<FlowRequest> parse_flow_table(std::string_view csv, const std::string& file,
                                          const topo::Cluster& cluster);
// Reads and parses a file; InputError if it cannot be read.
std::vector<FlowRequest> load_flow_table(const std::string& path, const topo::Cluster& cluster);

}  // namespace cs::net
