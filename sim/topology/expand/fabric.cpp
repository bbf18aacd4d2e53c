// The fabric generators declared in fabric.hpp: the servers' NICs grouped, every plane's levels
// (fabric_levels.hpp) written into the cluster or only counted.
#include "topology/expand/fabric.hpp"

#include "topology/expand/fabric_levels.hpp"

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

// The cluster's own switches and links; NIC groups as node indices.
class BuildSink : public FabricSink {
 public:
  BuildSink(ClusterBuilder& builder, std::vector<std::vector<int>> groups)
      : builder_(builder), groups_(std::move(groups)) {}
  FabricInfo& info() override { return builder_.cluster().fabric; }
  int nic(std::size_t group, std::size_t index) const override { return groups_[group][index]; }
  int add_switch(std::string name, const SourceLoc& loc) override {
    Node node;
    node.local_name = name;
    node.name = std::move(name);
    node.kind = NodeKind::network_switch;
    node.loc = loc;
    return builder_.add_node(std::move(node), "kind");
  }
  void add_link(int a, int b, const spec::LinkProps& props, const SourceLoc& loc) override {
    builder_.add_link(a, b, props, loc);
  }

 private:
  ClusterBuilder& builder_;
  std::vector<std::vector<int>> groups_;
};

// Counts only: memory of the order of the switches, none per NIC or link.
class CountSink : public FabricSink {
 public:
  FabricInfo& info() override { return info_; }
  int nic(std::size_t, std::size_t) const override { return -1; }
  int add_switch(std::string, const SourceLoc&) override {
    return static_cast<int>(size.switches++);
  }
  void add_link(int, int, const spec::LinkProps&, const SourceLoc&) override { ++size.links; }
  FabricSize size;

 private:
  FabricInfo info_;
};

void check_every_server_has_nics(const spec::FabricSpec& fabric,
                                 const std::vector<ServerRun>& servers) {
  for (const ServerRun& run : servers) {
    if (run.count > 0 && run.nics == 0) {
      throw InputError(fabric.loc, "kind",
                       std::string("a ") + kind_name(fabric.kind) +
                           " fabric joins the NICs of every server, but server '" + run.first_name +
                           "' (template '" + run.template_name +
                           "') has no nic node; add nic nodes to the template");
    }
  }
}

// Every plane of the fabric over `servers` (in cluster order), into `sink`. The NICs form one
// group (fat_tree, single_switch) or one per rail (rail_optimized: NIC i of every server that has
// one), in server order.
void generate(const spec::FabricSpec& fabric, const std::vector<ServerRun>& servers,
              FabricSink& sink) {
  check_every_server_has_nics(fabric, servers);
  FabricInfo& info = sink.info();
  info.kind = kind_name(fabric.kind);
  info.planes = fabric.planes;
  info.spray = fabric.spray;
  info.sharp = fabric.sharp;
  if (fabric.kind != spec::FabricKind::single_switch) {
    info.leaf_ports = fabric.leaf_ports;
    info.oversubscription = fabric.oversubscription;
  }
  std::vector<std::size_t> group_sizes;
  for (const ServerRun& run : servers) {
    const auto count = static_cast<std::size_t>(run.count);
    if (fabric.kind == spec::FabricKind::rail_optimized) {
      if (run.nics > group_sizes.size()) group_sizes.resize(run.nics);
      for (std::size_t rail = 0; rail < run.nics; ++rail) group_sizes[rail] += count;
    } else {
      group_sizes.resize(1);
      group_sizes[0] += count * run.nics;
    }
  }
  // Planes are identical: plane p gives every NIC its port p, on its own switches.
  for (int p = 0; p < fabric.planes; ++p) {
    build_plane(fabric, group_sizes, fabric.planes > 1 ? "plane" + std::to_string(p) + "." : "",
                sink);
  }
}

}  // namespace

void build_fabric(const spec::FabricSpec& fabric, ClusterBuilder& builder) {
  if (fabric.kind == spec::FabricKind::none) return;
  const Cluster& cluster = builder.cluster();
  std::vector<ServerRun> servers;
  std::vector<std::vector<int>> groups;
  for (const Server& server : cluster.servers) {
    servers.push_back({server.name, server.template_name, 1, server.nics.size()});
    if (fabric.kind == spec::FabricKind::rail_optimized) {
      if (server.nics.size() > groups.size()) groups.resize(server.nics.size());
      for (std::size_t rail = 0; rail < server.nics.size(); ++rail) {
        groups[rail].push_back(server.nics[rail]);
      }
    } else {
      groups.resize(1);
      groups[0].insert(groups[0].end(), server.nics.begin(), server.nics.end());
    }
  }
  BuildSink sink(builder, std::move(groups));
  generate(fabric, servers, sink);
}

FabricSize count_fabric(const spec::FabricSpec& fabric, const std::vector<ServerRun>& servers) {
  if (fabric.kind == spec::FabricKind::none) return {};
  CountSink sink;
  generate(fabric, servers, sink);
  return sink.size;
}

}  // namespace cs::topo
