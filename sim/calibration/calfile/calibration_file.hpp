// The calibration file: everything the fitter learned about one machine, in one JSON document
// (schema "clustersim-fit-v2"), and how the simulator applies it on top of a topology: the NCCL
// parameter struct replaces the priors, the copy fits set link efficiencies and latencies, the
// host's pageable staging rate and the GPU's memory bandwidth.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibration/calfile/compute_fit.hpp"
#include "calibration/calfile/copy_fit.hpp"
#include "calibration/calfile/nccl_fit.hpp"
#include "calibration/measurements/measurements.hpp"
#include "calibration/measurements/split.hpp"
#include "topology/cluster/cluster.hpp"

namespace cs::cal {

// v2 (this version): the NCCL constants gained the measured p2p latencies and ring factors.
inline constexpr const char* kCalibrationSchema = "clustersim-fit-v2";

struct Calibration {
  std::string machine;     // the data folder's name, e.g. "h200x4"
  std::string gpu_name;    // from the measurement files
  SourceLoc gpu_name_loc;  // where a loaded file names it (errors about the GPU point there)
  int gpu_count = 0;
  long long nccl_version = 0;
  std::string topology;                        // the topology file the NCCL fit read (its name)
  Split split;                                 // what was held out of the fit
  NcclTiming timing = NcclTiming::host_paced;  // the NCCL records it read (timing_select.hpp)
  // The measured runs' NCCL_NVLS_ENABLE, when they all agree (key `nccl_nvls_enable`); coll and
  // ddp predict with it unless told otherwise, so a calibration reproduces the runs it came from.
  std::optional<bool> nvls;
  NcclFit nccl;                     // every op fitted together: for ops not measured
  std::vector<NcclFit> nccl_by_op;  // one per measured collective
  std::vector<CopyFit> copies;
  ComputeFit compute;
  // The node's host probe (`host`), when its data folder had one: host costs of model files are
  // carried to it (core/host_probe.hpp).
  std::optional<NodeHost> host;
};

// JSON text of a calibration (stable key order, so the same fit writes the same bytes).
std::string calibration_json(const Calibration& calibration);
// Writes the file atomically.
void save_calibration(const Calibration& calibration, const std::string& path);
// Reads a calibration file; InputError "file: key 'k': ..." on anything missing or malformed.
Calibration load_calibration(const std::string& path);
Calibration parse_calibration(const std::string& text, const std::string& file_name);

// The NCCL fit for collective `op` (nccl-tests name, "allreduce"): its own when measured, else
// the every-op fit.
const NcclFit& nccl_fit_for(const Calibration& calibration, const std::string& op);

// The copy fits applied to a cluster: every NVLink link gets efficiency = peer bandwidth / its
// line rate and latency = peer latency / the links of a peer route; PCIe links the same from the
// pinned host copies (mean of both directions); each cpu node's pageable staging rates become
// the pageable H2D and D2H bandwidths, and its staging costs their latencies above that PCIe
// path latency; each GPU model's memory bandwidth twice the device-copy bandwidth
// (a device copy reads and writes every byte) and its copy latency the device-copy latency. Fits
// that are absent change nothing.
void apply_links(const Calibration& calibration, topo::Cluster& cluster);
// What one collective sees on top of apply_links: send/recv based ops with a fitted p2p NVLink
// efficiency get it on every NVLink link.
void apply_op_links(const NcclFit& fit, topo::Cluster& cluster);

}  // namespace cs::cal
