// Reads a model file (format: models/README.md) into a Model, expanding repeat blocks and
// validating every key in one pass. The only part of the workload layer that includes yaml-cpp.
#pragma once

#include <string>
#include <vector>

#include "workload/model/model.hpp"

namespace cs::workload {

// Throws InputError ("file:line: key 'k': what is wrong; what would be valid") on any bad input.
Model load_model_file(const std::string& path);
// The same from text; `file_label` stands in for the file name in messages and Model::file.
Model parse_model_text(const std::string& text, const std::string& file_label);

// The GPU model names a measurement may name, spelled as the gpu_models of topologies/*.yaml.
const std::vector<std::string>& known_gpu_models();

}  // namespace cs::workload
