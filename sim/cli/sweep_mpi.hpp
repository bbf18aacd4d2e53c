// `mpirun -n R clustersim sweep`: the sweep's points split over R ranks (point i on rank i mod R),
// every rank's rows gathered on rank 0, which alone writes the output. Built only where CMake found
// MPI (CLUSTERSIM_HAVE_MPI); elsewhere a run under mpirun is refused rather than run R times over.
#pragma once

#include <string>
#include <vector>

namespace cs::cli {

class MpiWorld {
 public:
  // Starts MPI when the process was launched by mpirun (OpenMPI's or a PMI launcher's
  // environment); a plain run stays one rank without touching MPI.
  MpiWorld();
  ~MpiWorld();  // MPI_Finalize, when started
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Rank 0 receives every rank's `text` (in rank order); the others get an empty vector.
  std::vector<std::string> gather(const std::string& text) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  bool started_ = false;
};

}  // namespace cs::cli
