// What every fuzz target shares: the input as text, and a file of this process to hold it for a
// reader that takes only a path. A target catches InputError, the refusal bad input earns; any
// other exception, a sanitizer report, a crash or a hang is what libFuzzer reports as a finding.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace cs::fuzz {

// The root of the source tree, where the shipped topologies live.
inline const std::string kSourceDir = CLUSTERSIM_SOURCE_DIR;

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A folder of this process under the system's temporary folder, created on first use and removed
// when the process exits normally (libFuzzer exits so at -max_total_time and -runs).
inline const std::filesystem::path& scratch_dir() {
  struct Scratch {
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("clustersim-fuzz-" + std::to_string(::getpid()));
    Scratch() { std::filesystem::create_directories(dir); }
    ~Scratch() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  };
  static const Scratch scratch;
  return scratch.dir;
}

// Writes `text` to `path`, replacing what an earlier input left there.
inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace cs::fuzz
