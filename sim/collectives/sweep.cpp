// The simulated nccl-tests sweep.
#include "collectives/sweep.hpp"

#include <cctype>
#include <cmath>

#include "core/error.hpp"

namespace cs::coll {
namespace {

const DataType kTypes[] = {{"int8", 1},   {"uint8", 1},   {"int32", 4}, {"uint32", 4},
                           {"int64", 8},  {"uint64", 8},  {"half", 2},  {"float", 4},
                           {"double", 8}, {"bfloat16", 2}};

std::string lower(std::string_view s) {
  std::string out;
  for (char c : s) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

}  // namespace

std::optional<DataType> parse_dtype(std::string_view text) {
  std::string key = lower(text);
  if (key == "fp16" || key == "float16") key = "half";
  if (key == "bf16") key = "bfloat16";
  if (key == "fp32" || key == "float32") key = "float";
  if (key == "fp64" || key == "float64") key = "double";
  for (const DataType& t : kTypes) {
    if (t.name == key) return t;
  }
  return std::nullopt;
}

std::string valid_dtypes() {
  std::string out;
  for (const DataType& t : kTypes) out += (out.empty() ? "" : ", ") + t.name;
  return out + " (also fp16, bf16, fp32, fp64)";
}

std::vector<double> size_ladder(double min_bytes, double max_bytes, double factor,
                                double increment) {
  // Keys as the command line's long flags name them (-b/-e/-f: --minbytes/--maxbytes/--stepfactor).
  if (!(min_bytes >= 0)) throw InputError("key 'minbytes': -b must be >= 0");
  if (!(max_bytes >= min_bytes)) throw InputError("key 'maxbytes': -e must be >= -b");
  if (increment <= 0 && !(factor > 1))
    throw InputError("key 'stepfactor': -f must be > 1 (or give -i > 0)");
  std::vector<double> out;
  double s = std::floor(min_bytes);
  while (s <= max_bytes) {
    out.push_back(s);
    const double next = increment > 0 ? s + increment : std::floor(s * factor);
    if (next <= s) break;  // a ladder starting at 0 bytes has one rung under -f
    s = next;
    if (out.size() > 4096) throw InputError("key 'maxbytes': more than 4096 sizes from -b to -e");
  }
  return out;
}

std::vector<SweepRow> sweep(Communicator& comm, Op op, const std::vector<double>& sizes,
                            const DataType& dtype, const TunerOptions& options, Fidelity fidelity) {
  const int n = comm.layout().shape.n_ranks;
  const bool per_rank_blocks =
      op == Op::all_gather || op == Op::reduce_scatter || op == Op::all_to_all;
  const double unit = dtype.size_bytes * (per_rank_blocks ? n : 1);
  std::vector<SweepRow> rows;
  for (double s : sizes) {
    SweepRow row;
    row.bytes = std::floor(s / unit) * unit;
    row.count = static_cast<long long>(row.bytes / dtype.size_bytes);
    CollectiveCall call;
    call.op = op;
    call.bytes = row.bytes;
    call.options = options;
    const CollectiveResult r = simulate_alone(comm, call, fidelity);
    row.choice = r.choice;
    row.time_us = r.time_us();
    row.algbw_GBps = row.time_us > 0 ? row.bytes / (row.time_us * 1e3) : 0;
    row.busbw_GBps = row.algbw_GBps * busbw_factor(op, n);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace cs::coll
