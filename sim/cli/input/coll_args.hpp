// The coll command's flag checks, as nccl-tests reads its flags: sizes ("1G" = 1 GiB), rank
// lists, the size ladder's steps, and nccl-tests' memory rule for the largest size.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "topology/cluster/cluster.hpp"

namespace cs::cli {

// nccl-tests sizes: a bare number of bytes, or K / M / G / T as powers of 1024 ("1G" = 1 GiB);
// anything else goes through the simulator's unit parser ("1GB", "512MiB"). `key` names the flag.
double parse_nccl_size(const std::string& text, const std::string& key);

// "16" = ranks 0..15; "0,1,8,9" and "0-7,16-23" = those ranks; empty = every rank.
std::vector<int> parse_ranks(const std::string& text, int cluster_ranks);

// What nccl-tests would refuse or loop on: a step that is not a finite size or factor, or a factor
// that does not grow the first size (each row is floor(previous x factor) bytes).
void check_steps(double min_bytes, double factor, double increment);

// nccl-tests keeps a send, a receive and, with its data check (on by default), an expected buffer
// of up to -e bytes on every GPU, beside 1 GiB for NCCL and CUDA, and lowers -e to fit:
// common.cu, memMaxBytes = (totalGlobalMem - 1 GiB) / (datacheck ? 3 : 2). The largest size the
// ranks' GPUs allow under that rule, and the rank whose GPU sets it.
struct MemoryLimit {
  double max_bytes = std::numeric_limits<double>::infinity();
  int rank = -1;
};
MemoryLimit memory_limit(const topo::Cluster& cluster, const std::vector<int>& ranks);
// The rule and the GPU behind a limit, in words for messages.
std::string memory_rule(const topo::Cluster& cluster, const MemoryLimit& limit);

}  // namespace cs::cli
