// usable_memory: physical memory, RLIMIT_AS, and cgroup v2's memory.max for this process.
#include "core/memory_limit.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>

namespace cs {
namespace {

// The process's cgroup v2 memory.max in bytes, 0 when there is none or it reads "max".
std::uint64_t cgroup_memory_max() {
  std::ifstream self("/proc/self/cgroup");
  std::string line;
  std::string path;
  while (std::getline(self, line)) {
    if (line.rfind("0::", 0) == 0) path = line.substr(3);  // the v2 hierarchy's entry
  }
  for (const std::string& dir : {"/sys/fs/cgroup" + path, std::string("/sys/fs/cgroup")}) {
    std::ifstream max(dir + (dir.back() == '/' ? "" : "/") + "memory.max");
    std::string text;
    if (!(max >> text)) continue;
    if (text == "max") return 0;
    try {
      return std::stoull(text);
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

}  // namespace

MemoryLimit usable_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  MemoryLimit limit{pages > 0 && page > 0
                        ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
                        : UINT64_MAX,
                    "this machine's memory"};
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
      as.rlim_cur < limit.bytes) {
    limit = {as.rlim_cur, "this process's address-space limit (ulimit -v)"};
  }
  const std::uint64_t cgroup = cgroup_memory_max();
  if (cgroup > 0 && cgroup < limit.bytes) limit = {cgroup, "this cgroup's memory.max"};
  return limit;
}

}  // namespace cs
