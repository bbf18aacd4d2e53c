// Reading one measurement record (measurement_record.hpp): a reader that checks each key, and
// one function per record kind.
#include "calibration/measurements/measurement_record.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "calibration/measurements/json_reader.hpp"
#include "collectives/nccl/nccl_types.hpp"
#include "core/units.hpp"
#include "topology/parse/loader_names.hpp"

namespace cs::cal {
namespace {

using nlohmann::json;

// The fields of one record, with the location every error names.
class RecordReader {
 public:
  RecordReader(const json& record, SourceLoc loc) : record_(record), loc_(std::move(loc)) {}

  const json& at(const char* key) const {
    const auto it = record_.find(key);
    if (it == record_.end() || it->is_null()) fail(key, "missing");
    return *it;
  }
  std::string text(const char* key) const {
    const json& v = at(key);
    if (!v.is_string()) fail(key, "expected a string, got " + v.dump());
    return v.get<std::string>();
  }
  std::string text_or(const char* key, const std::string& fallback) const {
    return record_.contains(key) && !record_.at(key).is_null() ? text(key) : fallback;
  }
  // A finite number strictly above `above`.
  double number(const char* key, double above) const {
    const json& v = at(key);
    if (!v.is_number()) fail(key, "expected a number, got " + v.dump());
    const double d = v.get<double>();
    if (!std::isfinite(d) || !(d > above))
      fail(key, "expected a finite number above " + format(above) + ", got " + v.dump());
    return d;
  }
  // Bytes of one buffer: above 0 and at most `max_bytes`, the GPU's memory.
  double bytes(const char* key, double max_bytes) const {
    const double d = number(key, 0);
    if (d > max_bytes)
      fail(key, at(key).dump() + " bytes do not fit in the GPU's " +
                    std::to_string(static_cast<long long>(max_bytes)) +
                    " bytes of memory (node.gpus[0].memory_bytes, or 2^53 when not recorded)");
    return d;
  }
  // A measured time: above 0 and inside simulated time (kEndOfTimeSeconds, 9.2e12 us), so that
  // the simulator can predict the point it is compared with.
  double time_us(const char* key) const {
    const double d = number(key, 0);
    if (d >= kEndOfTimeSeconds * 1e6)
      fail(key,
           "expected a time below 9.2e12 us (simulated time ends there), got " + at(key).dump());
    return d;
  }
  int integer(const char* key, long long min, long long max) const {
    const json& v = at(key);
    if (!v.is_number_integer()) fail(key, "expected an integer, got " + v.dump());
    const long long i = v.get<long long>();
    if (i < min || i > max)
      fail(key, "expected an integer in " + std::to_string(min) + ".." + std::to_string(max) +
                    ", got " + v.dump());
    return static_cast<int>(i);
  }
  int integer_or(const char* key, int fallback) const {
    return record_.contains(key) && !record_.at(key).is_null() ? integer(key, 0, kMaxCount)
                                                               : fallback;
  }
  bool boolean(const char* key) const {
    const json& v = at(key);
    if (!v.is_boolean()) fail(key, "expected true or false, got " + v.dump());
    return v.get<bool>();
  }
  std::string one_of(const char* key, const std::vector<std::string>& valid) const {
    std::string v = text(key);
    if (std::find(valid.begin(), valid.end(), v) != valid.end()) return v;
    std::string list;
    for (const auto& s : valid) list += (list.empty() ? "" : ", ") + s;
    fail(key, "unknown value '" + v + "'; valid: " + list);
  }
  // Refuses a key outside `known`: the programs write a closed set per kind (calibrate/README.md),
  // so another is a typo, which would leave an optional field (`timing`) at its default in silence.
  void only(const std::string& kind, const std::vector<std::string>& known) const {
    for (const auto& [key, value] : record_.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      fail(key.c_str(), "unknown key in a " + kind + " record" +
                            topo::names::did_you_mean(key, known) + "; valid: " + list);
    }
  }
  [[noreturn]] void fail(const char* key, const std::string& message) const {
    throw InputError(loc_, key, message);
  }
  const SourceLoc& loc() const { return loc_; }

 private:
  static std::string format(double d) {
    std::ostringstream out;
    out << d;
    return out.str();
  }
  const json& record_;
  SourceLoc loc_;
};

NcclPoint read_nccl(const RecordReader& r, double max_bytes) {
  NcclPoint p;
  // Files from before gated timing have no field: they were host-paced.
  const std::string timing = r.text_or("timing", "host_paced");
  const std::optional<NcclTiming> t = parse_nccl_timing(timing);
  if (!t) r.fail("timing", "unknown value '" + timing + "'; valid: host_paced, gated");
  p.timing = *t;
  p.op = r.one_of("op", {"allreduce", "allgather", "reducescatter", "broadcast", "reduce",
                         "alltoall", "sendrecv"});
  p.n_ranks = r.integer("nranks", 1, kMaxCount);
  p.bytes = r.bytes("bytes", max_bytes);
  p.forced_algo = r.text("forced_algo");
  p.forced_proto = r.text("forced_proto");
  // A forced configuration the fitter cannot read would be dropped from the fit in silence.
  if (p.forced_algo != "default" && !coll::parse_algo(p.forced_algo))
    r.fail("forced_algo", "unknown value '" + p.forced_algo +
                              "'; valid: default or an NCCL_ALGO name: " + coll::valid_algos());
  if (p.forced_proto != "default" && !coll::parse_proto(p.forced_proto))
    r.fail("forced_proto", "unknown value '" + p.forced_proto +
                               "'; valid: default or an NCCL_PROTO name: " + coll::valid_protos());
  p.time_us = r.time_us("time_us");
  p.algo = r.text_or("algo", "");
  p.proto = r.text_or("proto", "");
  p.channels = r.integer_or("channels", 0);
  // How cs_cal_nccl started its ranks; files from before the field ran one process for all.
  p.launch = r.text_or("launch", "single_process");
  if (p.launch != "single_process" && p.launch != "process_per_gpu")
    r.fail("launch", "unknown value '" + p.launch + "'; valid: single_process, process_per_gpu");
  p.loc = r.loc();
  return p;
}

CopyPoint read_copy(const RecordReader& r, double max_bytes) {
  CopyPoint p;
  const std::string d = r.one_of("direction", {"h2d", "d2h", "d2d", "peer"});
  p.direction = d == "h2d"   ? CopyDirection::h2d
                : d == "d2h" ? CopyDirection::d2h
                : d == "d2d" ? CopyDirection::d2d
                             : CopyDirection::peer;
  p.memory = r.one_of("memory", {"pinned", "pageable", "device"});
  p.src = r.integer("src", -1, 1 << 16);
  p.dst = r.integer("dst", -1, 1 << 16);
  p.bidirectional = r.boolean("bidirectional");
  p.bytes = r.bytes("bytes", max_bytes);
  p.time_us = r.time_us("time_us");
  p.loc = r.loc();
  const bool host = p.direction == CopyDirection::h2d || p.direction == CopyDirection::d2h;
  if (host == (p.memory == "device")) r.fail("memory", "'" + p.memory + "' does not fit " + d);
  if ((p.direction == CopyDirection::h2d ? p.dst : p.src) < 0)
    r.fail(p.direction == CopyDirection::h2d ? "dst" : "src", "a copy needs its GPU");
  if (p.direction == CopyDirection::peer && (p.dst < 0 || p.dst == p.src))
    r.fail("dst", "a peer copy needs a second GPU, got " + std::to_string(p.dst));
  if (p.direction == CopyDirection::d2d && p.dst != p.src)
    r.fail("dst", "a device-local copy stays on GPU " + std::to_string(p.src) + ", got " +
                      std::to_string(p.dst));
  return p;
}

// The keys of each kind the fitter reads, as calibrate/README.md lists them: kind, time_us,
// repetitions and iterations, then the kind's own.
const std::map<std::string, std::vector<std::string>> kRecordKeys = {
    {"nccl", {"kind",         "time_us",      "repetitions", "iterations",
              "timing",       "op",           "nranks",      "bytes",
              "count",        "call_count",   "dtype",       "chunk_offset_elements",
              "forced_algo",  "forced_proto", "algbw_GBps",  "busbw_GBps",
              "algo",         "proto",        "channels",    "tuning_agree",
              "tuning_calls", "launch"}},
    {"copy",
     {"kind", "time_us", "repetitions", "iterations", "direction", "memory", "src", "dst",
      "bidirectional", "bytes", "bytes_moved", "GBps", "peer_access"}},
    {"launch", {"kind", "time_us", "repetitions", "iterations", "what", "device"}},
    {"gemm",
     {"kind", "time_us", "repetitions", "iterations", "dtype", "m", "n", "k", "shape", "flops",
      "tflops"}},
    {"membw",
     {"kind", "time_us", "repetitions", "iterations", "method", "bytes", "bytes_moved", "GBps",
      "device"}},
};

}  // namespace

void read_record(const json& record, const SourceLoc& loc, Measurements& out) {
  if (!record.is_object()) throw InputError(loc, "measurements", "a record must be an object");
  const RecordReader r(record, loc);
  // Byte counts are integers, which a double holds exactly up to 2^53.
  const double max_bytes = out.node.memory_bytes > 0 ? out.node.memory_bytes : 9007199254740992.0;
  const std::string kind = r.text("kind");
  const auto known = kRecordKeys.find(kind);
  if (known != kRecordKeys.end()) r.only(kind, known->second);
  if (kind == "nccl") {
    out.nccl.push_back(read_nccl(r, max_bytes));
  } else if (kind == "copy") {
    out.copies.push_back(read_copy(r, max_bytes));
  } else if (kind == "launch") {
    out.launches.push_back({r.text("what"), r.time_us("time_us"), loc});
  } else if (kind == "gemm") {
    GemmPoint g;
    g.dtype = r.text("dtype");
    g.shape = r.text_or("shape", "");
    g.m = r.integer("m", 1, 1 << 24);
    g.n = r.integer("n", 1, 1 << 24);
    g.k = r.integer("k", 1, 1 << 24);
    g.time_us = r.time_us("time_us");
    g.loc = loc;
    out.gemms.push_back(std::move(g));
  } else if (kind == "membw") {
    out.membw.push_back({r.bytes("bytes", max_bytes), r.time_us("time_us"), loc});
  }
  // Other kinds are newer measurements this fitter does not use.
}

}  // namespace cs::cal
