// Reading of node entries: names, kinds, counts, and the keys each kind takes (a GPU's model, a
// socket's host memory).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "topology/parse/loader_spec.hpp"
#include "topology/parse/yaml_fields.hpp"

namespace cs::topo {

// A node, template or instance name: letters, digits, '_', '-', '.'; '/' joins an instance to a
// node and brackets are pattern syntax, so neither may appear in a name itself.
std::string parse_name(const yaml::Fields& fields, const std::string& key);

// The `nodes:` list of `parent`; `models` maps GPU model names to their index.
std::vector<spec::NodeSpec> parse_nodes(const yaml::Fields& parent, const std::string& file,
                                        const std::unordered_map<std::string, int>& models,
                                        const std::vector<std::string>& model_names);

}  // namespace cs::topo
