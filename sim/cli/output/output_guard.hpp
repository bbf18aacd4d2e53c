// Checks a command's output paths before it runs: each must be writable where it is named (its
// folder exists; it is not itself a folder) and must not be one of the files the command reads
// (under any name). A refusal comes before any work, never after it.
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

// Refuses, before anything is written, an output whose folder does not exist or that names a
// folder (check_output_folder), and one that is the same file as one of the inputs:
// InputError "key '<flag>': '<output>' is the <what> '<input>'; ...". Files are compared with
// std::filesystem::equivalent (a symlink, ./a and a, a hard link are one file); an output that
// does not exist yet, or an empty path (a flag not given), is no input.
void refuse_outputs_over_inputs(const std::vector<NamedPath>& outputs,
                                const std::vector<NamedPath>& inputs);

// InputError "key '<flag>': cannot write '<path>': folder '<folder>' does not exist" (or is not a
// folder, or the path is itself a folder); nothing for an empty path (the flag not given).
void check_output_folder(const NamedPath& output);

// Whether the fitter's own files in a measurement folder (Measurements::fitted_files) may be
// written over: by `fit -o DATA/calibration.json`, which replaces its own earlier output, but
// not by any other command's report.
enum class FittedFiles { replaceable, protected_ };

// The *.json files of a measurement folder as inputs: the measurement files, and the fitted
// ones unless `fitted` is replaceable.
std::vector<NamedPath> measurement_inputs(const cal::Measurements& data, FittedFiles fitted);

}  // namespace cs::cli
