// The levels of a fabric generator: leaves over NIC groups, and the spines and cores above them,
// placed as topologies/README.md's rules say, into a FabricSink: the cluster being built, or only
// a count of what it would hold (fabric.hpp's build_fabric and count_fabric), so that one code
// path holds every rule and every refusal.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "topology/cluster/cluster.hpp"
#include "topology/parse/loader_spec.hpp"

namespace cs::topo {

// Where a generator puts its switches and links: into the cluster being built, or only counted
// (count_fabric), so that one code path holds every rule and every refusal.
class FabricSink {
 public:
  virtual ~FabricSink() = default;
  virtual FabricInfo& info() = 0;
  // NIC `index` of NIC group `group` (a rail, or every NIC): its node, or -1 when counting.
  virtual int nic(std::size_t group, std::size_t index) const = 0;
  virtual int add_switch(std::string name, const SourceLoc& loc) = 0;
  virtual void add_link(int a, int b, const spec::LinkProps& props, const SourceLoc& loc) = 0;
};

// One plane: the switches over every NIC (`group_sizes`: all NICs, or one group per rail), with
// names prefixed by `prefix` ("plane1." in a multi-plane fabric, else nothing). Throws InputError
// at the fabric's keys when its parameters do not fit the NICs.
void build_plane(const spec::FabricSpec& fabric, const std::vector<std::size_t>& group_sizes,
                 const std::string& prefix, FabricSink& sink);

}  // namespace cs::topo
