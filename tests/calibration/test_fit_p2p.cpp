// The p2p fitter recovers the constants that generated its data: alltoall and sendrecv times
// simulated on the 4 x H200 topology with known per-channel rate and latencies, fitted back.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "calibration/fit/fit_nccl.hpp"
#include "collectives/communicator.hpp"
#include "topology/loader.hpp"

namespace {

using namespace cs;
using namespace cs::cal;

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;

// Every rank count of 2 and 4 and sizes 1 KiB .. 1 GiB in steps of 4x, timed by the simulator
// with `truth`: in the data the fit sees, each point lies exactly on the model it fits. The
// simulator times the GPUs alone, as gated records do; with `host_floor_us` > 0 the records are
// host-paced instead, each max(floor x n / 2, the simulated time) (fit_host_floor.hpp).
// With `misaligned_too`, each size is also timed with one float more per peer (bytes + 4n), whose
// all-to-all chunks are 4 mod 16 bytes.
Measurements simulated(const topo::ClusterGraph& graph, const coll::NcclParams& truth,
                       const std::string& op, bool misaligned_too = false,
                       double host_floor_us = 0) {
  Measurements m;
  m.node.gpu_name = "NVIDIA H200";
  for (int n : {2, 4}) {
    std::vector<int> ranks;
    for (int r = 0; r < n; ++r) ranks.push_back(r);
    coll::Communicator comm(graph, ranks, truth);
    for (double size = 1024; size <= 1024.0 * 1024 * 1024; size *= 4) {
      for (const double extra : {0.0, 4.0 * n}) {
        if (extra > 0 && !misaligned_too) continue;
        coll::CollectiveCall call;
        call.op = op == "alltoall" ? coll::Op::all_to_all : coll::Op::send_recv;
        call.bytes = size + extra;
        NcclPoint p;
        p.op = op;
        p.n_ranks = n;
        p.bytes = call.bytes;
        p.forced_algo = "default";
        p.forced_proto = "default";
        p.time_us = coll::simulate_alone(comm, call, coll::Fidelity::flow).time_us();
        p.timing = host_floor_us > 0 ? NcclTiming::host_paced : NcclTiming::gated;
        p.time_us = std::max(p.time_us, host_floor_us * n / 2);
        m.nccl.push_back(p);
      }
    }
  }
  return m;
}

// The truth every case starts from: Hopper's priors with 20 GB/s per channel and an extra-peer
// latency of 10 us; every point is fitted (no holdout).
coll::NcclParams p2p_truth() {
  coll::NcclParams truth = coll::nccl_priors(coll::GpuArch::hopper);
  truth.p2p_per_channel_GBps = 20.0;
  truth.p2p_extra_peer_latency_us = 10.0;
  return truth;
}
const Split kNoHoldout{{}, SizeHoldout::none};

}  // namespace

// Truth: one-peer latency 6.74 us, LL at 5.18 GB/s per channel and the fill at 457 GB/s (the
// Hopper NVLink priors), extra-peer latency 10 us, 20 GB/s per channel; the NVLink (450 GB/s x
// 0.88 = 396 GB/s) paces the sends whose channels would run faster (sendrecv on 32 channels: 640
// GB/s; alltoall 2 ranks at 1 GiB).
TEST_CASE("the p2p fit recovers the per-channel rate and latencies it was simulated with") {
  const topo::Cluster cluster = topo::load_cluster(kRoot + "/topologies/h200-4gpu.yaml");
  const topo::ClusterGraph graph(cluster);
  const coll::NcclParams truth = p2p_truth();
  for (const std::string op : {"sendrecv", "alltoall"}) {
    CAPTURE(op);
    const NcclFit fit = fit_nccl_p2p(simulated(graph, truth, op), kNoHoldout, graph, op);
    REQUIRE(fit.configs.size() == 1);
    CHECK(fit.params.p2p_nvlink_latency_us == doctest::Approx(6.74).epsilon(1e-3));
    CHECK(fit.params.p2p_extra_peer_latency_us == doctest::Approx(10.0).epsilon(1e-3));
    CHECK(fit.params.p2p_per_channel_GBps == doctest::Approx(20.0).epsilon(1e-3));
    CHECK(fit.params.p2p_ll_per_channel_GBps == doctest::Approx(5.18).epsilon(1e-3));
    CHECK(fit.params.p2p_fill_GBps == doctest::Approx(457.0).epsilon(1e-3));
    CHECK(fit.configs[0].max_rel_error < 1e-3);
  }
}

// The same truth on a machine whose NVLink gives NCCL's kernels 80 % of its line rate (360 of
// 450 GB/s), fitted on the topology as written (88 %): the fit finds 80 %, on its 1 % grid.
TEST_CASE("the p2p fit finds the NVLink rate NCCL's kernels get") {
  const topo::Cluster written = topo::load_cluster(kRoot + "/topologies/h200-4gpu.yaml");
  topo::Cluster slower = written;
  for (topo::Link& l : slower.links) {
    if (l.kind == topo::LinkKind::nvlink) l.efficiency = 0.80;
  }
  const topo::ClusterGraph truth_graph(slower);
  const topo::ClusterGraph graph(written);
  const coll::NcclParams truth = p2p_truth();
  const NcclFit fit =
      fit_nccl_p2p(simulated(truth_graph, truth, "sendrecv"), kNoHoldout, graph, "sendrecv");
  CHECK(fit.p2p_nvlink_efficiency == doctest::Approx(0.80).epsilon(1e-9));
  CHECK(fit.params.p2p_per_channel_GBps == doctest::Approx(20.0).epsilon(1e-3));
  CHECK(fit.configs[0].max_rel_error < 1e-3);
}

// Misaligned all-to-all chunks at 6.5 GB/s per channel and 140 GB/s per GPU: 2 ranks at 16
// channels run 104 GB/s (channel-paced), 4 ranks share 140 / 3 per send from 8 channels (52 GB/s
// of 46.7: capped). Both rates are on the fit's grid and the fit lands on them exactly.
TEST_CASE("the p2p fit recovers the misaligned per-channel rate and GPU cap") {
  const topo::Cluster cluster = topo::load_cluster(kRoot + "/topologies/h200-4gpu.yaml");
  const topo::ClusterGraph graph(cluster);
  coll::NcclParams truth = p2p_truth();
  truth.p2p_unaligned_per_channel_GBps = 6.5;
  truth.p2p_unaligned_gpu_GBps = 140.0;
  const NcclFit fit =
      fit_nccl_p2p(simulated(graph, truth, "alltoall", true), kNoHoldout, graph, "alltoall");
  CHECK(fit.params.p2p_unaligned_per_channel_GBps == doctest::Approx(6.5));
  CHECK(fit.params.p2p_unaligned_gpu_GBps == doctest::Approx(140.0));
  CHECK(fit.params.p2p_per_channel_GBps == doctest::Approx(20.0).epsilon(1e-3));
}

// Host-paced records of a truth whose sends take the latencies the fit keeps on such data (the
// Hopper NVLink priors, 6.74 us and 0.37 us per further peer: fit_nccl_p2p.cpp says why), under a
// host floor of 16 us on 2 ranks and 32 us on 4. Up to 1 MiB every call takes the host's time
// (the GPUs' slowest there: 6.74 + 1 MiB / (16 channels x 20 GB/s) + the fill, 1 MiB / 457 GB/s
// = 12.3 us on 2 ranks, 6.74 + 0.37 + 1 MiB / (8 x 20) + 2.3 = 16.0 us on 4), and 4 MiB already
// takes 6.74 + 13.1 + 9.2 = 29.0 us on 2 ranks, over 1.1 floors (17.6 us): each flat part is the
// floor alone. The points at 1.5 floors
// and above lie on the truth and give back its per-channel rate.
TEST_CASE("on host-paced records the p2p fit finds the host floor and keeps NCCL's latencies") {
  const topo::Cluster cluster = topo::load_cluster(kRoot + "/topologies/h200-4gpu.yaml");
  const topo::ClusterGraph graph(cluster);
  coll::NcclParams truth = p2p_truth();
  truth.p2p_extra_peer_latency_us = 0.37;
  const NcclFit fit =
      fit_nccl_p2p(simulated(graph, truth, "sendrecv", false, 16.0), kNoHoldout, graph, "sendrecv");
  REQUIRE(fit.configs.size() == 1);
  REQUIRE(fit.host_floors.curves.size() == 2);
  CHECK(fit.host_floors.at("default", 2) == doctest::Approx(16.0));
  CHECK(fit.host_floors.at("default", 4) == doctest::Approx(32.0));
  CHECK(fit.params.p2p_nvlink_latency_us == doctest::Approx(6.74));
  CHECK(fit.params.p2p_extra_peer_latency_us == doctest::Approx(0.37));
  // Every LL send (up to 512 KiB) is under the floor: LL's rate stays the prior's, not a fit of
  // nothing; the Simple points above the floor give back the fill.
  CHECK(fit.params.p2p_ll_per_channel_GBps == doctest::Approx(5.18));
  CHECK(fit.params.p2p_fill_GBps == doctest::Approx(457.0).epsilon(1e-3));
  CHECK(fit.params.p2p_per_channel_GBps == doctest::Approx(20.0).epsilon(1e-3));
}

// LL's per-channel rate is fitted only from four LL points or more: with the truth's LL at 2 GB/s
// per channel, every point gives back 2; with all but two of the LL sends (1 KiB - 256 KiB on 2 and
// 4 ranks, 8 points) taken away, the prior's 5.18 stands.
TEST_CASE("the p2p fit reads LL's rate from enough LL points only") {
  const topo::Cluster cluster = topo::load_cluster(kRoot + "/topologies/h200-4gpu.yaml");
  const topo::ClusterGraph graph(cluster);
  coll::NcclParams truth = p2p_truth();
  truth.p2p_ll_per_channel_GBps = 2.0;
  Measurements all = simulated(graph, truth, "sendrecv");
  CHECK(fit_nccl_p2p(all, kNoHoldout, graph, "sendrecv").params.p2p_ll_per_channel_GBps ==
        doctest::Approx(2.0).epsilon(1e-3));
  Measurements few = all;
  few.nccl.clear();
  int ll_kept = 0;
  for (const NcclPoint& p : all.nccl) {
    const bool ll = p.bytes <= 512 * 1024;  // 32 per-peer channels x 16 KiB
    if (ll && ll_kept == 2) continue;
    ll_kept += ll ? 1 : 0;
    few.nccl.push_back(p);
  }
  REQUIRE(few.nccl.size() == all.nccl.size() - 8);
  CHECK(fit_nccl_p2p(few, kNoHoldout, graph, "sendrecv").params.p2p_ll_per_channel_GBps ==
        doctest::Approx(5.18));
}
