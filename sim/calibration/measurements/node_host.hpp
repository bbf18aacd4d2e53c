// The host probe of a measured node (calibrate/host/host_probe.py, schema
// clustersim-host-probe/1): read from the probe's own file in a data folder, and written to and
// read from a calibration file's `host` section. Figures per class of op, one process alone and
// every GPU's process at once.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "calibration/measurements/json_reader.hpp"
#include "core/host_probe.hpp"

namespace cs::cal {

struct NodeHost {
  HostProbe alone;               // one process
  std::optional<HostProbe> all;  // every rank of world_size at once (absent at one process)
  int world_size = 1;
  std::string file;  // the probe file it was read from (base name)
};

// A probe file's `summary` (every class's alone_us, all_us where the run had several ranks).
NodeHost node_host_from_probe(const JsonReader& probe_file, const std::string& base_name);
// A probe file read whole (its schema checked): `what` names it in the error of a bad path
// ("--host-probe file").
NodeHost read_host_probe_file(const std::string& path, const std::string& what);
// A calibration file's `host` section, and back.
NodeHost node_host_from_calibration(const JsonReader& host);
nlohmann::json node_host_json(const NodeHost& host);

}  // namespace cs::cal
