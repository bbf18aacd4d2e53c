// The time side of a call's latency across servers, kept apart from NCCL's choice: NCCL's tuner
// prices a network hop with its own constants (tuner.hpp), whatever the transport; the call then
// runs at the transport's pace. A network step costs the fabric link's `step_latency` (one small
// message GPU to remote GPU: NIC, switches, proxy, transport software; priors per kind in
// topology/parse/loader_link_types.cpp), plus what NCCL's constants charge the protocol beyond LL
// on the network (Simple's and LL128's larger chunks, fences and the GDR flush). Steps are counted
// on the call's critical path, which is not always the count NCCL's formula uses:
//   Ring over n ranks on N servers (ppn each, N network edges): the last chunk of s steps crosses
//     s consecutive ring edges; the worst window holds floor(s / n) * N + min(N, ceil((s mod n) /
//     ppn)) network edges (all-reduce s = 2(n-1), all-gather / reduce-scatter n-1).
//   Broadcast / reduce chains cross N-1 network edges; Tree all-reduce 2 log2(N) (up and down),
//   as NCCL counts; PAT log2(N); point-to-point one.
// On one server, or where the shape carries no transport figure, the latency is NCCL's estimate.
#pragma once

#include "collectives/tuner/tuner.hpp"

namespace cs::coll {

// floor(log2(n)) for n >= 1: the network levels of NCCL's double binary tree over n servers.
int log2_floor(int n);

// Network edges on the critical path of a ring of n ranks over `nodes` servers (ranks spread
// evenly), for s steps.
int ring_network_steps(int steps, int n_ranks, int nodes);

// A ring step inside a server of a multi-server ring: its hop latency `intra_lat`, but at least
// NCCL's network post overhead (tuning.cc getNetOverhead; x 3 for Simple), as NCCL's estimate
// charges it (the choice's side only). One server: intra_lat.
double ring_step_floor(const CommShape& shape, Proto proto, const NcclParams& params,
                       double intra_lat);

// The latency the call takes, us.
double run_latency_us(const CommShape& shape, Op op, const TunerChoice& choice,
                      const NcclParams& params);

// NCCL's NVLSTree chunk for a `bytes` all-reduce over `nodes` servers with `concurrent_ops`
// (channels x heads) working at once (enqueue.cc calcCollChunking, NCCL 2.28): NCCL_NVLS_CHUNKSIZE
// (128 KiB), at most 64 KiB from 4 servers (NCCL_NVLSTREE_MAX_CHUNKSIZE); then 256 KiB below
// 32 x ops x chunk, 128 KiB below 16 x ops x chunk, 64 KiB below 4 x ops x chunk, 32 KiB below
// ops x chunk. On p5 / p5e aws-ofi-nccl sets both variables to 512 KiB (`platform`).
double nvls_tree_chunk_bytes(double bytes, int nodes, int concurrent_ops,
                             OfiPlatform platform = OfiPlatform::none);

// The pipeline fill of an NVLSTree all-reduce across servers, us. Each (channel, head) moves its
// share in loops of one chunk; a chunk passes three stages of the kernel in turn (the child's
// switch reduce and send up, the root's combine and send down, the child's multicast), so the
// call takes two loop-times beyond its rate, plus the two network steps the chunk crosses (up
// and down). A loop is nvls_channels x heads x chunk bytes at the call's rate `algbw_GBps`.
// Zero on one server or for another algorithm.
double nvls_tree_fill_us(const CommShape& shape, Op op, Algo algo, double bytes, double algbw_GBps,
                         const NcclParams& params);

// NCCL's chunk for a Tree LL128 all-reduce of `bytes` over `ranks` ranks on `nodes` servers and
// `channels` channels (enqueue.cc calcCollChunking, NCCL 2.28): an LL128 step's data, 576000 B
// (4915200 B of buffer / 8 steps x 15/16), halved while bytes / (channels x chunk) is below
// (1 + log2(nodes) + ppn / 10) x 64 / ppn and the chunk is above 128 KiB, then while below
// x 16 / ppn and above 32 KiB; then rounded down to LL128's grain (1920 B).
double tree_ll128_chunk_bytes(double bytes, int ranks, int nodes, int channels);

// Network connections the busiest GPU of a server serves in one loop of NCCL's Tree kernel
// (trees.cc ncclGetBtree, connect.cc, all_reduce.h runTreeSplit): NCCL searches the tree graph
// with its balanced pattern (init.cc, NCCL_TOPO_PATTERN_BALANCED_TREE), which puts a server's
// parent and second child on the chain's first GPU and its first child on the second GPU. The
// root's single loop receives from its one child server and sends the sum back (2); a middle
// server's first GPU serves its parent and second child in each of the reduce-up and
// broadcast-down thread groups (2), its second GPU the first child (1). So 2 from 2 servers up;
// one server: 0.
int tree_head_net_connections(int nodes);

// LL128 across servers: a chunk on a network connection costs the GPU serving it a fixed
// `params.ll128_net_chunk_us` beyond its bytes' time (read off the published pairs' Tree LL128
// points, collectives/nccl/nccl_params.cpp). NCCL keeps LL128's (and Simple's) network buffers in
// GPU memory where the NIC reads and writes them directly (GDR), LL's in host memory (net.cc);
// which part of the step's round between kernel, proxy and NIC the fixed time is, no public trace
// of a multi-server run shows. LL is not charged (its rings and trees across servers keep their
// times without it), nor Simple, where no fit point asks for it (the p4de pair's Tree Simple at 512
// MiB - 2 GiB, 5-9 % fast, would run 5-9 % slow with it, chunks of 512 KiB).

// Tree LL128 all-reduce across servers, us: every chunk after the first costs the busiest GPU
// `params.ll128_net_chunk_us` per network connection; loops of channels x chunk bytes
// (tree_ll128_chunk_bytes). Zero for another algorithm, protocol or op, and on one server.
double tree_net_chunk_us(const CommShape& shape, Op op, const Estimate& estimate, double bytes,
                         int channels, const NcclParams& params);

// A ring across servers moves one chunk per channel and step through every network connection
// in lockstep, so under LL128 each step takes at least `params.ll128_net_chunk_us` (the floor of
// run_latency_us's per-step latencies, intra-server and network steps alike). Zero for another
// protocol and on one server.
double ll128_net_step_floor(const CommShape& shape, Proto proto, const NcclParams& params);

// What a call's pipelines add to its latency: NVLSTree's fill and Tree LL128's chunks, us.
double tree_pipeline_us(const CommShape& shape, Op op, const TunerChoice& choice, double bytes,
                        const NcclParams& params);

}  // namespace cs::coll
