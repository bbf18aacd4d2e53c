// The algorithm choice of aws-ofi-nccl's tuner plugin (aws/aws-ofi-nccl, src/tuner/
// nccl_ofi_regions.cpp, region_init_internal_p5_p5e; the plugin ships in the library NCCL loads as
// its network plugin on EFA). On p5 and p5e instances it replaces NCCL's all-reduce choice on more
// than two servers of 8 ranks each with regions of the (message bytes, ranks) plane, drawn in log2
// space: roughly Tree LL128 up to ~36 MiB at 32 ranks (~300-500 MiB at 128-1,024), then Ring LL128,
// then NVLSTree Simple or Ring Simple. On two servers or fewer, for other collectives and rank
// layouts it leaves NCCL's choice alone. A point outside every region, or in a region whose
// algorithm and protocol NCCL cannot run (NVLS off, NCCL_ALGO), also keeps NCCL's choice.
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "collectives/nccl/nccl_types.hpp"

namespace cs::coll {

enum class OfiPlatform { none, p5 };

// The plugin's platform for an EC2 instance type (the plugin reads the DMI product name):
// p5.48xlarge and p5e.48xlarge share the p5 regions; anything else has none modelled.
OfiPlatform ofi_platform(std::string_view instance_type);

struct OfiChoice {
  Algo algo = Algo::ring;
  Proto proto = Proto::simple;
};

// The plugin's (algorithm, protocol) for a call of `bytes` on `n_ranks` over `n_nodes` servers:
// its regions in order, skipping those whose pair `allowed` rejects (NCCL cannot run it), the
// first that holds the point; nullopt where NCCL chooses.
std::optional<OfiChoice> ofi_tuner_choice(OfiPlatform platform, Op op, double bytes, int n_ranks,
                                          int n_nodes,
                                          const std::function<bool(Algo, Proto)>& allowed);

// Whether (bytes, ranks) lies inside or on the edge of the polygon `vertices` (x = bytes,
// y = ranks, both as given; the test runs in log2 space), by the plugin's ray casting.
struct OfiPoint {
  double x = 0;
  double y = 0;
};
bool ofi_inside(OfiPoint point, const std::vector<OfiPoint>& vertices);

}  // namespace cs::coll
