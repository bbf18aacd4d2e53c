// OutputFiles: every temporary is written and flushed before the first rename, so a missing folder
// or a full disk leaves nothing at any of the targets.
#include "cli/output/output_files.hpp"

#include <cstdio>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace cs::cli {
namespace {

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
    try {
      written.push_back(write_temporary(p.path, p.content, "the " + p.flag + " file"));
    } catch (const InputError&) {
      remove_temporaries(written);
      throw;
    }
  }
  // Every file is written: only a rename can fail now, and one that does leaves the files renamed
  // before it in place (renames cannot be taken back).
  for (std::size_t i = 0; i < files_.size(); ++i) {
    try {
      put_in_place(written[i], files_[i].path, files_[i].flag + " file");
    } catch (const InputError&) {
      remove_temporaries({written.begin() + static_cast<std::ptrdiff_t>(i) + 1, written.end()});
      throw;
    }
  }
}

}  // namespace cs::cli
