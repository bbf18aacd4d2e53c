// The compute side of a GPU from its measurements: launch overhead and event synchronization
// (medians as measured), memory bandwidth of a copy kernel, and a GEMM model per dtype,
//   t = overhead + flops / (efficiency x peak),
// fitted by relative least squares over the training shapes: achieved / peak then rises with the
// size of the product, flops / (peak x overhead + flops / efficiency), instead of echoing a table.
#pragma once

#include <string>
#include <vector>

#include "calibration/calfile/compute_fit.hpp"
#include "calibration/measurements/measurements.hpp"
#include "calibration/measurements/split.hpp"

namespace cs::cal {

// Datasheet dense peak of `dtype` on the GPU named `gpu_name`, FLOP/s; 0 when unknown.
double datasheet_peak_flops(const std::string& gpu_name, const std::string& dtype);

// GEMM shapes are held out by the split's size rule applied to their flops (x2 ladder: the
// shapes double in flops along each family).
ComputeFit fit_compute(const Measurements& data, const Split& split);

}  // namespace cs::cal
