// The simulator as a predictor of measured points: one topology (a cluster and its graph) with
// one NCCL parameter struct; collectives run alone on the congestion-aware flow network, copies
// as flows (both directions at once for a bidirectional peer copy).
#pragma once

#include <map>
#include <memory>

#include "calibration/measurements/measurements.hpp"
#include "collectives/communicator.hpp"
#include "topology/graph.hpp"

namespace cs::cal {

class Predictor {
 public:
  Predictor(topo::Cluster cluster, coll::NcclParams params);
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  int gpu_count() const { return static_cast<int>(cluster_.ranks.size()); }
  const coll::NcclParams& params() const { return params_; }
  // A collective over ranks 0..n-1, alone; n must be 2..gpu_count().
  coll::CollectiveResult collective(coll::Op op, int n_ranks, double bytes,
                                    const coll::TunerOptions& options);
  // A measured copy's simulated time, microseconds; its GPUs must exist.
  double copy_us(const CopyPoint& copy) const;

 private:
  topo::Cluster cluster_;
  topo::ClusterGraph graph_;
  coll::NcclParams params_;
  std::map<int, std::unique_ptr<coll::Communicator>> comms_;
};

}  // namespace cs::cal
