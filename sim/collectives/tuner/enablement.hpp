// Which (algorithm, protocol) NCCL's tuner considers for a call on a communicator, and which of
// its graphs each one reads: NCCL_ALGO / NCCL_PROTO, the release, the hardware (LL128 on
// NVLink-only paths, NVLS on NVSwitches with multicast), NVLS_ENABLE and CollNet (collnet.hpp).
#pragma once

#include "collectives/tuner/tuner.hpp"

namespace cs::coll {

// Whether NCCL would consider (algo, proto) for this op on this communicator.
bool applicable(const CommShape& s, Op op, Algo a, Proto p, const TunerOptions& o);

// The graph whose channels and speeds NCCL's estimate of `a` reads.
const GraphInfo& graph_of(const CommShape& s, Algo a);

}  // namespace cs::coll
