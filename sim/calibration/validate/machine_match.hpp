// Whether measurements or a calibration belong to a topology: the GPUs they were taken on must be
// the topology's GPUs, and every rank and GPU index they name must exist in it. A mismatch is the
// user's mistake (the wrong --topology, --data or --calibration), so it is an InputError that
// names the file, the line and the key, before any fit or prediction runs.
#pragma once

#include <string>
#include <vector>

#include "calibration/calfile/calibration_file.hpp"
#include "calibration/measurements/measurements.hpp"
#include "topology/cluster/cluster.hpp"

namespace cs::cal {

// Every NCCL record's rank count and every copy's GPU indices fit in `cluster`, and the files'
// GPU (nvidia-smi name, when discovery knows it) is the model of the cluster's first rank.
void check_measurements_match(const Measurements& data, const topo::Cluster& cluster);

// The calibration was fitted on the model of GPU that every rank in `ranks` is (when discovery
// knows the calibration's nvidia-smi name).
void check_calibration_match(const Calibration& calibration, const topo::Cluster& cluster,
                             const std::vector<int>& ranks);

}  // namespace cs::cal
