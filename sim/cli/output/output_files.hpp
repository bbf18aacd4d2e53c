// The output files of one command, written together: all of them or none. A command that
// writes two files (flows --csv and --links-csv) must not leave the first behind when the
// second cannot be written (output_guard.hpp keeps outputs off the inputs).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cs::cli {

class OutputFiles {
 public:
  // Queues `content` for `path`; an empty path (the flag not given) is skipped. `flag` names the
  // option in errors. Two flags naming one file is an InputError.
  void add(const std::string& flag, const std::string& path, std::string content);
  // Writes every file to a temporary beside it, then renames each into place. Throws InputError
  // naming the path, after removing every temporary, if any cannot be written; a rename that
  // fails after that (rare: the folder was writable a moment before) leaves the earlier files.
  void write_all();

 private:
  struct Pending {
    std::string flag;
    std::string path;
    std::string content;
  };
  std::vector<Pending> files_;
};

}  // namespace cs::cli
