// First loader step: a parsed YAML document -> TopologySpec. Checks every key, unit, type and
// reference that can be checked without expanding templates; later steps check the rest.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "topology/parse/loader_spec.hpp"

namespace cs::topo {

// Throws InputError naming `file`, the line and the key of the first problem.
spec::TopologySpec parse_topology(const YAML::Node& root, const std::string& file);

// Largest count, pattern expansion or instance number a file may ask for; beyond it the input is
// a typo, and honouring it would exhaust memory instead of reporting the mistake.
inline constexpr long long kMaxCount = 1'000'000;
// Most planes of a multi-plane fabric: NICs split into 2 or 4 planes (Spectrum-X with
// ConnectX-8: dual-plane and quad-plane); 16 leaves room without inviting a typo's millions.
inline constexpr long long kMaxPlanes = 16;

}  // namespace cs::topo
