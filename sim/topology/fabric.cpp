// The fabric generators declared in fabric.hpp.
#include "topology/fabric.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cs::topo {
namespace {

const char* kind_name(spec::FabricKind kind) {
  switch (kind) {
    case spec::FabricKind::single_switch:
      return "single_switch";
    case spec::FabricKind::fat_tree:
      return "fat_tree";
    case spec::FabricKind::rail_optimized:
      return "rail_optimized";
    case spec::FabricKind::none:
      return "";
  }
  return "";
}

int add_switch(ClusterBuilder& builder, std::string name, const SourceLoc& loc) {
  Node node;
  node.local_name = name;
  node.name = std::move(name);
  node.kind = NodeKind::network_switch;
  node.loc = loc;
  return builder.add_node(std::move(node), "kind");
}

// `count` parallel switch ports between the same two switches act as one link of summed
// bandwidth (the flow model sees one channel per direction instead of `count`).
spec::LinkProps parallel_ports(const spec::LinkProps& port, int count) {
  spec::LinkProps props = port;
  props.bandwidth_Bps = port.bandwidth_Bps * count;
  if (count > 1) props.label = port.label + " x" + std::to_string(count);
  return props;
}

void check_every_server_has_nics(const spec::FabricSpec& fabric, const Cluster& cluster) {
  for (const auto& server : cluster.servers) {
    if (server.nics.empty()) {
      throw InputError(fabric.loc, "kind",
                       std::string("a ") + kind_name(fabric.kind) +
                           " fabric joins the NICs of every server, but server '" + server.name +
                           "' (template '" + server.template_name +
                           "') has no nic node; add nic nodes to the template");
    }
  }
}

// Leaves over groups of NICs, then spines over the leaves' uplinks. Each group (all NICs for a fat
// tree, one rail for rail_optimized) fills leaves of `down` ports in order. A leaf with `a` NICs
// gets ceil(a / oversubscription) uplinks (at most its free ports), so every leaf keeps the
// down:up ratio. Uplink g (counted over all leaves in order) goes to spine g mod spines.
void build_leaf_spine(const spec::FabricSpec& fabric,
                      const std::vector<std::vector<int>>& nic_groups, ClusterBuilder& builder) {
  const int ports = fabric.leaf_ports;
  const double ov = fabric.oversubscription;
  // 1e-9 absorbs rounding in ports * ov / (ov + 1) when the division is exact (64, 1 -> 32).
  const int down = static_cast<int>(std::floor(ports * ov / (ov + 1) + 1e-9));
  const int up_max = ports - down;
  if (down < 1 || up_max < 1) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%g", ov);
    throw InputError(fabric.oversubscription_loc, "oversubscription",
                     "a leaf of " + std::to_string(ports) + " ports at " + ratio + ":1 has " +
                         std::to_string(down) + " down and " + std::to_string(up_max) +
                         " up ports; both must be at least 1");
  }
  FabricInfo& info = builder.cluster().fabric;
  std::vector<int> uplinks;  // per leaf
  for (const auto& group : nic_groups) {
    for (std::size_t first = 0; first < group.size(); first += static_cast<std::size_t>(down)) {
      const std::size_t last = std::min(group.size(), first + static_cast<std::size_t>(down));
      const int leaf = add_switch(builder, "leaf" + std::to_string(info.leaves.size()), fabric.loc);
      info.leaves.push_back(leaf);
      for (std::size_t i = first; i < last; ++i) {
        builder.add_link(group[i], leaf, fabric.port, fabric.loc);
      }
      const double attached = static_cast<double>(last - first);
      uplinks.push_back(std::min(up_max, static_cast<int>(std::ceil(attached / ov - 1e-9))));
    }
  }
  long long total_up = 0;
  for (int u : uplinks) total_up += u;
  if (info.leaves.size() == 1) {
    if (fabric.spines > 0) {
      throw InputError(fabric.spines_loc, "spines",
                       "every NIC fits on one leaf, so there is nothing for spines to join; "
                       "remove spines");
    }
    return;  // one leaf carries all traffic
  }
  const long long needed = (total_up + ports - 1) / ports;
  long long spines = fabric.spines > 0 ? fabric.spines : needed;
  if (spines < needed) {
    throw InputError(fabric.spines_loc, "spines",
                     std::to_string(spines) + " spines of " + std::to_string(ports) +
                         " ports cannot take " + std::to_string(total_up) +
                         " leaf uplinks; valid: at least " + std::to_string(needed));
  }
  // Round-robin reaches every spine from a leaf only if the leaf has at least as many uplinks
  // as there are spines; otherwise the leaves split into groups that share no spine. That is
  // the two-level limit: at most leaf_ports leaves, so leaf_ports x down NICs.
  const long long widest = *std::max_element(uplinks.begin(), uplinks.end());
  if (spines > widest) {
    if (fabric.spines > 0) {
      throw InputError(fabric.spines_loc, "spines",
                       std::to_string(spines) + " spines, but a leaf has at most " +
                           std::to_string(widest) +
                           " uplinks, so leaves could not reach every spine; valid: at most " +
                           std::to_string(widest));
    }
    throw InputError(fabric.leaf_ports_loc, "leaf_ports",
                     std::to_string(info.leaves.size()) + " leaves of " + std::to_string(ports) +
                         " ports are more than one spine layer can join (at most " +
                         std::to_string(ports) +
                         " leaves); raise leaf_ports (a third switch level is not generated)");
  }
  for (long long p = 0; p < spines; ++p) {
    info.spines.push_back(add_switch(builder, "spine" + std::to_string(p), fabric.loc));
  }
  long long g = 0;  // global uplink index of the leaf's first uplink
  for (std::size_t k = 0; k < info.leaves.size(); ++k) {
    const long long u = uplinks[k];
    // Uplinks g .. g+u-1 land on spines (g + j) mod P; spine (g + s) mod P receives the j with
    // j mod P == s, that is u / P ports, plus one for s < u mod P.
    const long long distinct = std::min(u, spines);
    for (long long s = 0; s < distinct; ++s) {
      const auto spine = static_cast<std::size_t>((g + s) % spines);
      const int count = static_cast<int>(u / spines + (s < u % spines ? 1 : 0));
      builder.add_link(info.leaves[k], info.spines[spine], parallel_ports(fabric.port, count),
                       fabric.loc);
    }
    g += u;
  }
}

}  // namespace

void build_fabric(const spec::FabricSpec& fabric, ClusterBuilder& builder) {
  if (fabric.kind == spec::FabricKind::none) return;
  Cluster& cluster = builder.cluster();
  check_every_server_has_nics(fabric, cluster);
  FabricInfo& info = cluster.fabric;
  info.kind = kind_name(fabric.kind);

  if (fabric.kind == spec::FabricKind::single_switch) {
    const int sw = add_switch(builder, "switch", fabric.loc);
    info.leaves.push_back(sw);
    for (const auto& server : cluster.servers) {
      for (int nic : server.nics) builder.add_link(nic, sw, fabric.port, fabric.loc);
    }
    return;
  }

  info.leaf_ports = fabric.leaf_ports;
  info.oversubscription = fabric.oversubscription;
  std::vector<std::vector<int>> groups;
  if (fabric.kind == spec::FabricKind::fat_tree) {
    groups.emplace_back();
    for (const auto& server : cluster.servers) {
      groups[0].insert(groups[0].end(), server.nics.begin(), server.nics.end());
    }
  } else {
    for (const auto& server : cluster.servers) {
      if (server.nics.size() > groups.size()) groups.resize(server.nics.size());
      for (std::size_t rail = 0; rail < server.nics.size(); ++rail) {
        groups[rail].push_back(server.nics[rail]);
      }
    }
  }
  build_leaf_spine(fabric, groups, builder);
}

}  // namespace cs::topo
