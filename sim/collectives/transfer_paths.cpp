// Ring, chain, tree, NVLS and point-to-point paths of a communicator (see transfer_paths.hpp).
#include "collectives/transfer_paths.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"

namespace cs::coll {
namespace {

// NCCL's binary tree (graph/trees.cc ncclGetBtree): the parent of `rank` among n.
int btree_parent(int rank, int n) {
  if (rank == 0) return -1;
  int bit = 1;
  while (bit < n && !(bit & rank)) bit <<= 1;
  int up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  return up;
}

std::size_t index_in(const std::vector<int>& v, int x) {
  return static_cast<std::size_t>(std::find(v.begin(), v.end(), x) - v.begin());
}

}  // namespace

int PathBuilder::dtree_parent(int rank, int n, int which) {
  if (which == 0) return btree_parent(rank, n);
  if (n % 2 == 1) {  // odd: the second tree is the first shifted by one
    const int p = btree_parent((rank - 1 + n) % n, n);
    return p < 0 ? -1 : (p + 1) % n;
  }
  const int p = btree_parent(n - 1 - rank, n);  // even: mirrored
  return p < 0 ? -1 : n - 1 - p;
}

PathBuilder::PathBuilder(const CommLayout& layout, RouteCache& routes)
    : layout_(layout), routes_(routes) {
  for (std::size_t g = 0; g < layout.groups.size(); ++g) {
    for (int gpu : layout.groups[g].gpus) group_of_gpu_[gpu] = static_cast<int>(g);
  }
  if (layout.groups.size() < 2) return;
  for (const ServerGroup& g : layout.groups) {
    for (int nic : g.nics) {
      std::vector<int>& own = own_nics_[routes.nearest_gpu(nic)];
      own.push_back(nic);
      rails_ = std::max(rails_, static_cast<int>(own.size()));
    }
  }
}

int PathBuilder::group_index(int gpu) const {
  return group_of_gpu_.at(gpu);
}

int PathBuilder::nics_of(int group) const {
  return std::max(static_cast<int>(layout_.groups[static_cast<std::size_t>(group)].nics.size()), 1);
}

int PathBuilder::nic_for(int group, int channel) const {
  const auto& nics = layout_.groups[static_cast<std::size_t>(group)].nics;
  CS_ASSERT(!nics.empty(), "a multi-server communicator reached a server without NICs");
  return nics[static_cast<std::size_t>(channel) % nics.size()];
}

// The communicator GPU that channel traffic through `nic` enters at: the NIC's own GPU when it
// is in the communicator, else the member closest to the NIC (first on ties).
int PathBuilder::nearest_member(int nic, const std::vector<int>& members) {
  const int own = routes_.nearest_gpu(nic);
  if (std::find(members.begin(), members.end(), own) != members.end()) return own;
  int best = members.front();
  TimePs best_latency = routes_.route(nic, best).latency;
  for (int gpu : members) {
    const TimePs lat = routes_.route(nic, gpu).latency;
    if (lat < best_latency) {
      best = gpu;
      best_latency = lat;
    }
  }
  return best;
}

int PathBuilder::entry_gpu(int group, int channel) {
  const int nic = nic_for(group, channel);
  const long long key = (static_cast<long long>(group) << 32) | static_cast<unsigned>(nic);
  auto it = entry_cache_.find(key);
  if (it != entry_cache_.end()) return it->second;
  const int gpu = nearest_member(nic, layout_.groups[static_cast<std::size_t>(group)].gpus);
  entry_cache_[key] = gpu;
  return gpu;
}

void PathBuilder::append_route(ChannelList& out, int from, int to, int plane) {
  const CachedRoute r = routes_.route(from, to, plane);
  out.insert(out.end(), r.channels.begin(), r.channels.end());
}

void PathBuilder::append_gpu_to_nic(ChannelList& out, int gpu, int nic) {
  if (layout_.shape.intra == LinkClass::nvlink) {
    const int own = routes_.nearest_gpu(nic);
    if (own >= 0 && own != gpu) {  // PXN: over NVLink to the NIC's own GPU
      append_route(out, gpu, own);
      append_route(out, own, nic);
      return;
    }
  }
  append_route(out, gpu, nic);
}

void PathBuilder::append_across(ChannelList& out, int from_gpu, int to_gpu, int nic_from,
                                int nic_to) {
  append_gpu_to_nic(out, from_gpu, nic_from);
  append_route(out, nic_from, nic_to, plane_);
  append_route(out, nic_to, to_gpu);
}

std::vector<int> PathBuilder::ring_order(int channel) {
  std::vector<int> order;
  order.reserve(layout_.gpu_nodes.size());
  const bool multi = layout_.groups.size() > 1;
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    const std::vector<int>& gpus = layout_.groups[g].gpus;
    const std::size_t start = multi ? index_in(gpus, entry_gpu(static_cast<int>(g), channel)) : 0;
    for (std::size_t k = 0; k < gpus.size(); ++k) order.push_back(gpus[(start + k) % gpus.size()]);
  }
  return order;
}

std::vector<PathBuilder::Edge> PathBuilder::ring_edges(int channel) {
  const std::vector<int> order = ring_order(channel);
  std::vector<Edge> edges;
  const std::size_t n = order.size();
  if (n < 2) return edges;
  edges.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    const int from = order[k];
    const int to = order[(k + 1) % n];
    Edge e{to, {}};
    const int gf = group_index(from);
    const int gt = group_index(to);
    if (gf == gt) {
      append_route(e.channels, from, to);
    } else {
      append_across(e.channels, from, to, nic_for(gf, channel), nic_for(gt, channel));
    }
    edges.push_back(std::move(e));
  }
  return edges;
}

ChannelList PathBuilder::ring(int channel) {
  ChannelList out;
  for (Edge& e : ring_edges(channel)) out.insert(out.end(), e.channels.begin(), e.channels.end());
  return out;
}

ChannelList PathBuilder::chain(int channel, int root) {
  const int root_gpu = layout_.gpu_nodes[static_cast<std::size_t>(root)];
  ChannelList out;
  for (Edge& e : ring_edges(channel)) {
    if (e.to_gpu != root_gpu) out.insert(out.end(), e.channels.begin(), e.channels.end());
  }
  return out;
}

ChannelList PathBuilder::tree(int channel) {
  ChannelList out;
  const int n_groups = static_cast<int>(layout_.groups.size());
  std::vector<int> heads(static_cast<std::size_t>(n_groups));
  for (int g = 0; g < n_groups; ++g) {
    const std::vector<int>& gpus = layout_.groups[static_cast<std::size_t>(g)].gpus;
    const std::size_t start = n_groups > 1 ? index_in(gpus, entry_gpu(g, channel)) : 0;
    heads[static_cast<std::size_t>(g)] = gpus[start];
    for (std::size_t k = 0; k + 1 < gpus.size(); ++k) {  // the chain below the head
      const int upper = gpus[(start + k) % gpus.size()];
      const int lower = gpus[(start + k + 1) % gpus.size()];
      append_route(out, lower, upper);
      append_route(out, upper, lower);
    }
  }
  // NCCL runs the two trees of the double binary tree on the same NIC (channels c and
  // c + nChannels share a graph channel); here channels [0, nics) take tree 0 and the next nics
  // channels tree 1, so each rail carries one channel of each tree.
  const int which = n_groups > 1 ? (channel / nics_of(0)) % 2 : 0;
  append_tree_edges(out, heads, which, [&](int g) { return nic_for(g, channel); });
  return out;
}

void PathBuilder::append_tree_edges(ChannelList& out, const std::vector<int>& heads, int which,
                                    const std::function<int(int)>& nic_of) {
  const int n_groups = static_cast<int>(heads.size());
  for (int g = 0; g < n_groups; ++g) {
    const int parent = dtree_parent(g, n_groups, which);
    if (parent < 0) continue;
    const int child_head = heads[static_cast<std::size_t>(g)];
    const int parent_head = heads[static_cast<std::size_t>(parent)];
    append_across(out, child_head, parent_head, nic_of(g), nic_of(parent));
    append_across(out, parent_head, child_head, nic_of(parent), nic_of(g));
  }
}

ChannelList PathBuilder::nvls() {
  const topo::Cluster& c = routes_.graph().cluster();
  ChannelList out;
  for (const ServerGroup& g : layout_.groups) {
    int nvswitch = -1;
    for (std::size_t v = 0; v < c.nodes.size() && nvswitch < 0; ++v) {
      if (c.nodes[v].server == g.server && c.nodes[v].kind == topo::NodeKind::nvswitch)
        nvswitch = static_cast<int>(v);
    }
    CS_ASSERT(nvswitch >= 0, "NVLS chosen on a server without an NVSwitch");
    for (int gpu : g.gpus) {
      append_route(out, gpu, nvswitch);
      append_route(out, nvswitch, gpu);
    }
  }
  return out;
}

ChannelList PathBuilder::nvls_tree(int tree, int head, int rail) {
  ChannelList out;
  const int n_groups = static_cast<int>(layout_.groups.size());
  std::vector<int> heads(static_cast<std::size_t>(n_groups));
  for (int g = 0; g < n_groups; ++g) {
    const std::vector<int>& gpus = layout_.groups[static_cast<std::size_t>(g)].gpus;
    heads[static_cast<std::size_t>(g)] = gpus[static_cast<std::size_t>(head) % gpus.size()];
  }
  append_tree_edges(out, heads, tree,
                    [&](int g) { return own_nic(heads[static_cast<std::size_t>(g)], rail); });
  return out;
}

ChannelList PathBuilder::shift_through(int distance, const std::function<int(int)>& nic_of) {
  ChannelList out;
  const int n = static_cast<int>(layout_.gpu_nodes.size());
  for (int i = 0; i < n; ++i) {
    const int j = ((i + distance) % n + n) % n;
    if (i == j) continue;
    const int a = layout_.gpu_nodes[static_cast<std::size_t>(i)];
    const int b = layout_.gpu_nodes[static_cast<std::size_t>(j)];
    if (group_index(a) == group_index(b)) {
      append_route(out, a, b);
    } else {
      append_across(out, a, b, nic_of(a), nic_of(b));
    }
  }
  return out;
}

ChannelList PathBuilder::shift(int distance, int channel) {
  return shift_through(distance, [&](int gpu) { return nic_for(group_index(gpu), channel); });
}

ChannelList PathBuilder::collnet(int head, int rail) {
  ChannelList out;
  const std::size_t groups = layout_.groups.size();
  CS_ASSERT(groups > 1, "CollNet on one server");
  auto head_of = [&](std::size_t g) {
    const std::vector<int>& gpus = layout_.groups[g].gpus;
    return gpus[static_cast<std::size_t>(head) % gpus.size()];
  };
  for (std::size_t g = 0; g < groups; ++g) {
    const int gpu = head_of(g);
    const int nic = own_nic(gpu, rail);
    // The NIC's own link to its switch: the first hop of its route to another server's NIC
    // (channels 2l and 2l + 1 are link l's two directions).
    const int peer = own_nic(head_of((g + 1) % groups), rail);
    const CachedRoute r = routes_.route(nic, peer, plane_);
    CS_ASSERT(!r.channels.empty(), "a NIC with no link to its switch");
    const topo::ChannelId up = r.channels.front();
    append_gpu_to_nic(out, gpu, nic);
    out.push_back(up);
    out.push_back(up ^ 1);
    append_route(out, nic, gpu);
  }
  return out;
}

int PathBuilder::own_nic(int gpu, int rail) {
  const auto it = own_nics_.find(gpu);
  if (it == own_nics_.end() || it->second.empty()) return routes_.nearest_nic(gpu);
  return it->second[static_cast<std::size_t>(rail) % it->second.size()];
}

ChannelList PathBuilder::p2p_shift(int distance, int rail) {
  return shift_through(distance, [&](int gpu) { return own_nic(gpu, rail); });
}

}  // namespace cs::coll
