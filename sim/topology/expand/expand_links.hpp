// Turns a link entry's name patterns into the node pairs it joins: equal-length lists zip, a single
// name broadcasts to a list, `mesh` joins every pair. Used for template links (local names) and
// top-level links (global names).
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "topology/parse/loader_spec.hpp"

namespace cs::topo {

// The names a link entry may refer to, and how to list them when one is not found.
struct NameScope {
  const std::unordered_map<std::string, int>* index = nullptr;  // name -> node index
  std::function<std::vector<std::string>()> known;              // in creation order, for messages
  std::string description;  // "server template 'dgx'" or "the cluster"
};

// Throws InputError at the pattern's line for bad syntax, unknown names, lists of unequal length,
// a node linked to itself, or more than `max_pairs` pairs.
std::vector<std::pair<int, int>> resolve_link_pairs(const spec::LinkSpec& link,
                                                    const NameScope& scope, std::size_t max_pairs);

}  // namespace cs::topo
