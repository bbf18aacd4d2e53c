// GPU reachability check, declared in validate_connectivity.hpp.
#include "topology/validate_connectivity.hpp"

#include <numeric>
#include <vector>

namespace cs::topo {
namespace {

class DisjointSets {
 public:
  explicit DisjointSets(std::size_t n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  std::size_t find(std::size_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];  // path halving
      x = parent_[x];
    }
    return x;
  }
  void join(std::size_t a, std::size_t b) { parent_[find(a)] = find(b); }

 private:
  std::vector<std::size_t> parent_;
};

}  // namespace

void check_gpus_connected(const Cluster& cluster) {
  if (cluster.ranks.size() < 2) return;
  DisjointSets sets(cluster.nodes.size());
  for (const auto& link : cluster.links) {
    sets.join(static_cast<std::size_t>(link.a), static_cast<std::size_t>(link.b));
  }
  const auto first = static_cast<std::size_t>(cluster.ranks.front());
  const std::size_t root = sets.find(first);
  for (int gpu : cluster.ranks) {
    if (sets.find(static_cast<std::size_t>(gpu)) == root) continue;
    const Node& cut = cluster.nodes[static_cast<std::size_t>(gpu)];
    throw InputError(cut.loc, "links",
                     "GPU '" + cut.name + "' cannot reach GPU '" + cluster.nodes[first].name +
                         "': no chain of links joins them; link the servers with a fabric: "
                         "generator or top-level links");
  }
}

}  // namespace cs::topo
