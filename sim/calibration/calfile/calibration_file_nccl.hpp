// NcclParams <-> JSON: every field of the collectives layer's parameter struct by name, so a
// calibration file states all of NCCL's constants it runs with, fitted or prior.
#pragma once

#include <nlohmann/json.hpp>

#include "calibration/measurements/json_lines.hpp"
#include "collectives/nccl/nccl_params.hpp"

namespace cs::cal {

nlohmann::json nccl_params_json(const coll::NcclParams& params);
// Every key must be present, no other key, each value in its range; throws InputError at the
// key's line (`lines`; `pointer` is where `j` sits in the file, `prefix` its dotted name).
coll::NcclParams nccl_params_from_json(const nlohmann::json& j, const JsonLines& lines,
                                       const std::string& pointer, const std::string& prefix);

}  // namespace cs::cal
