// CollNet: NCCL's all-reduce with the reduction done in the network's switches (SHARP on NVIDIA
// Quantum InfiniBand; NCCL talks to it through its SHARP plugin). NCCL runs it only where asked
// (NCCL_COLLNET_ENABLE=1, default 0: TunerOptions::collnet), the plugin reports collective support
// (here: the fabric's `sharp: true`, CommShape::sharp) and the communicator spans 2 servers or
// more (NCCL_COLLNET_NODE_THRESHOLD). Then three algorithms enter NCCL's choice (tuning.cc, NCCL
// 2.28), all-reduce and Simple only:
//   CollNetDirect: every GPU of a server reduce-scatters over NVLink to the heads (one per GPU
//     with its NIC, at most 8), each head's share goes up to the switches and the sum comes back,
//     then the server all-gathers it. NVSwitch servers only. busBw = channels x bwIntra /
//     (f - (f - 1) / 2), f = GPUs / channels, x 0.85 from sm90; latency 2 (min(1, ppn - 1) x
//     intra hop + (ppn - 1) x 0.4 us) + network hop (31 us).
//   CollNetChain: a chain inside the server reduces to its head, whose NIC sends the server's sum
//     up and brings the total back down the chain. busBw = channels x bwIntra; latency 2 (ppn - 1)
//     x intra hop (2.8 us) + network hop (30 us).
//   NVLS across servers (NVLS with CollNet): the NVSwitch reduces inside the server, every GPU is
//     a head for its share across the switches. busBw = channels x min(2 bwIntra x 0.85 x
//     (ch - 1) / ch, bwInter); latency NVLS's 25 + 18 us.
// CollNet's algbw is busBw / 2 (NVLS: x n / nsteps). No published measurement of CollNet was found
// to check these against: the choice is NCCL's formulas, the time the flows of
// collectives/communicator.cpp.
#pragma once

#include "collectives/tuner/tuner.hpp"

namespace cs::coll {

// Whether CollNet may run: the option, a fabric that reduces, 2 servers or more.
bool collnet_enabled(const CommShape& shape, const TunerOptions& options);

// Whether NCCL considers CollNetDirect or CollNetChain for `op` with `proto` (false for other
// algorithms).
bool collnet_applicable(const CommShape& shape, Op op, Algo algo, Proto proto,
                        const TunerOptions& options);

// NCCL's busBw of a CollNet algorithm from its graph's channels x bwIntra (`bus`).
double collnet_bus_GBps(const CommShape& shape, Algo algo, double bus);

// NCCL's latency of a CollNet algorithm beyond its base, from the intra-server and network hops.
double collnet_latency_us(const CommShape& shape, Algo algo, double intra_hop_us,
                          double net_hop_us);

}  // namespace cs::coll
