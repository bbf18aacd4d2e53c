// Route cache: template translation inside servers, per-pair memo across the fabric.
#include "collectives/route_cache.hpp"

#include <string>

#include "core/error.hpp"

namespace cs::coll {

std::uint64_t RouteCache::pack(std::uint64_t server, std::uint64_t x, std::uint64_t y,
                               std::uint64_t z) {
  // 22 bits of server or template, 14 bits per local id, 14 bits of ordinal: ample for a cluster
  // of four million servers with 16k nodes each.
  return (server << 42) ^ (x << 28) ^ (y << 14) ^ z;
}

RouteCache::RouteCache(const topo::ClusterGraph& graph) : graph_(graph) {
  const topo::Cluster& c = graph.cluster();
  std::unordered_map<std::string, int> local_names;
  std::unordered_map<std::string, int> template_names;
  local_id_.assign(c.nodes.size(), -1);
  for (std::size_t v = 0; v < c.nodes.size(); ++v) {
    const topo::Node& n = c.nodes[v];
    if (n.server < 0) continue;
    const int id =
        local_names.emplace(n.local_name, static_cast<int>(local_names.size())).first->second;
    local_id_[v] = id;
    node_by_local_[pack(static_cast<std::uint64_t>(n.server), static_cast<std::uint64_t>(id), 0,
                        0)] = static_cast<int>(v);
  }
  for (const topo::Server& s : c.servers) {
    const auto [it, added] =
        template_names.emplace(s.template_name, static_cast<int>(template_names.size()));
    template_id_.push_back(it->second);
    if (added) representative_.push_back(static_cast<int>(template_id_.size()) - 1);
  }
  port_index_.assign(c.nodes.size(), -1);
  for (const topo::Server& s : c.servers) {
    for (std::size_t i = 0; i < s.gpus.size(); ++i)
      port_index_[static_cast<std::size_t>(s.gpus[i])] = static_cast<int>(i);
    for (std::size_t i = 0; i < s.nics.size(); ++i)
      port_index_[static_cast<std::size_t>(s.nics[i])] = static_cast<int>(i);
  }
  link_key_.resize(c.links.size());
  std::unordered_map<std::uint64_t, int> ordinals;
  for (std::size_t l = 0; l < c.links.size(); ++l) {
    const topo::Link& link = c.links[l];
    const topo::Node& a = c.nodes[static_cast<std::size_t>(link.a)];
    const topo::Node& b = c.nodes[static_cast<std::size_t>(link.b)];
    if (a.server < 0 || a.server != b.server) continue;
    const auto server = static_cast<std::uint64_t>(a.server);
    const auto la = static_cast<std::uint64_t>(local_id_[static_cast<std::size_t>(link.a)]);
    const auto lb = static_cast<std::uint64_t>(local_id_[static_cast<std::size_t>(link.b)]);
    const int ordinal = ordinals[pack(server, la, lb, 0)]++;
    link_key_[l] = LinkKey{static_cast<int>(la), static_cast<int>(lb), ordinal};
    link_by_key_[pack(server, la, lb, static_cast<std::uint64_t>(ordinal))] = static_cast<int>(l);
  }
}

CachedRoute RouteCache::query(int a, int b, int plane) {
  ++graph_queries_;
  const topo::Route r = graph_.route(a, b, plane);
  return CachedRoute{r.channels, r.latency};
}

CachedRoute RouteCache::route(int a, int b, int plane) {
  const topo::Cluster& c = graph_.cluster();
  const int sa = c.nodes[static_cast<std::size_t>(a)].server;
  const int sb = c.nodes[static_cast<std::size_t>(b)].server;
  if (sa >= 0 && sa == sb) return same_server(sa, a, b);
  // Node ids below 2^26 (a cluster of 67 million nodes) leave bits 58-63 for the plane + 1.
  CS_ASSERT(a < (1 << 26) && plane < 63, "route cache key overflow");
  const std::uint64_t key = (static_cast<std::uint64_t>(plane + 1) << 58) |
                            (static_cast<std::uint64_t>(a) << 32) |
                            static_cast<std::uint64_t>(static_cast<std::uint32_t>(b));
  auto it = pair_routes_.find(key);
  if (it == pair_routes_.end()) it = pair_routes_.emplace(key, query(a, b, plane)).first;
  return it->second;
}

CachedRoute RouteCache::same_server(int server, int a, int b) {
  const int tmpl = template_id_[static_cast<std::size_t>(server)];
  const int rep = representative_[static_cast<std::size_t>(tmpl)];
  const auto la = static_cast<std::uint64_t>(local_id_[static_cast<std::size_t>(a)]);
  const auto lb = static_cast<std::uint64_t>(local_id_[static_cast<std::size_t>(b)]);
  const std::uint64_t key = pack(static_cast<std::uint64_t>(tmpl), la, lb, 0);
  auto it = template_routes_.find(key);
  if (it == template_routes_.end()) {
    const auto rep_key = [&](std::uint64_t local) {
      const auto found = node_by_local_.find(pack(static_cast<std::uint64_t>(rep), local, 0, 0));
      CS_ASSERT(found != node_by_local_.end(), "server template instances differ in their nodes");
      return found->second;
    };
    it = template_routes_.emplace(key, query(rep_key(la), rep_key(lb))).first;
  }
  if (server == rep) return it->second;

  CachedRoute out;
  out.latency = it->second.latency;
  out.channels.reserve(it->second.channels.size());
  for (topo::ChannelId ch : it->second.channels) {
    const LinkKey& k = link_key_[static_cast<std::size_t>(ch / 2)];
    if (k.local_a < 0) return query(a, b);  // the template route leaves the server: no translation
    const auto found = link_by_key_.find(
        pack(static_cast<std::uint64_t>(server), static_cast<std::uint64_t>(k.local_a),
             static_cast<std::uint64_t>(k.local_b), static_cast<std::uint64_t>(k.ordinal)));
    if (found == link_by_key_.end()) return query(a, b);  // this instance differs: ask the graph
    out.channels.push_back(static_cast<topo::ChannelId>(2 * found->second + ch % 2));
  }
  return out;
}

int RouteCache::nearest_gpu(int nic) {
  return nearest(nic, true);
}
int RouteCache::nearest_nic(int gpu) {
  return nearest(gpu, false);
}

int RouteCache::nearest(int node, bool want_gpu) {
  const topo::Cluster& c = graph_.cluster();
  const int server = c.nodes[static_cast<std::size_t>(node)].server;
  CS_ASSERT(server >= 0, "a port query for a node outside every server");
  const int tmpl = template_id_[static_cast<std::size_t>(server)];
  const int index = port_index_[static_cast<std::size_t>(node)];
  CS_ASSERT(index >= 0, "a port query for a node that is neither a GPU nor a NIC");
  const std::uint64_t key = pack(static_cast<std::uint64_t>(tmpl), want_gpu ? 1 : 0,
                                 static_cast<std::uint64_t>(index), 0);
  auto it = nearest_.find(key);
  if (it == nearest_.end()) {
    // Answered on the template's first instance, by local index, for every instance.
    const topo::Server& rep =
        c.servers[static_cast<std::size_t>(representative_[static_cast<std::size_t>(tmpl)])];
    const std::vector<int>& own = want_gpu ? rep.nics : rep.gpus;
    const std::vector<int>& other = want_gpu ? rep.gpus : rep.nics;
    int best = -1;
    TimePs best_latency = 0;
    if (static_cast<std::size_t>(index) < own.size()) {
      for (std::size_t i = 0; i < other.size(); ++i) {
        const TimePs lat = route(own[static_cast<std::size_t>(index)], other[i]).latency;
        const bool paired = static_cast<int>(i) == index;
        const bool best_paired = best == index;
        if (best < 0 || lat < best_latency || (lat == best_latency && paired && !best_paired)) {
          best = static_cast<int>(i);
          best_latency = lat;
        }
      }
    }
    it = nearest_.emplace(key, best).first;
  }
  const topo::Server& s = c.servers[static_cast<std::size_t>(server)];
  const std::vector<int>& other = want_gpu ? s.gpus : s.nics;
  if (it->second < 0 || static_cast<std::size_t>(it->second) >= other.size()) return -1;
  return other[static_cast<std::size_t>(it->second)];
}

}  // namespace cs::coll
