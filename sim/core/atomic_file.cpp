// write_file_atomically: temp file in the target's folder, flushed, then renamed over the target.
#include "core/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/error.hpp"

namespace cs {

std::string write_temporary(const std::string& path, std::string_view content,
                            const std::string& what) {
  std::string temporary = path + ".clustersim-" + std::to_string(::getpid()) + ".tmp";
  std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw InputError(SourceLoc{path, 0}, "", "cannot write " + what + ": " + std::strerror(errno));
  }
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.flush();
  if (!out) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw InputError(SourceLoc{path, 0}, "", "writing " + what + " failed: " + reason);
  }
  return temporary;
}

void put_in_place(const std::string& temporary, const std::string& path, const std::string& what) {
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw InputError(SourceLoc{path, 0}, "",
                     "cannot put the finished " + what + " in place: " + reason);
  }
}

void write_file_atomically(const std::string& path, std::string_view content) {
  put_in_place(write_temporary(path, content, "the output file"), path, "output file");
}

}  // namespace cs
