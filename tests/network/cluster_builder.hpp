// Small clusters written in code for network tests: nodes and links with round figures.
#pragma once

#include <string>
#include <utility>

#include "topology/cluster/cluster.hpp"
#include "topology/graph.hpp"

namespace cs::net::test {

struct ClusterBuilder {
  topo::Cluster cluster;

  ClusterBuilder() { cluster.name = "test"; }

  // A node; `server` >= 0 puts it inside that server (routes then only cross it for that server).
  int node(std::string name, topo::NodeKind kind, int server = 0) {
    topo::Node n;
    n.name = name;
    n.local_name = std::move(name);
    n.kind = kind;
    n.server = server;
    cluster.nodes.push_back(std::move(n));
    return static_cast<int>(cluster.nodes.size()) - 1;
  }
  int gpu(std::string name, int server = 0) {
    const int v = node(std::move(name), topo::NodeKind::gpu, server);
    cluster.nodes.back().rank = static_cast<int>(cluster.ranks.size());
    cluster.ranks.push_back(v);
    return v;
  }
  // A full-duplex link, `bandwidth_Bps` each way; the flow model sees bandwidth x efficiency.
  int link(int a, int b, double bandwidth_Bps, TimePs latency,
           topo::LinkKind kind = topo::LinkKind::pcie, double efficiency = 1.0) {
    topo::Link l;
    l.a = a;
    l.b = b;
    l.kind = kind;
    l.label = "test link";
    l.bandwidth_Bps = bandwidth_Bps;
    l.efficiency = efficiency;
    l.latency = latency;
    cluster.links.push_back(l);
    return static_cast<int>(cluster.links.size()) - 1;
  }
};

// Channel ids of link l: 2l is a -> b, 2l + 1 is b -> a (graph.hpp).
inline topo::ChannelId forward(int link) {
  return 2 * link;
}
inline topo::ChannelId backward(int link) {
  return 2 * link + 1;
}

}  // namespace cs::net::test
