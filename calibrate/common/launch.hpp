// One process per GPU, started the way users start NCCL jobs: a process learns its rank from the
// variables torchrun or mpirun set, or from `--procs=N`, which starts N copies of the program with
// torchrun's variables (no MPI needed). The copies meet through rendezvous.hpp's files.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cs_cal {

// This process's place in a run of several processes.
struct RankPlace {
  int rank = 0;          // 0 .. world_size-1
  int world_size = 1;    // processes in the run
  int local_rank = 0;    // this node's GPU to drive
  std::string named_by;  // the variable that gave the rank: "RANK" or "OMPI_COMM_WORLD_RANK"
};

// The place the environment names: RANK / WORLD_SIZE / LOCAL_RANK (torchrun, `--procs`), else
// OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK (mpirun); none when neither RANK variable is set.
// Throws std::runtime_error naming the variable when the set is partial or out of range.
std::optional<RankPlace> rank_from_environment();

// The variable through which `--procs` hands its fresh rendezvous directory to the copies.
inline constexpr const char* kRendezvousVariable = "CS_CAL_RENDEZVOUS";

// Starts `procs` copies of this executable with `args` (argv[1..], `--procs` removed), each with
// RANK=r, WORLD_SIZE=LOCAL_WORLD_SIZE=procs, LOCAL_RANK=r and CS_CAL_RENDEZVOUS naming a fresh
// directory, waits for all and removes the directory. When one copy fails, or this process is
// interrupted, the others are stopped. Returns 0, or the first failure's exit code (128 + signal
// for a copy killed by a signal).
int run_copies(const std::string& program, int procs, const std::vector<std::string>& args);

}  // namespace cs_cal
