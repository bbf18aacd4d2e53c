// How NCCL splits point-to-point traffic (send/recv, all-to-all) over channels: the channel
// counts of init.cc (ncclTopoComputeP2pChannels) and enqueue.cc (scheduleP2pTasksToPlan,
// addP2pToPlan), as pure functions of the communicator shape and the bytes per peer.
#pragma once

#include "collectives/nccl_params.hpp"

namespace cs::coll {

struct P2pChannels {
  int comm_channels = 0;  // p2pnChannels: pow2Up(min(comm channels, p2p_max_channels))
  int per_peer_max = 0;   // p2pnChannelsPerPeer: pow2Up(min(that, per-peer topology figure))
  int per_peer_min = 0;   // per_peer_max halved while per_peer_min * nRanks > comm_channels
};

// The communicator-wide figures, from the channels the communicator runs (graph x multiplier).
P2pChannels p2p_channels(int comm_channels, int n_ranks, int n_nodes, const NcclParams& params);

// Channels one send (or receive) of `bytes` to one peer is striped over, addP2pToPlan:
//   min part = chunk / 8, max part = chunk * 32 on one node (chunk / 2 and chunk across nodes),
//   nc = min(per_peer_min, ceil(bytes / min part)); while max(min part, bytes / nc) > max part
//   and nc <= per_peer_max / 2: nc *= 2. Zero bytes still take one channel.
int p2p_part_channels(double bytes, const P2pChannels& ch, int n_nodes, const NcclParams& params);

// Whether that send runs LL (bytes <= channels x NCCL_P2P_LL_THRESHOLD) rather than Simple.
bool p2p_uses_ll(double bytes, int part_channels, const NcclParams& params);

// Distinct peers one rank sends to or receives from: nccl-tests' sendrecv sends to rank + 1 and
// receives from rank - 1 (one peer on two ranks, two beyond); all-to-all reaches n - 1.
int p2p_peers(Op op, int n_ranks);

}  // namespace cs::coll
