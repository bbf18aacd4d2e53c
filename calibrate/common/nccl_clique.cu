// The NCCL clique of the calibration programs: see nccl_clique.hpp.
#include "common/nccl_clique.hpp"

#include <atomic>
#include <cstdint>
#include <string>

#include "common/check.hpp"

namespace cs_cal {
namespace {

constexpr size_t kFloat = sizeof(float);

// Holds a stream until the host sets *flag: calls queued behind it then run back to back, free of
// the gaps the host leaves while it launches them.
__global__ void gate_kernel(volatile int* flag) {
  while (*flag == 0) __nanosleep(1000);
}

// single_process: `calls` back-to-back calls between an event on rank 0's stream (which every
// rank's stream waits for) and an event after every rank's stream has finished. Seconds per call.
// Host-paced: the GPUs start as soon as the first call is launched, so small calls are paced by the
// host's launches. Gated: everything is queued behind gate_kernel on rank 0's stream first and
// released at once (GPU time alone).
double time_calls_together(Clique& c, const OpSpec& op, size_t count, int calls, bool gated) {
  std::vector<LocalRank>& ranks = c.ranks;
  CUDA_CHECK(cudaSetDevice(ranks[0].device));
  if (gated) {
    *c.gate = 0;
    gate_kernel<<<1, 1, 0, ranks[0].stream>>>(c.gate);
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cudaEventRecord(c.events.start(), ranks[0].stream));
  for (size_t r = 1; r < ranks.size(); ++r) {
    CUDA_CHECK(cudaSetDevice(ranks[r].device));
    CUDA_CHECK(cudaStreamWaitEvent(ranks[r].stream, c.events.start(), 0));
  }
  for (int i = 0; i < calls; ++i) enqueue(c, op, count);
  for (size_t r = 1; r < ranks.size(); ++r) {
    CUDA_CHECK(cudaSetDevice(ranks[r].device));
    CUDA_CHECK(cudaEventRecord(ranks[r].joined, ranks[r].stream));
    CUDA_CHECK(cudaSetDevice(ranks[0].device));
    CUDA_CHECK(cudaStreamWaitEvent(ranks[0].stream, ranks[r].joined, 0));
  }
  CUDA_CHECK(cudaSetDevice(ranks[0].device));
  CUDA_CHECK(cudaEventRecord(c.events.stop(), ranks[0].stream));
  if (gated) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *c.gate = 1;
  }
  return c.events.seconds() / calls;
}

// process_per_gpu: returns once every rank has reached it. A one-byte all-reduce on the side
// communicator, waited for; one byte, so that its TUNING lines ("AllReduce: 1 Bytes") match no
// measured point (float32: multiples of 4 bytes).
void barrier(Clique& c) {
  std::uint8_t* byte = c.side_buffer->as<std::uint8_t>();
  NCCL_CHECK(ncclAllReduce(byte, byte, 1, ncclUint8, ncclMax, c.side_comm, c.side_stream));
  CUDA_CHECK(cudaStreamSynchronize(c.side_stream));
}

// process_per_gpu: the largest of every rank's `seconds`, on rank 0, the one that reports (the
// others get their own). A reduce to rank 0, not an all-reduce: NCCL logs an 8-byte all-reduce as
// it logs the 8-byte all-reduce point's calls, and no point is a reduce.
double slowest_rank(Clique& c, double seconds) {
  double* value = c.side_buffer->as<double>();
  CUDA_CHECK(
      cudaMemcpyAsync(value, &seconds, sizeof seconds, cudaMemcpyHostToDevice, c.side_stream));
  NCCL_CHECK(ncclReduce(value, value, 1, ncclFloat64, ncclMax, 0, c.side_comm, c.side_stream));
  double slowest = seconds;
  CUDA_CHECK(
      cudaMemcpyAsync(&slowest, value, sizeof slowest, cudaMemcpyDeviceToHost, c.side_stream));
  CUDA_CHECK(cudaStreamSynchronize(c.side_stream));
  return slowest;
}

// process_per_gpu, as nccl-tests times it: every rank times its own `calls` between two events on
// its own stream, after a barrier; the point's time is the slowest rank's. Host-paced: barrier,
// then the calls. Gated: the calls queued behind this rank's gate, the barrier (on the side
// communicator, since the first one's calls are held), then every rank releases its gate.
double time_calls_per_process(Clique& c, const OpSpec& op, size_t count, int calls, bool gated) {
  const LocalRank& me = c.ranks[0];
  CUDA_CHECK(cudaSetDevice(me.device));
  if (gated) {
    *c.gate = 0;
    gate_kernel<<<1, 1, 0, me.stream>>>(c.gate);
    CUDA_CHECK_LAUNCH();
  } else {
    barrier(c);
  }
  CUDA_CHECK(cudaEventRecord(c.events.start(), me.stream));
  for (int i = 0; i < calls; ++i) enqueue(c, op, count);
  CUDA_CHECK(cudaEventRecord(c.events.stop(), me.stream));
  if (gated) {
    barrier(c);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *c.gate = 1;
  }
  return slowest_rank(c, c.events.seconds()) / calls;
}

}  // namespace

const char* to_string(Launch launch) {
  return launch == Launch::single_process ? "single_process" : "process_per_gpu";
}

const OpSpec kOps[6] = {
    {"allreduce", "AllReduce", false, [](int n) { return 2.0 * (n - 1) / n; }},
    {"allgather", "AllGather", true, [](int n) { return double(n - 1) / n; }},
    {"reducescatter", "ReduceScatter", true, [](int n) { return double(n - 1) / n; }},
    {"broadcast", "Broadcast", false, [](int) { return 1.0; }},
    {"alltoall", "", true, [](int n) { return double(n - 1) / n; }},
    {"sendrecv", "", false, [](int) { return 1.0; }},
};

void enqueue(Clique& c, const OpSpec& op, size_t count) {
  const std::string name = op.name;
  const int n = c.n;
  NCCL_CHECK(ncclGroupStart());
  for (const LocalRank& lr : c.ranks) {
    const int r = lr.rank;
    float* send = lr.send->as<float>();
    float* recv = lr.recv->as<float>();
    if (name == "allreduce") {
      NCCL_CHECK(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, lr.comm, lr.stream));
    } else if (name == "allgather") {
      NCCL_CHECK(ncclAllGather(send, recv, count, ncclFloat, lr.comm, lr.stream));
    } else if (name == "reducescatter") {
      NCCL_CHECK(ncclReduceScatter(send, recv, count, ncclFloat, ncclSum, lr.comm, lr.stream));
    } else if (name == "broadcast") {
      NCCL_CHECK(ncclBroadcast(send, recv, count, ncclFloat, 0, lr.comm, lr.stream));
    } else if (name == "alltoall") {
      for (int peer = 0; peer < n; ++peer) {
        NCCL_CHECK(ncclSend(send + peer * count, count, ncclFloat, peer, lr.comm, lr.stream));
        NCCL_CHECK(ncclRecv(recv + peer * count, count, ncclFloat, peer, lr.comm, lr.stream));
      }
    } else {  // sendrecv: a ring, each rank sends to the next and receives from the previous
      NCCL_CHECK(ncclSend(send, count, ncclFloat, (r + 1) % n, lr.comm, lr.stream));
      NCCL_CHECK(ncclRecv(recv, count, ncclFloat, (r + n - 1) % n, lr.comm, lr.stream));
    }
  }
  NCCL_CHECK(ncclGroupEnd());
}

double time_calls(Clique& c, const OpSpec& op, size_t count, int calls, bool gated) {
  return c.launch == Launch::single_process ? time_calls_together(c, op, count, calls, gated)
                                            : time_calls_per_process(c, op, count, calls, gated);
}

void check_allreduce(Clique& c) {
  const size_t count = std::min<size_t>(1 << 20, c.ranks[0].send->bytes() / kFloat);
  for (const LocalRank& lr : c.ranks) {
    CUDA_CHECK(cudaSetDevice(lr.device));
    cs_cal::fill_constant(lr.send->as<float>(), count, float(lr.rank + 1), lr.stream);
  }
  enqueue(c, kOps[0], count);
  const float expected = float(c.n * (c.n + 1) / 2);
  for (const LocalRank& lr : c.ranks) {
    float got[2] = {0, 0};
    CUDA_CHECK(cudaSetDevice(lr.device));
    CUDA_CHECK(cudaStreamSynchronize(lr.stream));
    CUDA_CHECK(cudaMemcpy(&got[0], lr.recv->as<float>(), kFloat, cudaMemcpyDeviceToHost));
    CUDA_CHECK(
        cudaMemcpy(&got[1], lr.recv->as<float>() + count - 1, kFloat, cudaMemcpyDeviceToHost));
    if (got[0] != expected || got[1] != expected) {
      throw cs_cal::DeviceError("all-reduce check failed on rank " + std::to_string(lr.rank) +
                                ": got " + std::to_string(got[0]) + ", " + std::to_string(got[1]) +
                                ", expected " + std::to_string(expected));
    }
    cs_cal::fill_random(lr.send->as<float>(), count, 1000u + lr.rank, lr.stream);
    CUDA_CHECK(cudaStreamSynchronize(lr.stream));
  }
}

}  // namespace cs_cal
