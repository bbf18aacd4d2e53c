// The output checks (folders, outputs over inputs) and the input files of a measurement folder.
#include "cli/output/output_guard.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/error.hpp"

namespace cs::cli {

void check_output_folder(const NamedPath& output) {
  if (output.path.empty()) return;
  namespace fs = std::filesystem;
  const std::string start = "key '" + output.what + "': cannot write '" + output.path + "': ";
  std::error_code ec;
  if (fs::is_directory(output.path, ec)) {
    throw InputError(start + "it is a folder; give a file name");
  }
  // The folder the file goes in: "out.png" is in ".", "dir/" names dir itself.
  const fs::path parent = fs::path(output.path).parent_path();
  const fs::path folder = parent.empty() ? fs::path(".") : parent;
  const fs::file_status status = fs::status(folder, ec);
  if (!fs::exists(status)) {
    throw InputError(start + "folder '" + folder.string() + "' does not exist; create it first");
  }
  if (!fs::is_directory(status)) {
    throw InputError(start + "'" + folder.string() + "' is not a folder");
  }
}

void refuse_outputs_over_inputs(const std::vector<NamedPath>& outputs,
                                const std::vector<NamedPath>& inputs) {
  for (const NamedPath& out : outputs) {
    if (out.path.empty()) continue;
    check_output_folder(out);
    for (const NamedPath& in : inputs) {
      std::error_code ec;  // set when either does not exist: then they are not one file
      if (in.path.empty() || !std::filesystem::equivalent(out.path, in.path, ec) || ec) continue;
      throw InputError("key '" + out.what + "': '" + out.path + "' is the " + in.what + " '" +
                       in.path + "'; an output may not overwrite an input, write it elsewhere");
    }
  }
}

std::vector<NamedPath> measurement_inputs(const cal::Measurements& data, FittedFiles fitted) {
  std::vector<NamedPath> inputs;
  for (const std::string& file : data.files) {
    const bool is_fitted = std::find(data.fitted_files.begin(), data.fitted_files.end(), file) !=
                           data.fitted_files.end();
    if (!is_fitted) {
      inputs.push_back({"measurement file", file});
    } else if (fitted == FittedFiles::protected_) {
      inputs.push_back({"fitted calibration file", file});
    }
  }
  return inputs;
}

}  // namespace cs::cli
