// NCCL collective timings on the GPUs of one node, nccl-tests conventions: S is the full buffer,
// one timed region holds several back-to-back calls (time averaged over them), the median of the
// regions is reported, algbw = S / t and busbw = algbw x the op's bus factor. Two launches: one
// process drives all ranks (single_process, ncclCommInitAll), or one process per GPU
// (process_per_gpu, ncclCommInitRank), started by torchrun, mpirun or --procs=N, as users run NCCL.
// NCCL_ALGO / NCCL_PROTO are read from the environment and recorded; the algorithm, protocol and
// channels NCCL actually chose come from its TUNING debug log (rank 0's).
#include <cuda_runtime.h>
#include <nccl.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "common/harness.hpp"
#include "common/launch.hpp"
#include "common/nccl_clique.hpp"
#include "common/nccl_log.hpp"
#include "common/node_info.hpp"
#include "common/rendezvous.hpp"

namespace {

using cs_cal::Clique;
using cs_cal::kOps;
using cs_cal::Launch;
using cs_cal::OpSpec;
using cs_cal::Point;
using cs_cal::RankPlace;
using cs_cal::Record;

constexpr size_t kMiB = 1024 * 1024;
constexpr size_t kFloat = sizeof(float);

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
      p.record.set("launch", to_string(clique->launch));
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

// --launch: `auto` is one process per GPU when a launcher's variables name this process's rank
// (torchrun, mpirun, --procs), else one process for all GPUs, as before the option existed.
Launch launch_of(const std::string& option, const std::optional<RankPlace>& place) {
  if (option == "single_process") {
    if (place && place->world_size > 1)
      throw cs_cal::DeviceError("--launch=single_process: this process is rank " +
                                std::to_string(place->rank) + " of " +
                                std::to_string(place->world_size) + " (" + place->named_by +
                                "); each of them would drive every GPU");
    return Launch::single_process;
  }
  if (option == "process_per_gpu" || (option == "auto" && place)) {
    if (!place)
      throw cs_cal::DeviceError(
          "--launch=process_per_gpu: no rank in the environment; start it with --procs=N, "
          "torchrun (RANK, WORLD_SIZE, LOCAL_RANK) or mpirun (OMPI_COMM_WORLD_*)");
    return Launch::process_per_gpu;
  }
  if (option == "auto") return Launch::single_process;
  throw cs_cal::DeviceError("--launch: expected auto, single_process or process_per_gpu, got '" +
                            option + "'");
}

// NCCL opens NCCL_DEBUG_FILE for writing in every process: ranks other than 0 write beside rank 0's
// file (`.rank<r>`) unless the name holds NCCL's %p (the process id) already. Before any NCCL call.
void give_rank_its_log(int rank) {
  const char* pattern = std::getenv("NCCL_DEBUG_FILE");
  if (rank == 0 || pattern == nullptr || std::string(pattern).find("%p") != std::string::npos)
    return;
  setenv("NCCL_DEBUG_FILE", (std::string(pattern) + ".rank" + std::to_string(rank)).c_str(), 1);
}

// NCCL's unique id of this run: rank 0 makes it and publishes it in the rendezvous directory (hex
// text), the other ranks wait for it there.
ncclUniqueId exchange_unique_id(const RankPlace& me, const std::string& dir, double timeout_s) {
  constexpr const char* kFile = "nccl-unique-id";
  ncclUniqueId id{};
  if (me.rank == 0) {
    NCCL_CHECK(ncclGetUniqueId(&id));
    std::string hex;
    for (const char byte : id.internal) {
      char digits[3];
      std::snprintf(digits, sizeof digits, "%02x", static_cast<unsigned char>(byte));
      hex += digits;
    }
    cs_cal::publish_file(dir, kFile, hex + "\n");
    return id;
  }
  const std::string hex = cs_cal::await_file(dir, kFile, timeout_s, "rank 0");
  if (hex.size() < 2 * sizeof id.internal)
    throw cs_cal::DeviceError("rendezvous: " + dir + "/" + kFile + " is not an NCCL unique id");
  for (size_t i = 0; i < sizeof id.internal; ++i)
    id.internal[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return id;
}

// One rank of a process-per-GPU run: its GPU, its log, the unique id through the rendezvous
// directory, its communicator; only rank 0 reports.
std::shared_ptr<Clique> join_clique(const cs_cal::Options& options, const RankPlace& me,
                                    size_t max_bytes, cs_cal::Harness& harness) {
  if (options.integer("nranks") != 0 && options.integer("nranks") != me.world_size)
    throw cs_cal::DeviceError("--nranks=" + options.text("nranks") + ": this run has " +
                              std::to_string(me.world_size) + " processes, one rank each");
  harness.run_in_lockstep(me.rank == 0);
  cs_cal::require_gpus(me.local_rank + 1);
  const std::string dir = options.text("rendezvous").empty()
                              ? env_or(cs_cal::kRendezvousVariable, "")
                              : options.text("rendezvous");
  if (dir.empty())
    throw cs_cal::DeviceError(
        "one process per GPU needs a rendezvous directory that every rank reads: "
        "--rendezvous=DIR (--procs=N makes one)");
  const long long timeout_s = options.integer("rendezvous-timeout-s");
  if (timeout_s < 1) throw cs_cal::DeviceError("--rendezvous-timeout-s: expected 1 or more");
  give_rank_its_log(me.rank);
  const ncclUniqueId id = exchange_unique_id(me, dir, static_cast<double>(timeout_s));
  auto clique = std::make_shared<Clique>(me, id, max_bytes);
  // Every rank has read the id once its communicator exists: the directory can serve the next run.
  if (me.rank == 0) cs_cal::withdraw_file(dir, "nccl-unique-id");
  return clique;
}

void setup(const cs_cal::Options& options, cs_cal::Harness& harness) {
  const std::optional<RankPlace> place = cs_cal::rank_from_environment();
  const Launch launch = launch_of(options.text("launch"), place);
  const auto sizes =
      cs_cal::geometric_sizes(options.count("min-bytes"), options.count("max-bytes"), 2);
  if (sizes.empty()) throw cs_cal::DeviceError("empty size sweep: --min-bytes exceeds --max-bytes");
  const auto offset = options.count("chunk-offset-elements");
  const long long calls_scale = options.integer("calls-scale");
  if (calls_scale < 1 || calls_scale > 1000)
    throw cs_cal::DeviceError("--calls-scale: expected 1..1000, got " +
                              std::to_string(calls_scale));
  std::shared_ptr<Clique> clique;
  if (launch == Launch::single_process) {
    // Two GPUs by default; --nranks=1 asks for NCCL's one-rank path (a copy on the GPU) on purpose.
    const int visible = cs_cal::require_gpus(options.integer("nranks") == 1 ? 1 : 2);
    const int n =
        options.integer("nranks") > 0 ? static_cast<int>(options.integer("nranks")) : visible;
    cs_cal::require_gpus(n);
    clique = std::make_shared<Clique>(n, sizes.back() + offset * kFloat * n);
  } else {
    const size_t n = static_cast<size_t>(place->world_size);
    clique = join_clique(options, *place, sizes.back() + offset * kFloat * n, harness);
  }
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
  // Only the reporting process (rank 0 of several) reads its log; the others just end.
  std::string log_path = options.text("nccl-log").empty()
                             ? cs_cal::nccl_debug_file_name(env_or("NCCL_DEBUG_FILE", ""))
                             : options.text("nccl-log");
  if (!harness.reports()) log_path.clear();
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
       {"calls-scale", "1"},
       {"launch", "auto"},
       {"procs", "0"},
       {"rendezvous", ""},
       {"rendezvous-timeout-s", "120"}},
      setup);
}
