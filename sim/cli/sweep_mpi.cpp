#include "cli/sweep_mpi.hpp"

#include <cstdlib>

#include "core/error.hpp"

#ifdef CLUSTERSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace cs::cli {
namespace {

// The world size an MPI launcher announced, or 0 outside one.
int launched_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return 0;
}

}  // namespace

#ifdef CLUSTERSIM_HAVE_MPI

MpiWorld::MpiWorld() {
  if (launched_size() <= 1) return;
  MPI_Init(nullptr, nullptr);
  started_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiWorld::~MpiWorld() {
  if (started_) MPI_Finalize();
}

std::vector<std::string> MpiWorld::gather(const std::string& text) const {
  if (!started_) return {text};
  const int mine = static_cast<int>(text.size());
  std::vector<int> sizes(static_cast<std::size_t>(size_));
  MPI_Gather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(size_), 0);
  std::size_t total = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += static_cast<std::size_t>(sizes[r]);
  }
  std::string all(rank_ == 0 ? total : 0, '\0');
  MPI_Gatherv(text.data(), mine, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  if (rank_ != 0) return {};
  std::vector<std::string> out;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    out.push_back(
        all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(sizes[r])));
  }
  return out;
}

#else

MpiWorld::MpiWorld() {
  if (launched_size() > 1) {
    throw InputError(
        "sweep: this clustersim was built without MPI, so under mpirun every rank would run the "
        "whole sweep; install OpenMPI (apt-get install libopenmpi-dev) and rebuild, or split with "
        "--shard K/N");
  }
}

MpiWorld::~MpiWorld() = default;

std::vector<std::string> MpiWorld::gather(const std::string& text) const {
  return {text};
}

#endif

}  // namespace cs::cli
