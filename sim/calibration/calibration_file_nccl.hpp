// NcclParams <-> JSON: every field of the collectives layer's parameter struct by name, so a
// calibration file states all of NCCL's constants it runs with, fitted or prior.
#pragma once

#include <nlohmann/json.hpp>

#include "collectives/nccl_params.hpp"

namespace cs::cal {

nlohmann::json nccl_params_json(const coll::NcclParams& params);
// Every key must be present; throws InputError naming `file` and the key otherwise.
coll::NcclParams nccl_params_from_json(const nlohmann::json& j, const std::string& file);

}  // namespace cs::cal
