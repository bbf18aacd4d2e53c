// A rendezvous through files: one process publishes a short text in a directory that every process
// of a run can read, the others wait for it. It carries NCCL's unique id from rank 0 to the other
// ranks of a one-process-per-GPU run, with no MPI or sockets of our own.
#pragma once

#include <string>

namespace cs_cal {

// Publishes `text` as DIR/NAME: written to a temporary and renamed, so a reader sees all of it or
// nothing. Throws if DIR/NAME exists already (left by an earlier run: use a fresh directory).
void publish_file(const std::string& dir, const std::string& name, const std::string& text);

// Waits until DIR/NAME exists and returns its content; throws after `timeout_s` seconds, naming
// the file and who should have written it (`writer`).
std::string await_file(const std::string& dir, const std::string& name, double timeout_s,
                       const std::string& writer);

// Removes DIR/NAME once every reader has it, so that the directory serves the next run.
void withdraw_file(const std::string& dir, const std::string& name);

}  // namespace cs_cal
