// How much memory this process may take, so that an input too large for it is refused before
// it is built rather than after minutes of paging: the least of the machine's physical memory,
// the process's address-space limit (ulimit -v) and its cgroup's memory.max (a container's).
#pragma once

#include <cstdint>
#include <string>

namespace cs {

struct MemoryLimit {
  std::uint64_t bytes = 0;
  std::string what;  // which limit it is, for messages: "this machine's memory", ...
};

// The least of the limits that apply; Linux (sysconf, getrlimit, /sys/fs/cgroup).
MemoryLimit usable_memory();

}  // namespace cs
