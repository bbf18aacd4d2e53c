// One record of a measurement file into Measurements: its kind (nccl, copy, launch, gemm, membw)
// and every field checked for presence, type and range, errors naming the record's line and key.
#pragma once

#include <nlohmann/json.hpp>

#include "calibration/measurements/measurements.hpp"
#include "core/error.hpp"

namespace cs::cal {

// Appends the record to `out` (kinds this fitter does not use are skipped); InputError at `loc`.
void read_record(const nlohmann::json& record, const SourceLoc& loc, Measurements& out);

}  // namespace cs::cal
