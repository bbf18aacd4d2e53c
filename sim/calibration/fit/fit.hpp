// The whole fit of one machine: NCCL, copies and compute from its measurements, on the training
// side of a split, into one Calibration (calibration_file.hpp writes it).
#pragma once

#include <string>

#include "calibration/calfile/calibration_file.hpp"
#include "calibration/measurements/measurements.hpp"
#include "topology/graph.hpp"

namespace cs::cal {

// `graph` is the machine's topology (the NCCL fit runs NCCL's channel search on its links);
// `machine` names the data (the folder's base name) and `topology` the topology file, both only
// recorded.
Calibration fit_calibration(const Measurements& data, const Split& split,
                            const topo::ClusterGraph& graph, const std::string& machine,
                            const std::string& topology);

// The base name of a path ("calibrate/data/h200x4/" -> "h200x4").
std::string base_name(const std::string& path);

}  // namespace cs::cal
