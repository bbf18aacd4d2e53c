// How NCCL splits point-to-point traffic (send/recv, all-to-all) over channels: the channel
// counts of init.cc (ncclTopoComputeP2pChannels) and enqueue.cc (scheduleP2pTasksToPlan,
// addP2pToPlan), as pure functions of the communicator shape and the bytes per peer.
#pragma once

#include <vector>

#include "collectives/nccl/nccl_params.hpp"

namespace cs::coll {

struct P2pChannels {
  int comm_channels = 0;  // p2pnChannels: pow2Up(min(comm channels, p2p_max_channels))
  int per_peer_max = 0;   // p2pnChannelsPerPeer: pow2Up(min(that, per-peer topology figure))
  int per_peer_min = 0;   // per_peer_max halved while per_peer_min * nRanks > comm_channels
};

// The communicator-wide figures, from the channels the communicator runs (graph x multiplier).
P2pChannels p2p_channels(int comm_channels, int n_ranks, int n_nodes, const NcclParams& params);

// LL's step, bytes: NCCL's LL buffer (init.cc DEFAULT_LL_BUFFSIZE: 8 lines per thread x 512
// threads x NCCL_STEPS 8 x 16-byte lines = 512 KiB) over its NCCL_STEPS slots. A Simple p2p
// step is the p2p chunk (NCCL_P2P_NVL_CHUNKSIZE / NCCL_P2P_NET_CHUNKSIZE).
inline constexpr double p2p_ll_step_bytes = 512.0 * 1024 / 8;

// Channels one send (or receive) of `bytes` to one peer is striped over, addP2pToPlan, with
// step = the protocol's step (above):
//   min part = step / 8, max part = step * 32 on one node (step / 2 and step across nodes),
//   nc = min(per_peer_min, ceil(bytes / min part)); while max(min part, bytes / nc) > max part
//   and nc <= per_peer_max / 2: nc *= 2. Zero bytes still take one channel. An LL send of
// 128 KiB on one node thus takes 16 channels where a Simple one would take 2.
int p2p_part_channels(double bytes, const P2pChannels& ch, int n_nodes, Proto proto,
                      const NcclParams& params);

// Whether that send runs LL rather than Simple: addP2pToPlan's threshold is
// p2pnChannelsPerPeer x NCCL_P2P_LL_THRESHOLD (`per_peer_channels`: P2pChannels::per_peer_max),
// whatever channel count the send itself gets: 32 x 16 KiB = 512 KiB per peer on 2-4 H200s.
bool p2p_uses_ll(double bytes, int per_peer_channels, const NcclParams& params);

// The pipeline's fill, us. A channel moves its part of a Simple send (bytes / part channels)
// through NCCL's buffer one chunk at a time (`chunk_bytes`: NCCL_P2P_NVL_CHUNKSIZE on NVLink,
// "P2P Chunksize set to 524288" in the H200 logs), a copy into the slot and one out of it. While
// chunks follow each other the two copies overlap and the channel runs at its copy rate
// (p2p_send_GBps); the last chunk's second copy has nothing to overlap, and every busy channel
// (`sends` x part channels) makes it at the same moment, sharing one GPU-wide rate `fill_GBps`:
//   fill = sends x part channels x min(part, chunk) / fill_GBps.
// A part of one chunk never overlaps at all, so a send of a few MiB is slower per byte than a
// large one. 0 when `fill_GBps` is 0 (no such figure: NCCL's own model has none).
double p2p_fill_us(double bytes, int part_channels, int sends, double chunk_bytes,
                   double fill_GBps);

// Whether a send pays that fill: Simple over NVLink on one server (the path whose chunk and fill
// rate were measured).
bool p2p_fills(int n_nodes, LinkClass intra, Proto proto);

// Whether NCCL copies a rank's sends with 16-byte packs. All-to-all's send to peer p starts at
// p x S / n in the send buffer and lands at r x S / n in the receive buffer, so a per-peer chunk
// that is not a multiple of 16 bytes misaligns (nearly) every pair; send/recv starts at offset 0.
// Pairs of even ranks with a chunk of 8 mod 16 would stay aligned; they are counted as
// misaligned too, since one flow stands for all ranks' sends.
bool p2p_aligned(Op op, double bytes, int n_ranks);

// LL stores each 8 bytes of data with an 8-byte flag in one 16-byte line (NCCL's
// src/device/prims_ll.h; sim/collectives/README.md, "NCCL's figures"): an LL send moves its data
// at this fraction of a channel's Simple rate.
inline constexpr double p2p_ll_data_fraction = 0.5;

// The rate of one send in channels' worth of the per-channel rate: its rate channels, halved for
// LL (p2p_ll_data_fraction).
double p2p_protocol_channels(double rate_channels, Proto proto);

// Sends one rank has in flight at once: n - 1 for all-to-all, 1 for send/recv.
int p2p_sends(Op op, int n_ranks);

// The copy rate of one send, in channels' worth: its part channels, but no more than its share
// of the communicator's p2p channels when several sends are striped over them (the parts on one
// channel share its thread block).
double p2p_rate_channels(int part_channels, int sends, int comm_channels);

// reduceCopy (NCCL src/device/common_kernel.h) moves 16-byte packs only when every source and
// destination pointer is 16-byte aligned, and packs of one element otherwise: 4 of 16 bytes per
// load for floats (nccl-tests' type and ours). Where no calibration says better, a misaligned
// channel is taken to copy at this fraction of the aligned rate, as if bound by its loads.
inline constexpr double p2p_pack_width_ratio = 4.0 / 16.0;

// One send's rate, GB/s, from its rate channels (p2p_rate_channels): LL at its own per-channel
// rate (NcclParams::p2p_ll_per_channel_GBps; without one, p2p_ll_data_fraction of
// `per_channel_GBps`); Simple at `per_channel_GBps`, or, misaligned (not `full_packs`), at the
// misaligned rate, the GPU's misaligned sends sharing its misaligned cap.
double p2p_send_GBps(double rate_channels, Proto proto, double per_channel_GBps, bool full_packs,
                     int sends, const NcclParams& params);

// Point-to-point across servers, through NCCL's network proxy. Read off the published Azure NDmv4
// all-to-all sets (calibrate/published/multinode.yaml, role fit; HDR InfiniBand, NCCL 2.17):
// - the wire: 2 x 8 GPUs at 1 GiB and 4 GiB ran at 0.841 and 0.841 of the time this model gives
//   with every byte at the NICs' rate (busbw 37.80 and 37.81 GB/s), where all-reduce and
//   all-gather on the same servers reach it (1.4-6.1 %): a p2p byte costs 1 / 0.84 bytes of a
//   NIC's time. The AWS p5 all-to-all check sets (EFA, 2-32 servers) fall on the same fraction
//   from 512 MiB up (0.81-0.86), never fitted;
// - each further peer on another server: 2 x 8 GPUs at 1 KiB took 49.75 us, 2 x 1 GPU 29.84 us
//   (one remote peer); the 7 more remote peers cost (49.75 - 29.84) / 7 = 2.84 us each, the
//   proxy posting and progressing each peer's connections in turn (the 7 more local peers cost
//   next to nothing: one server of 8 takes 9.34 us). The p5 check sets' fixed cost grows by 2.4
//   us per remote peer from 16 to 256 ranks.
inline constexpr double p2p_net_wire_efficiency = 0.84;
inline constexpr double p2p_net_peer_latency_us = 2.84;

// Peers of one rank on other servers (n / nodes ranks per server): all-to-all n - n / nodes;
// send/recv's two neighbours (one on two ranks), both remote with one GPU per server, else one.
int p2p_remote_peers(Op op, int n_ranks, int n_nodes);

// Distinct peers one rank sends to or receives from: nccl-tests' sendrecv sends to rank + 1 and
// receives from rank - 1 (one peer on two ranks, two beyond); all-to-all reaches n - 1.
int p2p_peers(Op op, int n_ranks);

// All-to-all as shifts: at distance d every rank sends to rank + d. Up to `exact_ranks` ranks every
// distance is its own flow (weight 1). Beyond, listing n - 1 distances of n sends each would take
// n^2 routes, so the distances at which every send leaves its server (server_gpus <= d <= n -
// server_gpus: each rank's peer is on another server) are merged into `groups` runs of consecutive
// distances, each sent at its middle distance with the run's length as weight (bytes and rate
// scaled by it). Exact: every byte, and what each GPU's NICs and server links carry. Approximated:
// how the cross-server traffic of a run spreads over the fabric's spines and cores (as its
// middle distance's pattern). Distances that keep some peers inside a server stay exact.
struct ShiftGroup {
  int distance = 0;
  int weight = 1;  // distances it stands for
};
std::vector<ShiftGroup> alltoall_shifts(int n_ranks, int server_gpus, int exact_ranks, int groups);

}  // namespace cs::coll
