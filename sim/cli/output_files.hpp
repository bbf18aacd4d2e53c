// The output files of one command, written together: all of them or none. A command that
// writes two files (flows --csv and --links-csv) must not leave the first behind when the
// second cannot be written, nor write over a file it reads.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "calibration/measurements.hpp"

namespace cs::cli {

// A file a command reads or writes, and what names it in errors: the flag of an output
// ("--json"), the flag and kind of an input ("--topology file", "measurement file").
struct NamedPath {
  std::string what;
  std::string path;
};

// Refuses, before anything is written, an output that is the same file as one of the inputs:
// InputError "key '<flag>': '<output>' is the <what> '<input>'; ...". Files are compared with
// std::filesystem::equivalent (a symlink, ./a and a, a hard link are one file); an output that
// does not exist yet, or an empty path (a flag not given), is no input.
void refuse_outputs_over_inputs(const std::vector<NamedPath>& outputs,
                                const std::vector<NamedPath>& inputs);
// The files a measurement folder's records came from, as inputs: every *.json file read but the
// fitter's own (Measurements::fitted_files), which `fit -o DATA/calibration.json` replaces.
std::vector<NamedPath> measurement_inputs(const cal::Measurements& data);

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
