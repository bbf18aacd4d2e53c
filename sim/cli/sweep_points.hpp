// The points of a sweep file, each run as its command would run it: `ddp` (the step on every GPU
// of the topology at that server count), `coll` (one size of a collective on every rank) or `plan`
// (one candidate's time and cost to the file's target). The cells of a point are printed text, so
// any split of the points over threads, MPI ranks or shards gives the same bytes.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plan/sweep_file.hpp"
#include "topology/cluster/cluster.hpp"
#include "workload/model/model.hpp"

namespace cs::cli {

class SweepPoints {
 public:
  // Reads every model and topology the sweep names, and checks every axis value that names a
  // collective, a type or a size: bad input throws InputError here, before any point runs (a
  // path that names no file at the sweep file's line).
  explicit SweepPoints(const plan::SweepFile& sweep);

  const std::vector<std::string>& columns() const { return columns_; }
  const std::vector<bool>& numeric() const { return numeric_; }
  std::size_t count() const { return plan::point_count(sweep_); }

  // One point's cells (axis values, then results). A point that cannot run (the model does not
  // fit, the fabric cannot hold the servers) fills its `error` cell instead. Safe to call from
  // several threads at once.
  std::vector<std::string> run(std::size_t index) const;

 private:
  std::string path_of(const std::string& value) const;  // relative to the sweep file
  std::shared_ptr<const topo::Cluster> cluster(const std::string& topology, int servers) const;
  std::vector<std::string> run_ddp(const std::map<std::string, std::string>& at) const;
  std::vector<std::string> run_coll(const std::map<std::string, std::string>& at) const;
  std::vector<std::string> run_plan(const std::map<std::string, std::string>& at) const;

  plan::SweepFile sweep_;
  std::map<std::string, workload::Model> models_;  // by axis value
  std::vector<std::string> columns_;
  std::vector<bool> numeric_;
  std::size_t result_columns_ = 0;
  mutable std::mutex mutex_;
  mutable std::map<std::pair<std::string, int>, std::shared_ptr<const topo::Cluster>> clusters_;
};

}  // namespace cs::cli
