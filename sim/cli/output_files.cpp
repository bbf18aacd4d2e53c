// OutputFiles: every temporary is written and flushed before the first rename, so a missing folder
// or a full disk leaves nothing at any of the targets.
#include "cli/output_files.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"

namespace cs::cli {
namespace {

std::string temporary_of(const std::string& path) {
  return path + ".tmp";
}

void remove_temporaries(const std::vector<std::string>& written) {
  for (const std::string& t : written) std::remove(t.c_str());
}

}  // namespace

void OutputFiles::add(const std::string& flag, const std::string& path, std::string content) {
  if (path.empty()) return;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(SourceLoc{path, 0}, "", "the " + flag + " file is a folder; give a file name");
  const auto target = std::filesystem::weakly_canonical(path, ec);
  for (const Pending& p : files_) {
    std::error_code other_ec;
    if (p.path == path ||
        (!ec && std::filesystem::weakly_canonical(p.path, other_ec) == target && !other_ec)) {
      throw InputError("key '" + flag + "': " + path + " is also the " + p.flag +
                       " file; give each output its own file");
    }
  }
  files_.push_back({flag, path, std::move(content)});
}

void OutputFiles::write_all() {
  std::vector<std::string> written;
  for (const Pending& p : files_) {
    const std::string temporary = temporary_of(p.path);
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      const std::string reason = std::strerror(errno);
      remove_temporaries(written);
      throw InputError(SourceLoc{p.path, 0}, "", "cannot write the " + p.flag + " file: " + reason);
    }
    written.push_back(temporary);
    out.write(p.content.data(), static_cast<std::streamsize>(p.content.size()));
    out.flush();
    if (!out) {
      const std::string reason = std::strerror(errno);
      remove_temporaries(written);
      throw InputError(SourceLoc{p.path, 0}, "",
                       "writing the " + p.flag + " file failed: " + reason);
    }
  }
  for (std::size_t i = 0; i < files_.size(); ++i) {
    if (std::rename(written[i].c_str(), files_[i].path.c_str()) != 0) {
      const std::string reason = std::strerror(errno);
      remove_temporaries({written.begin() + static_cast<std::ptrdiff_t>(i), written.end()});
      throw InputError(SourceLoc{files_[i].path, 0}, "",
                       "cannot put the finished " + files_[i].flag + " file in place: " + reason);
    }
  }
}

}  // namespace cs::cli
