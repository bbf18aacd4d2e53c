// What earlier NCCL releases priced otherwise in their tuner (TunerOptions::nccl_version, as
// NCCL_VERSION_CODE: 2.24.3 = 22403; 0 = the priors' own release, 2.28.9). Read from NCCL's
// src/graph/tuning.cc at the tags v2.24.3-1, v2.27.7-1, v2.28.7-1 and v2.28.9-1.
#pragma once

#include <optional>

#include "collectives/nccl/channel_search.hpp"
#include "collectives/nccl/nccl_types.hpp"

namespace cs::coll {

// Whether the release has the algorithm at all: NVLS from 2.17, NVLSTree from 2.18 (NCCL's
// release notes); every other algorithm, and an unknown release (0), yes.
bool nccl_release_has(Algo algo, int version);

// Before 2.28 NCCL's estimate priced NVLS and NVLSTree with other formulas: busBw = nCh x
// min(bwIntra, bwInter) for NVLS, nCh x min(bwIntra, bwInter, halved from 3 servers) for
// NVLSTree, and algbw = busBw x 5/6 for both. nullopt: the release uses 2.28's (or the algorithm
// is neither).
std::optional<double> legacy_nvls_bus_GBps(Algo algo, int version, const GraphInfo& graph,
                                           int nodes);
inline constexpr double kLegacyNvlsAlgbwRatio = 5.0 / 6.0;

// NVLSTree's network hop in NCCL's estimate before 2.28.9: 14 us (2.28.9: 20.9, the priors').
// nullopt: the priors' figure stands.
std::optional<double> legacy_nvls_tree_net_hop_us(int version);

}  // namespace cs::coll
