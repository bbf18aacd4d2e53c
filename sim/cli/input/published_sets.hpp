// Published nccl-tests results (calibrate/published/*.yaml) and their prediction: each set names a
// topology, a server count, the ranks per server and a collective; its points are sizes with the
// time or busbw the source printed. `clustersim compare` renders what predict_sets returns.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collectives/tuner/tuner.hpp"
#include "core/error.hpp"

namespace cs::cli {

struct PublishedPoint {
  double bytes = 0;
  double time_us = 0;     // the source's time; where it printed busbw, S x busbw factor / busbw
  double busbw_GBps = 0;  // the source's busbw (0 where it printed the time)
};

struct PublishedSet {
  std::string name;
  std::string role;  // "fit": the priors were read off it; "check": never used to set a figure
  std::string source;
  std::string topology;  // resolved against the sets file's folder
  int nodes = 0;
  int gpus_per_node = 0;        // 0: every GPU of each server
  SourceLoc gpus_per_node_loc;  // its line, for the check against the topology's servers
  std::string op;
  bool in_place = false;
  bool nvls = false;
  int nccl_version = 0;  // the NCCL release the run used (NCCL_VERSION_CODE); 0: not known
  std::map<std::string, std::string> env;  // as the run set it
  std::vector<PublishedPoint> points;      // ascending sizes
};

// Reads and checks a sets file: file:line:key errors for unknown keys, bad sizes, times or busbw,
// a role other than fit/check, a flag other than true/false, a missing topology file, an op or an
// env NCCL_ALGO / NCCL_PROTO the simulator does not know, an `nccl` release it cannot read.
std::vector<PublishedSet> load_published_sets(const std::string& path);

struct ComparedPoint {
  PublishedPoint published;
  double predicted_us = 0;
  double error = 0;  // (predicted - published) / published
  coll::TunerChoice choice;
};

struct ComparedSet {
  const PublishedSet* set = nullptr;
  std::string cluster;  // the topology's name
  int ranks = 0;
  std::vector<std::string> unmodelled_env;  // env keys the simulator does not read
  std::vector<ComparedPoint> points;
};

// Simulates every point alone (flow fidelity, NCCL's default choice under the set's env), as the
// GPUs' time of one call: nccl-tests' averages over back-to-back calls, whose host floor (a few us)
// is far below the multi-node latencies these sets show.
std::vector<ComparedSet> predict_sets(const std::vector<PublishedSet>& sets);

// Size bands of the summary: below 1 MiB and from 1 MiB up.
inline constexpr double kBandBytes = 1024.0 * 1024.0;

}  // namespace cs::cli
