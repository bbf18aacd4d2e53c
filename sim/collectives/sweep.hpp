// An nccl-tests run in simulation: the size ladder (-b, -e, -f / -i), element types, and one row
// per size with time, algbw and busbw computed as nccl-tests computes them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/communicator.hpp"

namespace cs::coll {

struct DataType {
  std::string name;  // nccl-tests spelling: int8, uint8, int32, uint32, int64, uint64, half,
                     // float, double, bfloat16
  int size_bytes = 4;
};
std::optional<DataType> parse_dtype(std::string_view text);  // also fp16, bf16, fp32, fp64
std::string valid_dtypes();

// nccl-tests' ladder: from min to max multiplying by factor (> 1), or adding increment when
// increment > 0. Sizes are whole bytes.
std::vector<double> size_ladder(double min_bytes, double max_bytes, double factor,
                                double increment);

struct SweepRow {
  double bytes = 0;     // S after rounding to whole elements (and to whole blocks per rank)
  long long count = 0;  // elements, as nccl-tests prints them
  double time_us = 0;
  double algbw_GBps = 0;  // S / t
  double busbw_GBps = 0;  // algbw * busbw_factor(op, n)
  TunerChoice choice;
};

// Simulates each size alone. For all-gather, reduce-scatter and all-to-all, S is rounded down to
// a multiple of n elements (every rank holds the same count), elsewhere to whole elements.
std::vector<SweepRow> sweep(Communicator& comm, Op op, const std::vector<double>& sizes,
                            const DataType& dtype, const TunerOptions& options, Fidelity fidelity);

}  // namespace cs::coll
