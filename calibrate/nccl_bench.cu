// NCCL collective timings on the GPUs of one node, nccl-tests conventions: S is the full buffer,
// one timed region holds several back-to-back calls (time averaged over them), the median of the
// regions is reported, algbw = S / t and busbw = algbw x the op's bus factor. One process drives
// all ranks (ncclCommInitAll). NCCL_ALGO / NCCL_PROTO are read from the environment and recorded;
// the algorithm, protocol and channels NCCL actually chose come from its TUNING debug log.
#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "common/events.hpp"
#include "common/fill.hpp"
#include "common/harness.hpp"
#include "common/nccl_log.hpp"
#include "common/node_info.hpp"

namespace {

using cs_cal::DeviceBuffer;
using cs_cal::Point;
using cs_cal::Record;

constexpr size_t kMiB = 1024 * 1024;
constexpr size_t kFloat = sizeof(float);

// Holds rank 0's stream until the host sets *flag: calls queued behind it then run back to back,
// free of the gaps one host thread leaves while it launches n ranks' kernels for every call.
__global__ void gate_kernel(volatile int* flag) {
  while (*flag == 0) __nanosleep(1000);
}

// One communicator clique over GPUs 0..n-1 with a stream, buffers and a join event per rank.
struct Clique {
  Clique(int ranks, size_t max_bytes)
      : n(ranks), comms(ranks), streams(ranks), joined(ranks), events(0) {
    std::vector<int> devices(n);
    for (int r = 0; r < n; ++r) devices[r] = r;
    NCCL_CHECK(ncclCommInitAll(comms.data(), n, devices.data()));
    for (int r = 0; r < n; ++r) {
      CUDA_CHECK(cudaSetDevice(r));
      CUDA_CHECK(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking));
      CUDA_CHECK(cudaEventCreateWithFlags(&joined[r], cudaEventDisableTiming));
      send.push_back(std::make_unique<DeviceBuffer>(r, max_bytes));
      recv.push_back(std::make_unique<DeviceBuffer>(r, max_bytes));
      cs_cal::fill_random(send[r]->as<float>(), max_bytes / kFloat, 1000u + r, streams[r]);
      cs_cal::fill_random(recv[r]->as<float>(), max_bytes / kFloat, 2000u + r, streams[r]);
    }
    for (int r = 0; r < n; ++r) CUDA_CHECK(cudaStreamSynchronize(streams[r]));
    void* flag = nullptr;
    CUDA_CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
    gate = static_cast<volatile int*>(flag);
    *gate = 0;
  }
  ~Clique() {
    destroy();
    cudaFreeHost(const_cast<int*>(gate));
  }
  // Ends the communicators (NCCL finishes its log lines) and frees the buffers.
  void destroy() {
    for (ncclComm_t& comm : comms) {
      if (comm != nullptr) ncclCommDestroy(comm);
      comm = nullptr;
    }
    send.clear();
    recv.clear();
  }

  int n;
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> joined;
  std::vector<std::unique_ptr<DeviceBuffer>> send;
  std::vector<std::unique_ptr<DeviceBuffer>> recv;
  cs_cal::EventPair events;      // on GPU 0
  volatile int* gate = nullptr;  // pinned, mapped: host writes, gate_kernel reads
};

// How an op sizes its call from S and how much of the bus it uses (nccl-tests' busbw factors).
struct OpSpec {
  const char* name;
  const char* nccl_function;  // as NCCL's TUNING line names it; "" for send/recv based ops
  bool per_rank_chunks;       // count = S / (type size x nranks)
  double (*bus_factor)(int n);
};

const OpSpec kOps[] = {
    {"allreduce", "AllReduce", false, [](int n) { return 2.0 * (n - 1) / n; }},
    {"allgather", "AllGather", true, [](int n) { return double(n - 1) / n; }},
    {"reducescatter", "ReduceScatter", true, [](int n) { return double(n - 1) / n; }},
    {"broadcast", "Broadcast", false, [](int) { return 1.0; }},
    {"alltoall", "", true, [](int n) { return double(n - 1) / n; }},
    {"sendrecv", "", false, [](int) { return 1.0; }},
};

// Enqueues one call of `op` with `count` elements per call on every rank, as one NCCL group.
void enqueue(Clique& c, const OpSpec& op, size_t count) {
  const std::string name = op.name;
  NCCL_CHECK(ncclGroupStart());
  for (int r = 0; r < c.n; ++r) {
    float* send = c.send[r]->as<float>();
    float* recv = c.recv[r]->as<float>();
    if (name == "allreduce") {
      NCCL_CHECK(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, c.comms[r], c.streams[r]));
    } else if (name == "allgather") {
      NCCL_CHECK(ncclAllGather(send, recv, count, ncclFloat, c.comms[r], c.streams[r]));
    } else if (name == "reducescatter") {
      NCCL_CHECK(
          ncclReduceScatter(send, recv, count, ncclFloat, ncclSum, c.comms[r], c.streams[r]));
    } else if (name == "broadcast") {
      NCCL_CHECK(ncclBroadcast(send, recv, count, ncclFloat, 0, c.comms[r], c.streams[r]));
    } else if (name == "alltoall") {
      for (int peer = 0; peer < c.n; ++peer) {
        NCCL_CHECK(ncclSend(send + peer * count, count, ncclFloat, peer, c.comms[r], c.streams[r]));
        NCCL_CHECK(ncclRecv(recv + peer * count, count, ncclFloat, peer, c.comms[r], c.streams[r]));
      }
    } else {  // sendrecv: a ring, each rank sends to the next and receives from the previous
      NCCL_CHECK(ncclSend(send, count, ncclFloat, (r + 1) % c.n, c.comms[r], c.streams[r]));
      NCCL_CHECK(ncclRecv(recv, count, ncclFloat, (r + c.n - 1) % c.n, c.comms[r], c.streams[r]));
    }
  }
  NCCL_CHECK(ncclGroupEnd());
}

// `calls` back-to-back calls between an event on rank 0's stream (which every rank's stream waits
// for) and an event after every rank's stream has finished. Seconds per call. Host-paced: the GPUs
// start as soon as the first call is launched, so small calls are paced by the host's launches.
// Gated: everything is queued behind gate_kernel first and released at once (GPU time alone).
double time_calls(Clique& c, const OpSpec& op, size_t count, int calls, bool gated = false) {
  CUDA_CHECK(cudaSetDevice(0));
  if (gated) {
    *c.gate = 0;
    gate_kernel<<<1, 1, 0, c.streams[0]>>>(c.gate);
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cudaEventRecord(c.events.start(), c.streams[0]));
  for (int r = 1; r < c.n; ++r) {
    CUDA_CHECK(cudaSetDevice(r));
    CUDA_CHECK(cudaStreamWaitEvent(c.streams[r], c.events.start(), 0));
  }
  for (int i = 0; i < calls; ++i) enqueue(c, op, count);
  for (int r = 1; r < c.n; ++r) {
    CUDA_CHECK(cudaSetDevice(r));
    CUDA_CHECK(cudaEventRecord(c.joined[r], c.streams[r]));
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaStreamWaitEvent(c.streams[0], c.joined[r], 0));
  }
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaEventRecord(c.events.stop(), c.streams[0]));
  if (gated) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *c.gate = 1;
  }
  return c.events.seconds() / calls;
}

// All-reduce of the constant r+1 on rank r must give n(n+1)/2 everywhere: NCCL works before we time
// it.
void check_allreduce(Clique& c) {
  const size_t count = std::min<size_t>(1 << 20, c.send[0]->bytes() / kFloat);
  for (int r = 0; r < c.n; ++r) {
    CUDA_CHECK(cudaSetDevice(r));
    cs_cal::fill_constant(c.send[r]->as<float>(), count, float(r + 1), c.streams[r]);
  }
  enqueue(c, kOps[0], count);
  const float expected = float(c.n * (c.n + 1) / 2);
  for (int r = 0; r < c.n; ++r) {
    float got[2] = {0, 0};
    CUDA_CHECK(cudaSetDevice(r));
    CUDA_CHECK(cudaStreamSynchronize(c.streams[r]));
    CUDA_CHECK(cudaMemcpy(&got[0], c.recv[r]->as<float>(), kFloat, cudaMemcpyDeviceToHost));
    CUDA_CHECK(
        cudaMemcpy(&got[1], c.recv[r]->as<float>() + count - 1, kFloat, cudaMemcpyDeviceToHost));
    if (got[0] != expected || got[1] != expected) {
      throw cs_cal::DeviceError("all-reduce check failed on rank " + std::to_string(r) + ": got " +
                                std::to_string(got[0]) + ", " + std::to_string(got[1]) +
                                ", expected " + std::to_string(expected));
    }
    cs_cal::fill_random(c.send[r]->as<float>(), count, 1000u + r, c.streams[r]);
    CUDA_CHECK(cudaStreamSynchronize(c.streams[r]));
  }
}

int calls_per_region(size_t bytes) {
  return bytes <= kMiB ? 20 : bytes <= 32 * kMiB ? 10 : bytes <= 256 * kMiB ? 5 : 3;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

std::string lower(std::string text) {
  for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// `offset` elements are added to every call's count: with 1, all-to-all's per-peer chunks (and
// so every peer's offset in the buffers) stop being multiples of 16 bytes, which NCCL copies with
// narrower packs (calibrate/README.md).
// `calls_scale` multiplies the calls per timed region (host-paced points only; gated regions keep
// theirs, since every gated call waits queued behind the gate and NCCL's work queue is finite).
void add_points(cs_cal::Harness& harness, const std::shared_ptr<Clique>& clique, const OpSpec& op,
                const std::vector<size_t>& sizes, size_t gated_max_bytes, size_t offset,
                int calls_scale) {
  const int n = clique->n;
  const std::string forced_algo = lower(env_or("NCCL_ALGO", "default"));
  const std::string forced_proto = env_or("NCCL_PROTO", "default");
  for (const bool gated : {false, true}) {
    for (const size_t requested : sizes) {
      const size_t base = requested / (kFloat * (op.per_rank_chunks ? n : 1));
      if (base == 0) continue;  // fewer than one element per rank
      const size_t count = base + offset;
      const size_t bytes = count * kFloat * (op.per_rank_chunks ? n : 1);
      if (gated && bytes > gated_max_bytes) continue;
      const int calls = calls_per_region(bytes) * (gated ? 1 : calls_scale);
      Point p;
      p.name = std::string(gated ? "nccl-gated/" : "nccl/") + op.name + "/n" + std::to_string(n) +
               "/" + std::to_string(bytes);
      p.record.set("kind", "nccl").set("op", op.name).set("nranks", n);
      p.record.set("bytes", static_cast<std::int64_t>(bytes))
          .set("count", static_cast<std::int64_t>(bytes / kFloat));
      p.record.set("call_count", static_cast<std::int64_t>(count)).set("dtype", "float32");
      p.record.set("chunk_offset_elements", static_cast<std::int64_t>(offset));
      p.record.set("forced_algo", forced_algo)
          .set("forced_proto", forced_proto)
          .set("timing", gated ? "gated" : "host_paced")
          .set("iterations", calls);
      p.repetitions = bytes <= 32 * kMiB ? 5 : 3;
      p.bytes_per_op = static_cast<double>(bytes);
      const OpSpec* spec = &op;
      p.warmup = [clique, spec, count] { time_calls(*clique, *spec, count, 3); };
      p.measure = [clique, spec, count, calls, gated] {
        return time_calls(*clique, *spec, count, calls, gated);
      };
      p.finish = [bytes, spec, n](Record& r, double seconds) {
        const double algbw = bytes / seconds / 1e9;
        r.set("algbw_GBps", algbw).set("busbw_GBps", algbw * spec->bus_factor(n));
      };
      harness.add(std::move(p));
    }
  }
}

// After the run: close the communicators, read NCCL's log, attach its choice to each record.
void attach_tuning(const std::shared_ptr<Clique>& clique, const std::string& log_path,
                   cs_cal::Harness& harness, std::vector<Record>& records) {
  clique->destroy();
  if (log_path.empty()) return;
  std::ifstream in(log_path);
  if (!in) {
    std::cerr << "cs_cal_nccl: warning: cannot read NCCL log " << log_path
              << "; no algo/proto recorded\n";
    return;
  }
  const cs_cal::TuningLog log(in);
  harness.set_note("nccl_tuning_lines", std::to_string(log.lines()));
  for (Record& record : records) {
    std::string op;
    std::int64_t call_count = 0;
    for (const auto& [key, value] : record.fields()) {
      if (key == "op") op = std::get<std::string>(value);
      if (key == "call_count") call_count = std::get<std::int64_t>(value);
    }
    for (const OpSpec& spec : kOps) {
      if (op != spec.name || *spec.nccl_function == '\0') continue;
      const auto choice =
          log.choice(spec.nccl_function, call_count * static_cast<std::int64_t>(kFloat));
      if (!choice) continue;
      record.set("algo", choice->algo)
          .set("proto", choice->proto)
          .set("channels", choice->channels);
      record.set("tuning_agree", choice->calls).set("tuning_calls", choice->total_calls);
    }
  }
}

void setup(const cs_cal::Options& options, cs_cal::Harness& harness) {
  // Two GPUs by default; --nranks=1 asks for NCCL's one-rank path (a copy on the GPU) on purpose.
  const int visible = cs_cal::require_gpus(options.integer("nranks") == 1 ? 1 : 2);
  const int n =
      options.integer("nranks") > 0 ? static_cast<int>(options.integer("nranks")) : visible;
  cs_cal::require_gpus(n);
  const auto sizes =
      cs_cal::geometric_sizes(options.count("min-bytes"), options.count("max-bytes"), 2);
  if (sizes.empty()) throw cs_cal::DeviceError("empty size sweep: --min-bytes exceeds --max-bytes");
  const auto offset = options.count("chunk-offset-elements");
  const long long calls_scale = options.integer("calls-scale");
  if (calls_scale < 1 || calls_scale > 1000)
    throw cs_cal::DeviceError("--calls-scale: expected 1..1000, got " +
                              std::to_string(calls_scale));
  auto clique = std::make_shared<Clique>(n, sizes.back() + offset * kFloat * n);
  check_allreduce(*clique);
  for (const std::string& name : split_commas(options.text("ops"))) {
    bool known = false;
    for (const OpSpec& op : kOps) {
      if (name != op.name) continue;
      known = true;
      add_points(harness, clique, op, sizes, options.count("gated-max-bytes"), offset,
                 static_cast<int>(calls_scale));
    }
    if (!known)
      throw cs_cal::DeviceError(
          "--ops: unknown op '" + name +
          "' (allreduce, allgather, reducescatter, broadcast, alltoall, sendrecv)");
  }
  std::string log_path =
      options.text("nccl-log").empty() ? env_or("NCCL_DEBUG_FILE", "") : options.text("nccl-log");
  if (log_path.find('%') != std::string::npos) log_path.clear();  // NCCL expands %h/%p; we cannot
  harness.set_postprocess([clique, log_path, &harness](std::vector<Record>& records) {
    attach_tuning(clique, log_path, harness, records);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return cs_cal::calibration_main(
      argc, argv, "cs_cal_nccl",
      {{"nranks", "0"},
       {"ops", "allreduce,allgather,reducescatter,broadcast,alltoall,sendrecv"},
       {"min-bytes", "8"},
       {"max-bytes", std::to_string(1024 * kMiB)},
       {"nccl-log", ""},
       {"gated-max-bytes", std::to_string(16 * kMiB)},
       {"chunk-offset-elements", "0"},
       {"calls-scale", "1"}},
      setup);
}
