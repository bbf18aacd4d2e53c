// write_file_atomically: temp file in the target's folder, flushed, then renamed over the target.
#include "core/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/error.hpp"

namespace cs {

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path + ": cannot write: " + std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw InputError(path + ": write failed: " + std::strerror(errno));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw InputError(path + ": cannot rename the finished file into place: " + reason);
  }
}

}  // namespace cs
