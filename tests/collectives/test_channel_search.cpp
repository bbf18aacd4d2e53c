// The graph search's arithmetic on the machines the issue names.
#include <doctest/doctest.h>

#include "collectives/coll_fixtures.hpp"
#include "collectives/nccl/channel_search.hpp"

using namespace cs::coll;

TEST_CASE("one DGX H100: 6 rings at 60 GB/s, duplicated to 12 channels at 30 GB/s") {
  // A GPU has 18 NVLinks x 20.6 GB/s = 370.8 GB/s (NCCL's Hopper figure). Speeds tried from the
  // top: 60 -> floor(370.8/60) = 6 rings = 360; 50 -> 7 = 350; 40 -> 9 = 360 (not better);
  // 30 -> 12 = 360 (not better); 24 is 0.4 of 60 < 0.49: stop. 6 x 60 >= 25 GB/s -> 12 x 30.
  const NcclParams p = nccl_priors(GpuArch::hopper);
  SearchInput in;
  in.gpus_per_node = 8;
  in.gpu_total_GBps = 18 * 20.6;
  in.gpu_pair_GBps = 18 * 20.6;
  const GraphInfo g = search_channels(in, p);
  CHECK(g.n_channels == 12);
  CHECK(g.bw_intra_GBps == doctest::Approx(30.0));
}

TEST_CASE("two DGX H100: 8 rings at 45 GB/s through 8 NICs, duplicated to 16 at 22.5") {
  // Path GPU -> NIC: min(PCIe Gen5 48, NIC 50) = 48, so speeds start at 48.
  // 48: NVLink floor(370.8/48) = 7, NICs 8 x floor(48/48) = 8 -> 7 rings = 336.
  // 45: min(8, 8) = 8 -> 360 (best). 42 -> 336, 40 -> 320, 30 -> 240, 24: NVLink 15, NICs
  // 8 x 2 = 16 -> 15 x 24 = 360 (not better); 20/45 = 0.44: stop. 45 >= 25: 16 x 22.5.
  const NcclParams p = nccl_priors(GpuArch::hopper);
  const SearchInput in = testing::dgx_h100_search_input();
  const GraphInfo g = search_channels(in, p);
  CHECK(g.n_channels == 16);
  CHECK(g.bw_inter_GBps == doctest::Approx(22.5));
}

TEST_CASE("a PCIe Gen4 box: one ring at 24 GB/s, too slow to duplicate") {
  // gpu_total = pair path = 24: 60..30 do not fit a path; 24 -> 1 ring = 24; 20 -> 20;
  // 15 -> 15; 12 -> 2 x 12 = 24 (not better); 11/24 = 0.46: stop. 24 < 25: no duplication.
  const NcclParams p = nccl_priors(GpuArch::ampere);
  SearchInput in;
  in.gpus_per_node = 4;
  in.gpu_total_GBps = 24;
  in.gpu_pair_GBps = 24;
  const GraphInfo g = search_channels(in, p);
  CHECK(g.n_channels == 1);
  CHECK(g.bw_intra_GBps == doctest::Approx(24.0));
}
