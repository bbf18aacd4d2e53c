// FabricRoutes: the lookup tables of a generated three-level fabric and its up-down routes.
#include "topology/fabric_routes.hpp"

#include <algorithm>

#include "core/hash_mix.hpp"

namespace cs::topo {

std::vector<int> switch_planes(const Cluster& cluster) {
  const FabricInfo& f = cluster.fabric;
  std::vector<int> plane(cluster.nodes.size(), -1);
  const auto planes = static_cast<std::size_t>(std::max(1, f.planes));
  for (const std::vector<int>* list : {&f.leaves, &f.spines, &f.cores}) {
    const std::size_t per_plane = std::max<std::size_t>(1, list->size() / planes);
    for (std::size_t i = 0; i < list->size(); ++i) {
      plane[static_cast<std::size_t>((*list)[i])] = static_cast<int>(i / per_plane);
    }
  }
  return plane;
}

FabricRoutes::FabricRoutes(const Cluster& cluster) {
  const FabricInfo& f = cluster.fabric;
  if (f.levels != 3 || f.pods < 2 || f.planes < 1) return;
  const auto planes = static_cast<std::size_t>(f.planes);
  const auto pods = static_cast<std::size_t>(f.pods);  // per plane
  if (f.leaves.size() % planes != 0 || f.spines.size() % (planes * pods) != 0) return;
  const std::size_t nodes = cluster.nodes.size();
  std::vector<int> level(nodes, 0);  // 1 leaf, 2 spine, 3 core
  for (int v : f.leaves) level[static_cast<std::size_t>(v)] = 1;
  for (int v : f.spines) level[static_cast<std::size_t>(v)] = 2;
  for (int v : f.cores) level[static_cast<std::size_t>(v)] = 3;
  const std::vector<int> plane = switch_planes(cluster);
  for (std::size_t v = 0; v < nodes; ++v) {  // a switch the file added by hand: search instead
    if (cluster.nodes[v].server < 0 && level[v] == 0) return;
  }
  planes_ = f.planes;
  pod_.assign(nodes, -1);
  nic_leaf_.assign(nodes * planes, Hop{});
  above_.assign(nodes, {});
  below_.assign(nodes, {});
  for (std::size_t l = 0; l < cluster.links.size(); ++l) {
    const Link& link = cluster.links[l];
    int a = link.a;
    int b = link.b;
    auto up = static_cast<std::int32_t>(2 * l);  // a -> b
    auto down = up + 1;
    const int la = level[static_cast<std::size_t>(a)];
    const int lb = level[static_cast<std::size_t>(b)];
    if (la == 0 && lb == 0) continue;  // inside a server
    if (la > lb) {
      std::swap(a, b);
      std::swap(up, down);
    }
    const int low = std::min(la, lb);
    const int high = std::max(la, lb);
    const Node& lower = cluster.nodes[static_cast<std::size_t>(a)];
    const int p = plane[static_cast<std::size_t>(b)];
    if (low == 0) {  // only NIC -> leaf, one leaf per NIC and plane
      Hop& slot = nic_leaf_[static_cast<std::size_t>(a) * planes + static_cast<std::size_t>(p)];
      if (lower.kind != NodeKind::nic || high != 1 || slot.node >= 0) return;
      slot = Hop{b, up, down};
    } else if (high == low + 1 && plane[static_cast<std::size_t>(a)] == p) {
      above_[static_cast<std::size_t>(a)].push_back(Hop{b, up, down});
    } else {
      return;  // a link that skips a level or joins two planes: not the generator's
    }
  }
  // Pods: a leaf's pod is that of its spines; spines are numbered pod by pod (expand/fabric.cpp),
  // so spine s of a plane's list is in pod s / per_pod of that plane.
  const std::size_t per_plane = f.spines.size() / planes;
  const std::size_t per_pod = per_plane / pods;
  for (std::size_t s = 0; s < f.spines.size(); ++s) {
    pod_[static_cast<std::size_t>(f.spines[s])] = static_cast<int>((s % per_plane) / per_pod);
  }
  for (int leaf : f.leaves) {
    const auto& spines = above_[static_cast<std::size_t>(leaf)];
    if (spines.size() != per_pod) return;  // every leaf meets every spine of its pod
    const int pod = pod_[static_cast<std::size_t>(spines.front().node)];
    for (const Hop& h : spines) {
      if (pod_[static_cast<std::size_t>(h.node)] != pod) return;
    }
    pod_[static_cast<std::size_t>(leaf)] = pod;
  }
  // A core meets spine j of every pod of its plane, exactly one per pod.
  for (int spine : f.spines) {
    for (const Hop& h : above_[static_cast<std::size_t>(spine)]) {
      auto& below = below_[static_cast<std::size_t>(h.node)];
      if (below.empty()) below.assign(pods, Hop{});
      Hop& slot = below[static_cast<std::size_t>(pod_[static_cast<std::size_t>(spine)])];
      if (slot.node >= 0) return;
      slot = Hop{spine, h.up, h.down};  // down: core -> spine
    }
  }
  for (int core : f.cores) {
    for (const Hop& h : below_[static_cast<std::size_t>(core)]) {
      if (h.node < 0) return;
    }
  }
  usable_ = true;
}

std::optional<std::vector<std::int32_t>> FabricRoutes::route(int src, int dst, std::uint64_t hash,
                                                             int plane) const {
  if (!usable_ || plane < 0 || plane >= planes_) return std::nullopt;
  const auto at = [&](int nic) -> const Hop& {
    return nic_leaf_[static_cast<std::size_t>(nic) * static_cast<std::size_t>(planes_) +
                     static_cast<std::size_t>(plane)];
  };
  const Hop& a = at(src);
  const Hop& b = at(dst);
  if (a.node < 0 || b.node < 0) return std::nullopt;
  std::vector<std::int32_t> out{a.up};
  // The leaf-to-NIC hop back down: channel `down` of the NIC's own link.
  if (a.node != b.node) {
    const auto& spines = above_[static_cast<std::size_t>(a.node)];
    const Hop& s = spines[hash_mix(hash ^ 1) % spines.size()];
    out.push_back(s.up);
    const int pod_b = pod_[static_cast<std::size_t>(b.node)];
    int spine_b = s.node;
    if (pod_[static_cast<std::size_t>(s.node)] != pod_b) {
      const auto& cores = above_[static_cast<std::size_t>(s.node)];
      const Hop& c = cores[hash_mix(hash ^ 2) % cores.size()];
      out.push_back(c.up);
      const Hop& down = below_[static_cast<std::size_t>(c.node)][static_cast<std::size_t>(pod_b)];
      out.push_back(down.down);
      spine_b = down.node;
    }
    // The leaf's hop to spine_b, walked down.
    const auto& leaf_b = above_[static_cast<std::size_t>(b.node)];
    const auto it =
        std::find_if(leaf_b.begin(), leaf_b.end(), [&](const Hop& h) { return h.node == spine_b; });
    if (it == leaf_b.end()) return std::nullopt;
    out.push_back(it->down);
  }
  out.push_back(b.down);
  return out;
}

}  // namespace cs::topo
