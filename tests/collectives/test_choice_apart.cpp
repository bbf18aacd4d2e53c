// NCCL's choice kept apart from its time (tuner.hpp, choose_timed): NCCL picks with its own
// constants whatever a calibration says, and the calibration only times what NCCL picked.
#include <doctest/doctest.h>

#include "coll_fixtures.hpp"
#include "collectives/communicator.hpp"
#include "collectives/tuner/tuner.hpp"

using namespace cs;
using namespace cs::coll;

namespace {

using testing::dgx_one_node;

// A calibration under which Tree Simple would win every size: no latency and twice the ring's
// bus bandwidth. Ring Simple is timed at base 20 us and 1 us per hop.
NcclParams tree_loving_calibration() {
  NcclParams p = nccl_priors(GpuArch::hopper);
  const int tree = index_of(Algo::tree);
  const int ring = index_of(Algo::ring);
  for (int q = 0; q < kProtoCount; ++q) {
    p.base_latency_us[tree][q] = 0;
    p.hop_latency_us[index_of(LinkClass::nvlink)][tree][q] = 0;
  }
  p.tree_efficiency = 4.0;
  p.tree_max_per_channel_GBps[0] = 100.0;
  p.base_latency_us[ring][index_of(Proto::simple)] = 20.0;
  p.hop_latency_us[index_of(LinkClass::nvlink)][ring][index_of(Proto::simple)] = 1.0;
  return p;
}

}  // namespace

TEST_CASE("a calibration that would flip NCCL's choice does not, and times NCCL's pick") {
  const NcclParams nccl = nccl_priors(GpuArch::hopper);
  const NcclParams cal = tree_loving_calibration();
  const CommShape s = dgx_one_node();
  const double bytes = 64.0 * 1024 * 1024;
  // With the calibration's constants the tuner would run Tree: bus min(360 x 4, 12 x 100) =
  // 1200 GB/s, algbw 600, no latency, against ring Simple's 205.7 GB/s algbw.
  CHECK(choose(s, Op::all_reduce, bytes, cal, TunerOptions{}).estimate.algo == Algo::tree);
  // NCCL's own constants pick Ring Simple from 36.44 MB up (test_tuner.cpp), 24 channels.
  const TunerChoice c = choose_timed(s, nccl, s, cal, Op::all_reduce, bytes, TunerOptions{});
  CHECK(c.estimate.algo == Algo::ring);
  CHECK(c.estimate.proto == Proto::simple);
  CHECK(c.n_channels == 24);
  // Timed by the calibration: 20 + 14 x 1 = 34 us, then 67,108,864 B at 360 x 8/14 GB/s
  // (205.714e3 B/us): 326.23 us.
  CHECK(c.estimate.latency_us == doctest::Approx(34.0));
  CHECK(c.run_latency_us == doctest::Approx(34.0));
  CHECK(c.estimate.time_us == doctest::Approx(34.0 + bytes / (360.0 * 8 / 14 * 1e3)));
  // With one set of constants on both sides it is choose() itself.
  const TunerChoice same = choose_timed(s, nccl, s, nccl, Op::all_reduce, bytes, TunerOptions{});
  const TunerChoice plain = choose(s, Op::all_reduce, bytes, nccl, TunerOptions{});
  CHECK(same.estimate.time_us == plain.estimate.time_us);
  CHECK(same.n_channels == plain.n_channels);
}

TEST_CASE("the channels are NCCL's graph's, the bandwidth the calibrated graph's") {
  // A calibration whose per-link figure makes the search find 8 channels of 45 GB/s: NCCL still
  // runs its 12 x 2 = 24 channels at 1 GB; the ring's bus bandwidth is the calibration's 8 x 45 =
  // 360 GB/s (the same total, other channels).
  const NcclParams nccl = nccl_priors(GpuArch::hopper);
  CommShape calibrated = dgx_one_node();
  calibrated.ring = GraphInfo{8, 45, 45};
  calibrated.tree = calibrated.ring;
  const TunerChoice c =
      choose_timed(dgx_one_node(), nccl, calibrated, nccl, Op::all_reduce, 1e9, TunerOptions{});
  CHECK(c.graph_channels == 12);
  CHECK(c.comm_channels == 24);
  CHECK(c.n_channels == 24);
  CHECK(c.estimate.bus_bw_GBps == doctest::Approx(360.0));
  // Forced options still bind NCCL: Tree forced stays Tree.
  TunerOptions tree;
  tree.algo_mask = 1u << index_of(Algo::tree);
  CHECK(choose_timed(dgx_one_node(), nccl, calibrated, nccl, Op::all_reduce, 1e9, tree)
            .estimate.algo == Algo::tree);
}

TEST_CASE("point-to-point: NCCL's channels and protocol, the calibration's send rate") {
  // All-to-all on the 8-rank server: NCCL splits its 24 p2p channels by its own rules; a
  // calibrated per-channel rate of 2 GB/s only slows the sends.
  const NcclParams nccl = nccl_priors(GpuArch::hopper);
  NcclParams cal = nccl;
  cal.p2p_per_channel_GBps = 2.0;
  const CommShape s = dgx_one_node();
  const double bytes = 8.0 * 1024 * 1024;
  const TunerChoice prior = choose(s, Op::all_to_all, bytes, nccl, TunerOptions{});
  const TunerChoice c = choose_timed(s, nccl, s, cal, Op::all_to_all, bytes, TunerOptions{});
  CHECK(c.p2p);
  CHECK(c.n_channels == prior.n_channels);
  CHECK(c.estimate.proto == prior.estimate.proto);
  CHECK(c.estimate.bus_bw_GBps < prior.estimate.bus_bw_GBps);
  CHECK(c.estimate.bus_bw_GBps ==
        choose(s, Op::all_to_all, bytes, cal, TunerOptions{}).estimate.bus_bw_GBps);
}

TEST_CASE("a communicator chooses with NCCL's priors whatever constants it is given") {
  // 4 GPUs of the test NVSwitch server, 64 MiB all-reduce: the tree-loving calibration would
  // pick Tree; the communicator runs what NCCL's priors pick, Ring.
  const topo::Cluster cluster = testing::nvswitch_cluster(1, testing::ServerSpec{4, 1.0, 0.5});
  const topo::ClusterGraph graph(cluster);
  Communicator comm(graph, testing::first_ranks(4), tree_loving_calibration());
  CollectiveCall call;
  call.bytes = 64.0 * 1024 * 1024;
  call.options.nvls = false;  // NCCL would run NVLS on this switch; the test is about Ring
  const TunerChoice c = comm.tune(call);
  CHECK(c.estimate.algo == Algo::ring);
  CHECK(comm.nccl_params().base_latency_us[index_of(Algo::tree)][index_of(Proto::simple)] > 0);
  // Its time is the calibration's ring Simple: 20 + 6 x 1 us of latency.
  CHECK(c.estimate.latency_us == doctest::Approx(26.0));
}
