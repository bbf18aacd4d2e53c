// Keeps a command's outputs off its inputs: an output path that is the same file as one the
// command reads (under any name) is refused before anything is written.
#pragma once

#include <string>
#include <vector>

#include "calibration/measurements/measurements.hpp"

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

// Whether the fitter's own files in a measurement folder (Measurements::fitted_files) may be
// written over: by `fit -o DATA/calibration.json`, which replaces its own earlier output, but
// not by any other command's report.
enum class FittedFiles { replaceable, protected_ };

// The *.json files of a measurement folder as inputs: the measurement files, and the fitted
// ones unless `fitted` is replaceable.
std::vector<NamedPath> measurement_inputs(const cal::Measurements& data, FittedFiles fitted);

}  // namespace cs::cli
