// Test support shared by the end-to-end tests: run a shell command and capture what it prints,
// and read a whole file (golden outputs, written CSVs) as text.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace cs::test {

struct CommandResult {
  int status = -1;  // the command's exit status; -1 if it did not exit normally
  std::string output;
};

// Runs `command` through the shell and returns its exit status and standard output (append
// `2>&1` to the command to capture standard error too).
inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// A path in the temporary folder for this test process alone (`name` and the process id), so that
// tests running side by side, or another checkout's, never write the same file.
inline std::filesystem::path scratch_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / (name + "-" + std::to_string(getpid()));
}

// The whole file as text; empty if it cannot be opened (the caller's CHECK then fails visibly).
inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace cs::test
