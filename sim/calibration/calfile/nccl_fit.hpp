// What the NCCL fit learned (calibration/fit/fit_nccl.hpp fits it): per (algorithm, protocol) the
// fitted constants and how well they fit, the NcclParams the simulator runs with them in place,
// the p2p figures of send/recv based ops and the host floors of nccl-tests' timing.
#pragma once

#include <string>
#include <vector>

#include "calibration/calfile/host_floor.hpp"
#include "collectives/nccl/nccl_params.hpp"
#include "collectives/nccl/nccl_types.hpp"

namespace cs::cal {

// One (algorithm, protocol) of the joint fit.
struct NcclConfigFit {
  coll::Algo algo = coll::Algo::ring;
  coll::Proto proto = coll::Proto::simple;
  double base_us = 0;
  double hop_us = 0;
  double bus_GBps = 0;
  // Ring Simple: the ring fill's rate the fit found (collectives/nccl/ring_passes.hpp); < 0: not
  // fitted, the prior stands. Not written to the file: the parameters carry it.
  double ring_fill_GBps = -1;
  int points = 0;  // training points
  double rms_rel_error = 0;
  double max_rel_error = 0;
};

struct NcclFit {
  std::string op;           // the collective fitted ("" = every op together)
  coll::NcclParams params;  // priors with the fitted figures in place
  std::vector<NcclConfigFit> configs;
  int channels_ring = 0;  // the calibrated ring graph: channels x per-channel GB/s
  double channel_GBps = 0;
  // Send/recv based ops (alltoall, sendrecv) bypass the tuner: NCCL's p2p path
  // (collectives/nccl/p2p_plan.hpp). Their fit sets the one-peer latency (Ring Simple base, hop 0),
  // the extra-peer latency, the p2p per-channel rate and the NVLink efficiency the op sees
  // (0: not fitted).
  double p2p_nvlink_efficiency = 0;
  // The host floor of nccl-tests' timing per rank count (host_floor.hpp), fitted with one
  // collective; the fit above reads only the points it leaves GPU-bound. Empty for the every-op
  // fit and for gated data.
  HostFloors host_floors;
};

}  // namespace cs::cal
