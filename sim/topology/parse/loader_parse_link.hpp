// Reading of link entries and of the fabric's port link: the type decides which keys apply and
// what line rate, efficiency, latency and label follow (loader_link_types); overrides replace them.
#pragma once

#include <string>
#include <vector>

#include "topology/parse/loader_spec.hpp"
#include "topology/parse/yaml_fields.hpp"

namespace cs::topo {

// The link itself (type, generation, width/count/rate, bandwidth, latency, efficiency, label).
spec::LinkProps parse_link_props(const yaml::Fields& fields);

// The `links:` list of `parent`, empty when absent.
std::vector<spec::LinkSpec> parse_links(const yaml::Fields& parent, const std::string& file);

}  // namespace cs::topo
