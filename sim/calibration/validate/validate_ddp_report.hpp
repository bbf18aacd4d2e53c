// The renderings of a DdpValidation (validate_ddp.hpp): the tables a person reads, one CSV row per
// prediction, and a JSON document of both.
#pragma once

#include <string>

#include "calibration/validate/validate_ddp.hpp"

namespace cs::cal {

// Header lines (#) naming the data, topology, calibration and NCCL setting; the steps of each
// folder with signed errors and the DDP overhead; the summary of |error|.
std::string ddp_validation_text(const DdpValidation& v);
// data,file,model,batch,gpus,variant,measured_ms,prior_ms,prior_error,calibrated_ms,
// calibrated_error,measured_overhead_ms,prior_overhead_ms,prior_overhead_error,
// calibrated_overhead_ms,calibrated_overhead_error: errors as signed fractions, a missing figure
// an empty field.
std::string ddp_validation_csv(const DdpValidation& v);
// {data, topology, calibration, nccl, summary, rows}; a missing figure is null.
std::string ddp_validation_json(const DdpValidation& v);

}  // namespace cs::cal
