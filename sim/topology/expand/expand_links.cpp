// Link entry patterns -> node pairs, declared in expand_links.hpp.
#include "topology/expand/expand_links.hpp"

#include "topology/expand/expand_names.hpp"
#include "topology/parse/loader_names.hpp"

namespace cs::topo {
namespace {

std::vector<int> resolve(const spec::NamePatterns& patterns, const NameScope& scope,
                         std::size_t max_names) {
  std::vector<int> out;
  for (const auto& pattern : patterns.patterns) {
    std::vector<std::string> expanded;
    try {
      expanded = names::expand_pattern(pattern, max_names);
    } catch (const names::PatternError& e) {
      throw InputError(patterns.loc, patterns.key, e.what());
    }
    for (const auto& name : expanded) {
      auto it = scope.index->find(name);
      if (it == scope.index->end()) {
        const std::vector<std::string> known = scope.known();
        throw InputError(patterns.loc, patterns.key,
                         "no node '" + name + "' in " + scope.description +
                             names::did_you_mean(name, known) +
                             "; known nodes: " + names::join_truncated(known));
      }
      out.push_back(it->second);
    }
    if (out.size() > max_names) {
      throw InputError(patterns.loc, patterns.key,
                       "names more than " + std::to_string(max_names) + " nodes");
    }
  }
  return out;
}

}  // namespace

std::vector<std::pair<int, int>> resolve_link_pairs(const spec::LinkSpec& link,
                                                    const NameScope& scope, std::size_t max_pairs) {
  std::vector<std::pair<int, int>> pairs;
  const std::vector<int> from = resolve(link.from, scope, max_pairs);
  if (link.mesh) {
    // n nodes give n(n-1)/2 pairs; check before building them.
    const std::size_t n = from.size();
    if (n < 2) {
      throw InputError(link.from.loc, "mesh",
                       "a mesh needs at least two nodes, got " + std::to_string(n));
    }
    if (n * (n - 1) / 2 > max_pairs) {
      throw InputError(link.from.loc, "mesh",
                       "a mesh of " + std::to_string(n) + " nodes has more than " +
                           std::to_string(max_pairs) + " links");
    }
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) pairs.emplace_back(from[i], from[j]);
    }
  } else {
    const std::vector<int> to = resolve(link.to, scope, max_pairs);
    if (from.size() == to.size()) {
      for (std::size_t i = 0; i < from.size(); ++i) pairs.emplace_back(from[i], to[i]);
    } else if (from.size() == 1) {
      for (int b : to) pairs.emplace_back(from[0], b);
    } else if (to.size() == 1) {
      for (int a : from) pairs.emplace_back(a, to[0]);
    } else {
      throw InputError(link.to.loc, "to",
                       "'from' names " + std::to_string(from.size()) + " nodes and 'to' names " +
                           std::to_string(to.size()) +
                           "; valid: equal counts (zipped in order) or one of them a single node");
    }
  }
  for (const auto& [a, b] : pairs) {
    if (a == b) {
      const std::vector<std::string> known = scope.known();
      throw InputError(link.loc, link.mesh ? "mesh" : "to",
                       "links node '" + known[static_cast<std::size_t>(a)] + "' to itself");
    }
  }
  return pairs;
}

}  // namespace cs::topo
