// Collectives over a multi-plane fabric: each flow that crosses servers is split evenly over the
// planes, so P planes of ports of bandwidth B carry what one plane of ports of P x B carries.
#include <doctest/doctest.h>

#include "collectives/communicator.hpp"
#include "collectives/nccl/nccl_params.hpp"
#include "topology/fabric_fixtures.hpp"
#include "topology/graph.hpp"

using namespace cs;

namespace {

coll::CollectiveResult all_reduce(const topo::Cluster& c, double bytes) {
  const topo::ClusterGraph graph(c);
  coll::Communicator comm(graph, {0, 1, 2, 3}, coll::nccl_priors(coll::GpuArch::hopper));
  coll::CollectiveCall call;
  call.op = coll::Op::all_reduce;
  call.bytes = bytes;
  return coll::simulate_alone(comm, call, coll::Fidelity::flow);
}

}  // namespace

TEST_CASE(
    "two planes of 100G ports predict what one plane of 200G ports does, in twice the flows") {
  // 4 servers x 1 GPU x 1 NIC; the tuner sees one NIC of 25 GB/s either way (2 x 12.5), and the
  // ring's bytes take 2 x 12.5 GB/s of ports or 1 x 25 GB/s: the same time. The ring's edges cross
  // the NICs' own links (the bottleneck), not the planes' shared ones.
  const topo::Cluster two = topo::testing::load_fabric(
      4, 1, "  kind: fat_tree\n  leaf_ports: 4\n  planes: 2\n", "100Gbps");
  const topo::Cluster one =
      topo::testing::load_fabric(4, 1, "  kind: fat_tree\n  leaf_ports: 4\n", "200Gbps");
  for (double bytes : {1 << 20, 64 << 20}) {
    const coll::CollectiveResult a = all_reduce(two, bytes);
    const coll::CollectiveResult b = all_reduce(one, bytes);
    CHECK(a.choice.estimate.algo == b.choice.estimate.algo);
    CHECK(a.choice.estimate.proto == b.choice.estimate.proto);
    CHECK(a.choice.n_channels == b.choice.n_channels);
    CHECK(a.time_us() == doctest::Approx(b.time_us()).epsilon(1e-9));
    CHECK(a.flows == 2 * b.flows);
  }
}
