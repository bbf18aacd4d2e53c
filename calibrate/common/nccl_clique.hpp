// A clique of NCCL ranks for the calibration programs: one process driving all ranks
// (single_process, ncclCommInitAll) or one process per GPU (process_per_gpu, ncclCommInitRank),
// the collectives of nccl-tests enqueued on it, and their timing as each launch allows it
// (calibrate/README.md, "Method").
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "common/check.hpp"
#include "common/events.hpp"
#include "common/fill.hpp"
#include "common/launch.hpp"

namespace cs_cal {

// How the ranks were started, recorded in every record as `launch`.
enum class Launch { single_process, process_per_gpu };
const char* to_string(Launch launch);

// One rank this process drives: its GPU, communicator, stream, buffers and a join event.
struct LocalRank {
  int rank = 0;
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream{};
  cudaEvent_t joined{};
  std::unique_ptr<DeviceBuffer> send;
  std::unique_ptr<DeviceBuffer> recv;
};

// The ranks of one communicator clique that this process drives: all n (single_process,
// ncclCommInitAll over GPUs 0..n-1) or its own (process_per_gpu, ncclCommInitRank on GPU
// local_rank). A process of several also holds a side communicator, split from the first, for the
// barrier and the slowest rank's time: it must run while the first is held behind the gate.
struct Clique {
  Clique(int nranks, size_t max_bytes) : launch(Launch::single_process), n(nranks), events(0) {
    std::vector<ncclComm_t> comms(n);
    std::vector<int> devices(n);
    for (int r = 0; r < n; ++r) devices[r] = r;
    NCCL_CHECK(ncclCommInitAll(comms.data(), n, devices.data()));
    for (int r = 0; r < n; ++r) add_rank(r, r, comms[r], max_bytes);
    make_gate();
  }
  Clique(const RankPlace& place, const ncclUniqueId& id, size_t max_bytes)
      : launch(Launch::process_per_gpu), n(place.world_size), events(place.local_rank) {
    CUDA_CHECK(cudaSetDevice(place.local_rank));
    ncclComm_t comm = nullptr;
    NCCL_CHECK(ncclCommInitRank(&comm, n, id, place.rank));
    add_rank(place.rank, place.local_rank, comm, max_bytes);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.splitShare = 0;  // resources of its own: it runs while `comm`'s calls wait at the gate
    NCCL_CHECK(ncclCommSplit(comm, 0, place.rank, &side_comm, &config));
    CUDA_CHECK(cudaStreamCreateWithFlags(&side_stream, cudaStreamNonBlocking));
    side_buffer = std::make_unique<DeviceBuffer>(place.local_rank, sizeof(double));
    make_gate();
  }
  ~Clique() {
    destroy();
    cudaFreeHost(const_cast<int*>(gate));
  }
  // Ends the communicators (NCCL finishes its log lines) and frees the buffers.
  void destroy() {
    if (side_comm != nullptr) ncclCommDestroy(side_comm);
    side_comm = nullptr;
    for (LocalRank& r : ranks) {
      if (r.comm != nullptr) ncclCommDestroy(r.comm);
      r.comm = nullptr;
      r.send.reset();
      r.recv.reset();
    }
  }

  Launch launch;
  int n;                           // ranks in the clique, in this process or not
  std::vector<LocalRank> ranks;    // those this process drives
  EventPair events;                // on ranks[0]'s GPU
  volatile int* gate = nullptr;    // pinned, mapped: host writes, gate_kernel reads
  ncclComm_t side_comm = nullptr;  // process_per_gpu only, as the two below
  cudaStream_t side_stream{};
  std::unique_ptr<DeviceBuffer> side_buffer;

 private:
  void add_rank(int rank, int device, ncclComm_t comm, size_t max_bytes) {
    LocalRank& r = ranks.emplace_back();
    r.rank = rank;
    r.device = device;
    r.comm = comm;
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&r.joined, cudaEventDisableTiming));
    r.send = std::make_unique<DeviceBuffer>(device, max_bytes);
    r.recv = std::make_unique<DeviceBuffer>(device, max_bytes);
    fill_random(r.send->as<float>(), max_bytes / sizeof(float), 1000u + rank, r.stream);
    fill_random(r.recv->as<float>(), max_bytes / sizeof(float), 2000u + rank, r.stream);
    CUDA_CHECK(cudaStreamSynchronize(r.stream));
  }
  void make_gate() {
    void* flag = nullptr;
    CUDA_CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
    gate = static_cast<volatile int*>(flag);
    *gate = 0;
  }
};

// How an op sizes its call from S and how much of the bus it uses (nccl-tests' busbw factors).
struct OpSpec {
  const char* name;
  const char* nccl_function;  // as NCCL's TUNING line names it; "" for send/recv based ops
  bool per_rank_chunks;       // count = S / (type size x nranks)
  double (*bus_factor)(int n);
};

// The collectives nccl-tests runs, in the order of --ops' default.
extern const OpSpec kOps[6];

// Enqueues one call of `op` with `count` elements per call on every rank this process drives, as
// one NCCL group.
void enqueue(Clique& c, const OpSpec& op, size_t count);

// Seconds per call of `calls` back-to-back calls of `op`, timed as the clique's launch allows:
// host-paced (the GPUs start with the first launch) or gated (queued behind a gate, released at
// once: the GPUs' time alone); with one process per GPU, the slowest rank's.
double time_calls(Clique& c, const OpSpec& op, size_t count, int calls, bool gated = false);

// All-reduce of the constant r+1 on rank r must give n(n+1)/2 everywhere: NCCL works before we
// time it. Each process checks the ranks it drives. Throws DeviceError otherwise.
void check_allreduce(Clique& c);

}  // namespace cs_cal
