// rank_from_environment reads torchrun's or mpirun's variables; run_copies is a minimal torchrun:
// fork + exec of /proc/self/exe per rank, waiting for all, stopping the rest when one fails.
#include "launch.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <stdexcept>

namespace cs_cal {

namespace {

// An integer variable of the environment in [lo, hi]; none if unset or empty.
std::optional<int> integer_variable(const char* name, int lo, int hi) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < lo || value > hi)
    throw std::runtime_error(std::string("environment: ") + name + "=" + text +
                             ": expected an integer in " + std::to_string(lo) + ".." +
                             std::to_string(hi));
  return static_cast<int>(value);
}

// The place named by one launcher's three variables, or none if `rank` is unset.
std::optional<RankPlace> place_from(const char* rank, const char* size, const char* local_rank) {
  const char* rank_text = std::getenv(rank);
  if (rank_text == nullptr || *rank_text == '\0') return std::nullopt;
  const auto world_size = integer_variable(size, 1, 1 << 20);
  if (!world_size)
    throw std::runtime_error(std::string("environment: ") + rank + " is set but " + size +
                             " is not");
  const auto local = integer_variable(local_rank, 0, 1 << 20);
  if (!local)
    throw std::runtime_error(std::string("environment: ") + rank + " is set but " + local_rank +
                             " is not (the GPU this rank drives)");
  RankPlace place;
  place.world_size = *world_size;
  place.rank = *integer_variable(rank, 0, place.world_size - 1);
  place.local_rank = *local;
  place.named_by = rank;
  return place;
}

volatile sig_atomic_t stop_signal = 0;  // set by the launcher's SIGINT / SIGTERM handler

void note_signal(int signal_number) {
  stop_signal = signal_number;
}

// Exit code of a finished child as a shell reports it.
int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

std::optional<RankPlace> rank_from_environment() {
  if (auto place = place_from("RANK", "WORLD_SIZE", "LOCAL_RANK")) return place;
  return place_from("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK");
}

int run_copies(const std::string& program, int procs, const std::vector<std::string>& args) {
  const std::string base = std::filesystem::temp_directory_path() / "cs_cal_rendezvous.XXXXXX";
  std::vector<char> dir_template(base.begin(), base.end());
  dir_template.push_back('\0');
  if (mkdtemp(dir_template.data()) == nullptr)
    throw std::runtime_error("--procs: cannot make a rendezvous directory " + base + ": " +
                             std::strerror(errno));
  const std::string dir = dir_template.data();

  struct sigaction action {};
  action.sa_handler = note_signal;  // no SA_RESTART: waitpid returns, and the copies are stopped
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);

  std::vector<std::string> argv_text = {"/proc/self/exe"};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_text) argv.push_back(arg.data());
  argv.push_back(nullptr);

  std::map<pid_t, int> running;  // pid -> rank
  int first_failure = 0;
  for (int rank = 0; rank < procs && first_failure == 0; ++rank) {
    const pid_t pid = fork();
    if (pid == 0) {
      const std::string r = std::to_string(rank), n = std::to_string(procs);
      setenv("RANK", r.c_str(), 1);
      setenv("LOCAL_RANK", r.c_str(), 1);
      setenv("WORLD_SIZE", n.c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", n.c_str(), 1);
      setenv(kRendezvousVariable, dir.c_str(), 1);
      execv("/proc/self/exe", argv.data());
      std::cerr << program << ": --procs: cannot start rank " << rank << ": "
                << std::strerror(errno) << "\n";
      _exit(127);
    }
    if (pid < 0) {
      std::cerr << program << ": --procs: fork failed: " << std::strerror(errno) << "\n";
      first_failure = 1;
    } else {
      running[pid] = rank;
    }
  }
  bool stopped = false;
  while (!running.empty()) {
    if (!stopped && (first_failure != 0 || stop_signal != 0)) {
      for (const auto& [pid, rank] : running) kill(pid, SIGTERM);
      stopped = true;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // no children left to wait for
    }
    const auto found = running.find(pid);
    if (found == running.end()) continue;
    const int code = exit_code(status);
    if (code != 0 && first_failure == 0) {
      first_failure = code;
      if (running.size() > 1)
        std::cerr << program << ": rank " << found->second << " (pid " << pid
                  << ") failed with exit code " << code << "; stopping the other ranks\n";
    }
    running.erase(found);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  if (first_failure == 0 && stop_signal != 0) return 128 + stop_signal;
  return first_failure;
}

}  // namespace cs_cal
