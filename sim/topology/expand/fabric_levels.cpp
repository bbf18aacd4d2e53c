// The levels of the fabric generators, declared in fabric_levels.hpp.
#include "topology/expand/fabric_levels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cs::topo {
namespace {

// `count` parallel switch ports between the same two switches act as one link of summed
// bandwidth (the flow model sees one channel per direction instead of `count`).
spec::LinkProps parallel_ports(const spec::LinkProps& port, int count) {
  spec::LinkProps props = port;
  props.bandwidth_Bps = port.bandwidth_Bps * count;
  if (count > 1) props.label = port.label + " x" + std::to_string(count);
  return props;
}

// Switches of one level, with how many uplinks each sends to the level above.
struct Layer {
  std::vector<int> nodes;
  std::vector<long long> uplinks;
};

// Leaves over groups of NICs (all NICs for a fat tree, one rail for rail_optimized), filling
// leaves of `down` ports in order. A leaf with `a` NICs gets ceil(a / oversubscription) uplinks
// (at most its free ports), so every leaf keeps the down:up ratio.
Layer build_leaves(const spec::FabricSpec& fabric, const std::vector<std::size_t>& group_sizes,
                   const std::string& prefix, FabricSink& sink,
                   std::vector<long long>& rail_index) {
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
  FabricInfo& info = sink.info();
  Layer leaves;
  for (std::size_t g = 0; g < group_sizes.size(); ++g) {
    const std::size_t size = group_sizes[g];
    long long index = 0;  // the leaf's place within its group (its rail)
    for (std::size_t first = 0; first < size; first += static_cast<std::size_t>(down)) {
      const std::size_t last = std::min(size, first + static_cast<std::size_t>(down));
      const int leaf =
          sink.add_switch(prefix + "leaf" + std::to_string(leaves.nodes.size()), fabric.loc);
      info.leaves.push_back(leaf);
      leaves.nodes.push_back(leaf);
      rail_index.push_back(index++);
      for (std::size_t i = first; i < last; ++i) {
        sink.add_link(sink.nic(g, i), leaf, fabric.port, fabric.loc);
      }
      const double attached = static_cast<double>(last - first);
      leaves.uplinks.push_back(std::min(up_max, static_cast<int>(std::ceil(attached / ov - 1e-9))));
    }
  }
  return leaves;
}

// How many upper switches of `down_ports` ports take the uplinks of `lower`: `wanted` if given.
// Returns 0 (with `widest` set) when round-robin could not reach every upper switch from each
// lower one: that needs every lower switch to have at least as many uplinks as there are uppers.
long long upper_count(const Layer& lower, long long down_ports, long long wanted, long long& widest,
                      long long& total_up) {
  total_up = 0;
  for (long long u : lower.uplinks) total_up += u;
  widest = *std::max_element(lower.uplinks.begin(), lower.uplinks.end());
  return wanted > 0 ? wanted : (total_up + down_ports - 1) / down_ports;
}

// Joins `lower` to `count` new switches named prefix<n> (n from `first_number`): uplink g,
// counted over the lower switches in order, goes to upper g mod count. Parallel ports between two
// switches are one link of summed bandwidth. Returns the uppers with the links each received.
Layer join_layer(const spec::FabricSpec& fabric, const Layer& lower, long long count,
                 const std::string& prefix, std::size_t first_number, FabricSink& sink) {
  Layer upper;
  for (long long p = 0; p < count; ++p) {
    upper.nodes.push_back(sink.add_switch(
        prefix + std::to_string(first_number + static_cast<std::size_t>(p)), fabric.loc));
    upper.uplinks.push_back(0);
  }
  long long g = 0;  // global uplink index of the switch's first uplink
  for (std::size_t k = 0; k < lower.nodes.size(); ++k) {
    const long long u = lower.uplinks[k];
    // Uplinks g .. g+u-1 land on uppers (g + j) mod P; upper (g + s) mod P receives the j with
    // j mod P == s, that is u / P ports, plus one for s < u mod P.
    const long long distinct = std::min(u, count);
    for (long long s = 0; s < distinct; ++s) {
      const auto target = static_cast<std::size_t>((g + s) % count);
      const int ports = static_cast<int>(u / count + (s < u % count ? 1 : 0));
      sink.add_link(lower.nodes[k], upper.nodes[target], parallel_ports(fabric.port, ports),
                    fabric.loc);
      upper.uplinks[target] += ports;
    }
    g += u;
  }
  return upper;
}

// Two levels: one spine layer of `leaf_ports`-port switches over all leaves.
void build_two_levels(const spec::FabricSpec& fabric, const Layer& leaves,
                      const std::string& prefix, FabricSink& sink) {
  FabricInfo& info = sink.info();
  const int ports = fabric.leaf_ports;
  long long widest = 0;
  long long total_up = 0;
  const long long needed = upper_count(leaves, ports, 0, widest, total_up);
  const long long spines = fabric.spines > 0 ? fabric.spines : needed;
  if (spines < needed) {
    throw InputError(fabric.spines_loc, "spines",
                     std::to_string(spines) + " spines of " + std::to_string(ports) +
                         " ports cannot take " + std::to_string(total_up) +
                         " leaf uplinks; valid: at least " + std::to_string(needed));
  }
  // Round-robin reaches every spine from a leaf only if the leaf has at least as many uplinks
  // as there are spines; otherwise the leaves split into groups that share no spine. That is
  // the two-level limit: at most leaf_ports leaves, so leaf_ports x down NICs.
  if (spines > widest) {
    if (fabric.spines > 0) {
      throw InputError(fabric.spines_loc, "spines",
                       std::to_string(spines) + " spines, but a leaf has at most " +
                           std::to_string(widest) +
                           " uplinks, so leaves could not reach every spine; valid: at most " +
                           std::to_string(widest));
    }
    throw InputError(fabric.leaf_ports_loc, "leaf_ports",
                     std::to_string(leaves.nodes.size()) + " leaves of " + std::to_string(ports) +
                         " ports are more than one spine layer can join (at most " +
                         std::to_string(ports) +
                         " leaves); raise leaf_ports, or add levels: 3 for a third switch level");
  }
  // Spraying spreads every flow's packets evenly over a leaf's uplinks, whichever spine each
  // reaches: in a flow model that is one logical spine, each leaf's uplinks one trunk to it (the
  // leaf's up capacity is the same; no flow is bound to one spine's links).
  const Layer joined =
      join_layer(fabric, leaves, fabric.spray ? 1 : spines, prefix + "spine", 0, sink);
  info.spines.insert(info.spines.end(), joined.nodes.begin(), joined.nodes.end());
  info.levels = 2;
  if (fabric.spray) info.sprayed_spines = spines;
}

// Three levels: leaves in pods of `pod_leaves`, each pod joined by its own spines of
// leaf_ports / 2 down and as many up ports (1:1), and spine j of every pod joined to core group j
// (cores of leaf_ports ports). For rail_optimized a pod takes the same leaves of every rail (its
// servers' rails, as a DGX SuperPOD scalable unit does), so cross-rail traffic stays in the pod.
void build_three_levels(const spec::FabricSpec& fabric, const Layer& leaves,
                        const std::vector<long long>& rail_index, int rails,
                        const std::string& prefix, FabricSink& sink) {
  FabricInfo& info = sink.info();
  const std::size_t spine_base = info.spines.size();  // earlier planes' switches
  const std::size_t core_base = info.cores.size();
  const long long ports = fabric.leaf_ports;
  const long long spine_down = std::max(1LL, ports / 2);
  const long long pod_leaves = fabric.pod_leaves > 0 ? fabric.pod_leaves : spine_down;
  const long long per_rail = std::max(1LL, pod_leaves / rails);  // a pod's leaves of one rail
  long long pods = 0;
  for (long long i : rail_index) pods = std::max(pods, i / per_rail + 1);
  std::vector<Layer> pod(static_cast<std::size_t>(pods));
  for (std::size_t k = 0; k < leaves.nodes.size(); ++k) {
    Layer& p = pod[static_cast<std::size_t>(rail_index[k] / per_rail)];
    p.nodes.push_back(leaves.nodes[k]);
    p.uplinks.push_back(leaves.uplinks[k]);
  }
  info.pods = static_cast<int>(pods);
  // Spines per pod: as many as the fullest pod needs (`spines` overrides), numbered alike in every
  // pod so that core group j meets spine j of each. A pod with fewer uplinks than that (the last,
  // partly filled) gets one spine per uplink, so that no spine stands unconnected.
  long long needed = 0;
  long long widest = 0;  // the most uplinks of a leaf: a full leaf must reach every pod spine
  for (const Layer& p : pod) {
    long long most = 0;
    long long total_up = 0;
    needed = std::max(needed, upper_count(p, spine_down, 0, most, total_up));
    widest = std::max(widest, most);
  }
  const long long spines = fabric.spines > 0 ? fabric.spines : needed;
  if (spines < needed) {
    throw InputError(fabric.spines_loc, "spines",
                     std::to_string(spines) + " spines per pod of " + std::to_string(spine_down) +
                         " down ports cannot take a pod's leaf uplinks; valid: at least " +
                         std::to_string(needed));
  }
  if (spines > widest) {
    if (fabric.spines > 0) {
      throw InputError(fabric.spines_loc, "spines",
                       std::to_string(spines) + " spines per pod, but a leaf has at most " +
                           std::to_string(widest) +
                           " uplinks, so leaves could not reach every spine of their pod; valid: "
                           "at most " +
                           std::to_string(widest));
    }
    throw InputError(fabric.pod_leaves_loc, "pod_leaves",
                     "pods of " + std::to_string(pod_leaves) + " leaves need " +
                         std::to_string(spines) + " spines, more than a leaf's " +
                         std::to_string(widest) + " uplinks reach; valid: at most " +
                         std::to_string(spine_down) + " leaves per pod");
  }
  std::vector<Layer> groups(static_cast<std::size_t>(spines));  // spine j of every pod
  for (const Layer& p : pod) {
    long long most = 0;
    long long total_up = 0;
    upper_count(p, spine_down, 0, most, total_up);
    const Layer joined = join_layer(fabric, p, std::min(spines, total_up), prefix + "spine",
                                    info.spines.size() - spine_base, sink);
    for (std::size_t j = 0; j < joined.nodes.size(); ++j) {
      info.spines.push_back(joined.nodes[j]);
      groups[j].nodes.push_back(joined.nodes[j]);
      // 1:1 above the leaves: as many ports up as came down, while the switch has them.
      groups[j].uplinks.push_back(std::min(joined.uplinks[j], ports - joined.uplinks[j]));
    }
  }
  info.levels = 3;
  if (pods == 1) return;  // one pod: its spines carry all traffic
  for (const Layer& group : groups) {
    long long most = 0;
    long long total_up = 0;
    const long long cores = upper_count(group, ports, 0, most, total_up);
    if (cores > most) {  // as two levels: the full spines must reach every core of the group
      throw InputError(fabric.leaf_ports_loc, "leaf_ports",
                       std::to_string(pods) + " pods of " + std::to_string(pod_leaves) +
                           " leaves are more than one core layer of " + std::to_string(ports) +
                           "-port switches can join (at most " + std::to_string(ports) +
                           " pods); raise leaf_ports (a fourth switch level is not generated)");
    }
    const Layer joined =
        join_layer(fabric, group, cores, prefix + "core", info.cores.size() - core_base, sink);
    info.cores.insert(info.cores.end(), joined.nodes.begin(), joined.nodes.end());
  }
}

}  // namespace

void build_plane(const spec::FabricSpec& fabric, const std::vector<std::size_t>& group_sizes,
                 const std::string& prefix, FabricSink& sink) {
  FabricInfo& info = sink.info();
  if (fabric.kind == spec::FabricKind::single_switch) {
    const int sw = sink.add_switch(prefix + "switch", fabric.loc);
    info.leaves.push_back(sw);
    info.levels = 1;
    for (std::size_t g = 0; g < group_sizes.size(); ++g) {
      for (std::size_t i = 0; i < group_sizes[g]; ++i) {
        sink.add_link(sink.nic(g, i), sw, fabric.port, fabric.loc);
      }
    }
    return;
  }
  std::vector<long long> rail_index;  // per leaf: its place within its NIC group
  const Layer leaves = build_leaves(fabric, group_sizes, prefix, sink, rail_index);
  if (leaves.nodes.size() == 1) {
    if (fabric.spines > 0) {
      throw InputError(fabric.spines_loc, "spines",
                       "every NIC fits on one leaf, so there is nothing for spines to join; "
                       "remove spines");
    }
    info.levels = 1;
    return;  // one leaf carries all traffic
  }
  if (fabric.levels == 3) {
    if (fabric.spray) {
      throw InputError(fabric.levels_loc, "levels",
                       "spray is generated for two-level fabrics only; remove spray or use "
                       "levels: 2");
    }
    const int rails =
        fabric.kind == spec::FabricKind::rail_optimized ? static_cast<int>(group_sizes.size()) : 1;
    build_three_levels(fabric, leaves, rail_index, rails, prefix, sink);
  } else {
    build_two_levels(fabric, leaves, prefix, sink);
  }
}

}  // namespace cs::topo
