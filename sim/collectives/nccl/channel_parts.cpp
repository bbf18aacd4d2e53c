// How many channels and threads NCCL gives a collective (channel_parts.hpp).
#include "collectives/nccl/channel_parts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace cs::coll {
namespace {

using Count = std::int64_t;

Count div_up(Count a, Count b) {
  return (a + b - 1) / b;
}

// enqueue.cc ncclFuncTrafficPerByte.
Count traffic_per_byte(Op op, int n_ranks) {
  switch (op) {
    case Op::all_reduce:
      return 2;
    case Op::all_gather:
    case Op::reduce_scatter:
      return n_ranks;
    default:
      return 1;
  }
}

}  // namespace

ChannelShrink nccl_channel_shrink(Algo algo, Proto proto, double bytes, int n_ranks,
                                  int comm_channels, const NcclParams& params) {
  const int ip = index_of(proto);
  ChannelShrink out{comm_channels, params.max_threads[ip]};
  if (algo == Algo::nvls || algo == Algo::nvls_tree) return out;
  double threshold = params.thread_threshold[ip];
  if (algo == Algo::ring && proto == Proto::ll) threshold *= n_ranks;
  while (bytes < static_cast<double>(out.channels) * out.threads * threshold) {
    if (out.channels >= 2) {
      --out.channels;
    } else if (out.threads % 128 == 0) {
      out.threads /= 2;
    } else {
      break;
    }
  }
  return out;
}

int nccl_channel_count(Op op, Proto proto, double bytes, int n_ranks, int task_channels,
                       int comm_channels, int element_bytes) {
  const bool per_rank = op == Op::all_gather || op == Op::reduce_scatter;
  const int elem = op == Op::all_gather || op == Op::broadcast ? 1 : std::max(element_bytes, 1);
  const Count count = static_cast<Count>(std::floor((per_rank ? bytes / n_ranks : bytes) / elem));
  if (count <= 0 || comm_channels <= 1) return 1;
  constexpr Count kMinTrafficPerChannel = 16 << 10;
  const Count per_byte = traffic_per_byte(op, n_ranks) * (proto == Proto::ll ? 4 : 1);
  const Count traffic = std::max(kMinTrafficPerChannel, count * elem * per_byte);
  const Count channels = std::clamp(task_channels, 1, comm_channels);
  const Count per_channel = std::max(kMinTrafficPerChannel, traffic / channels);
  const Count cell = div_up(div_up(kMinTrafficPerChannel, per_byte), 16) * 16;
  const Count cells = div_up(count * elem, cell);
  const Count cells_per_channel = std::min(cells, div_up(per_channel, cell * per_byte));
  // Channel 0 of an empty plan takes cells_per_channel too; then whole channels, then the rest.
  const Count rest = cells - cells_per_channel;
  const Count wanted = 1 + rest / cells_per_channel + (rest % cells_per_channel != 0 ? 1 : 0);
  return static_cast<int>(std::min<Count>(wanted, comm_channels));
}

}  // namespace cs::coll
