// The raw measurements of one calibrated machine as plain structs: every record of every
// "clustersim-calibration-v1" JSON file in a folder (calibrate/README.md describes the format),
// typed by kind (nccl, copy, launch, gemm, membw), each remembering the file and line it came from.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/measurements/node_host.hpp"
#include "core/error.hpp"

namespace cs::cal {

// How an NCCL record was timed (calibrate/README.md, field `timing`). host_paced: one host thread
// launches every rank's kernels each call, as nccl-tests does (files without the field); gated:
// every call queued behind a spinning kernel and released together (sizes <= 16 MiB only).
enum class NcclTiming { host_paced, gated };
const char* to_string(NcclTiming timing);
// "host_paced" / "gated"; nullopt for anything else.
std::optional<NcclTiming> parse_nccl_timing(std::string_view text);

// One NCCL collective timing (nccl-tests conventions: `bytes` is the full buffer S).
struct NcclPoint {
  NcclTiming timing = NcclTiming::host_paced;
  std::string op;  // allreduce, allgather, reducescatter, broadcast, alltoall, sendrecv
  int n_ranks = 0;
  double bytes = 0;
  std::string forced_algo;   // "default" or NCCL_ALGO lower-cased: ring, tree
  std::string forced_proto;  // "default" or NCCL_PROTO as given: LL, LL128, Simple
  double time_us = 0;        // median over repetitions of the mean over back-to-back calls
  std::string algo;          // what NCCL's TUNING log says it chose ("" when not logged)
  std::string proto;
  int channels = 0;  // 0 when not logged
  // How cs_cal_nccl started the ranks: "single_process" (ncclCommInitAll) or "process_per_gpu".
  std::string launch = "single_process";
  // The run's NCCL_NVLS_ENABLE (the file's `env`); nullopt: unset, NCCL's default.
  std::optional<bool> nvls;
  SourceLoc loc;

  bool is_default() const { return forced_algo == "default" && forced_proto == "default"; }
  // "default", or the forced "algo/proto" ("ring/LL").
  std::string config() const { return is_default() ? "default" : forced_algo + "/" + forced_proto; }
};

enum class CopyDirection { h2d, d2h, d2d, peer };
const char* to_string(CopyDirection direction);

struct CopyPoint {
  CopyDirection direction = CopyDirection::h2d;
  std::string memory;  // pinned, pageable (host side) or device
  int src = -1;        // GPU index, -1 for host memory
  int dst = -1;
  bool bidirectional = false;  // peer copies: both ways at once, `bytes` each way
  double bytes = 0;            // per copy, one way
  double time_us = 0;          // per copy (per pair of copies when bidirectional)
  SourceLoc loc;
};

struct LaunchPoint {
  std::string what;  // kernel_launch, launch_call, launch_latency, event_sync
  double time_us = 0;
  SourceLoc loc;
};

struct GemmPoint {
  std::string dtype;  // bf16, fp16, tf32
  std::string shape;  // where training meets it ("mlp_up h=4096 T=2048", "square")
  int m = 0, n = 0, k = 0;
  double time_us = 0;
  SourceLoc loc;

  double flops() const { return 2.0 * m * n * k; }
};

// A device-memory copy kernel: `bytes` read and `bytes` written.
struct MembwPoint {
  double bytes = 0;
  double time_us = 0;
  SourceLoc loc;
};

// What the files say about the machine (from the first file that has a "node").
struct NodeInfo {
  std::string hostname;
  std::string gpu_name;  // of GPU 0
  int gpu_count = 0;
  long long nccl_version = 0;  // NCCL_VERSION_CODE, e.g. 22809
  std::string cuda_runtime_version;
  double l2_cache_bytes = 0;  // of GPU 0 (0 when not recorded)
  double memory_bytes = 0;    // of GPU 0 (0 when not recorded): no measured buffer is larger
  SourceLoc loc;              // where GPU 0's name was read
};

struct Measurements {
  std::string folder;
  std::vector<std::string> files;  // the JSON files read, sorted
  // Those of `files` that are the fitter's own output (calibration.json beside the measurements),
  // skipped: no record comes from them, and `fit -o` may replace them.
  std::vector<std::string> fitted_files;
  NodeInfo node;
  std::vector<NcclPoint> nccl;
  std::vector<CopyPoint> copies;
  std::vector<LaunchPoint> launches;
  std::vector<GemmPoint> gemms;
  std::vector<MembwPoint> membw;
  // Host probes in the folder (calibrate/host/host_probe.py), in file order.
  std::vector<NodeHost> hosts;
};

// Reads every *.json file of `folder` (sorted by name, so the result is the same on every run).
// A file that is not valid JSON, has another schema, or a record missing a key or holding a bad
// value throws InputError "file:line: key 'k': what is wrong". Records of unknown kinds are
// skipped.
Measurements read_measurements(const std::string& folder);

// One file's records appended to `out` (exposed for tests).
void read_measurement_text(const std::string& text, const std::string& file_name,
                           Measurements& out);

}  // namespace cs::cal
