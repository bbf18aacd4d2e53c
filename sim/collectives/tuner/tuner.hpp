// NCCL's tuner as a pure function: predict every enabled (algorithm, protocol) for a collective on
// a communicator of a given shape, pick the fastest (or what NCCL_ALGO / NCCL_PROTO force), and
// shrink the channel count for small messages as NCCL's enqueue does.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collectives/nccl/channel_search.hpp"
#include "collectives/nccl/nccl_params.hpp"
#include "collectives/tuner/ofi_tuner.hpp"

namespace cs::coll {

// What the tuner needs to know of a communicator.
struct CommShape {
  int n_ranks = 1;
  int n_nodes = 1;
  LinkClass intra = LinkClass::nvlink;  // nvlink when every intra-server path is NVLink-only
  bool nvswitch = false;                // the GPUs of a server meet on an NVSwitch
  bool multicast =
      false;             // ... with multicast (NVLS possible): topology `multicast`, sm90 or newer
  bool amd_cpu = false;  // the servers' CPUs are AMD (NCCL's multi-node LL cap, net overhead)
  GraphInfo ring;
  GraphInfo tree;
  GraphInfo nvls;
  // CollNet (collnet.hpp): the servers hang on a fabric whose switches reduce (SHARP, topology
  // `sharp: true`), their GPUs are sm90 or newer (NCCL's CollNetDirect refinement), and NCCL's
  // CollNet graphs: CollNetDirect one head per GPU, CollNetChain the tree's with the ring's
  // channel count (init.cc).
  bool sharp = false;
  bool sm90 = false;
  GraphInfo collnet_direct;
  GraphInfo collnet_chain;
  // The time side (transport.hpp), never read by the choice: one network step of the fabric's
  // transport, us (0: NCCL's own hop figures, as on one server).
  double net_step_latency_us = 0;
  // The choice side: what NCCL's network plugin reports as its latency, us
  // (collectives/comm_layout.hpp), and the platform of aws-ofi-nccl's tuner, which overrides NCCL's
  // choice (ofi_tuner.hpp).
  double net_plugin_latency_us = 0;
  OfiPlatform ofi_tuner = OfiPlatform::none;
};

// Which algorithms and protocols may be used (bit i = index_of(...)): NCCL_ALGO / NCCL_PROTO.
struct TunerOptions {
  unsigned algo_mask = (1u << kAlgoCount) - 1;
  unsigned proto_mask = (1u << kProtoCount) - 1;
  // NCCL_NVLS_ENABLE: unset follows NCCL's default, on wherever the servers support it
  // (CommShape::multicast); false turns NVLS and NVLSTree off; true cannot add what the hardware
  // lacks.
  std::optional<bool> nvls;
  // The NCCL release whose choice to follow, as NCCL_VERSION_CODE (2.24.3 = 22403); 0: the
  // release of the priors (2.28.9). Earlier releases priced NVLS and NVLSTree differently
  // (nccl_release.hpp).
  int nccl_version = 0;
  // NCCL_COLLNET_ENABLE: unset is NCCL's default, off; true lets CollNet run where the fabric
  // reduces in its switches (CommShape::sharp) and the communicator spans 2 servers or more.
  std::optional<bool> collnet;
};

// Whether NVLS (one server) and NVLSTree (several) may run: the hardware and the option.
bool nvls_enabled(const CommShape& shape, const TunerOptions& options);

// One row of NCCL's prediction table.
struct Estimate {
  Algo algo = Algo::ring;
  Proto proto = Proto::simple;
  double latency_us = 0;        // including the size-dependent ring plateau factor
  double plateau_factor = 1.0;  // that factor where it applied, else 1
  double bus_bw_GBps = 0;       // after the per-algorithm refinements, before the algbw conversion
  double algo_bw_GBps = 0;
  double time_us = 0;  // latency + bytes / algbw
};

// The decision for one call.
struct TunerChoice {
  Estimate estimate;
  int graph_channels = 0;  // channels of the algorithm's graph (what the estimate reads)
  int comm_channels = 0;   // channels the communicator runs: the graph's, duplicated
  int n_channels = 0;      // channels this call uses: the shrink, then NCCL's division
  int n_threads = 0;
  bool p2p = false;  // all-to-all and send/recv: NCCL's point-to-point path, no tuner
  // What the call's latency is when it runs (transport.hpp): the estimate's on one server.
  double run_latency_us = 0;
};

// Every enabled (algo, proto) for `op` moving `bytes` (nccl-tests' S: the full buffer, the
// gathered size for all-gather / reduce-scatter), in (algo, proto) order. Formulas, with
// n ranks on N nodes, ppn = n / N, nsteps = 2(n-1) (all-reduce), n-1 (all-gather,
// reduce-scatter), n (broadcast, reduce):
//   busBw = nChannels * (N <= 2 ? bwIntra : bwInter), then Ring LL min(llMax, busBw * effLL),
//   Ring LL128 min(busBw * effLL128, nCh * perChLL128), Tree all-reduce min(busBw * effTree,
//   nCh * perChTree), Tree LL min(busBw * effTreeLL, llMax), Tree LL128 min(busBw * eff, nCh *
//   perChTreeLL128), PAT busBw * effPat, NVLS 2 * busBw * effNvls * (nCh-1)/nCh;
//   algbw = busBw * n / nsteps (Ring, NVLS), busBw / 2 (Tree), busBw (PAT);
//   latency: Ring base + (nsteps - interSteps) * intraHop + interSteps * netHop, interSteps =
//   2(N-1) for all-reduce else N-1 (0 on one node); Tree base + 2((ppn-1) intraHop + log2(N)
//   netHop); NVLS intraHop (+ netHop across nodes); PAT base + log2(N) netHop / div + n * perRank.
//   With ppn = 1 the network hop is Tree's; the plugin's latency is added to it (twice for Simple).
//   Multi-node Ring Simple all-reduce latency is multiplied by the plateau factor when bytes / (nCh
//   * n) >= plateau bytes. Tree all-reduce's algbw is scaled by NCCL's tree correction for the size
//   (tuning.cc treeCorrectionFactor, 0.4-1 from 64 B to 256 MiB): NCCL's time estimate, which its
//   choice uses; the chosen call is timed without it (choose()).
// NVLSTree (all-reduce, Simple, several servers): per channel min(2 bwIntra effNvls (nCh-1)/nCh,
//   bwInter (x 2 on 2 servers), perChMaxNVLSTree), algbw = busBw * n / nsteps, latency base +
//   intraHop + 2 log2(N) netHop. With an earlier release's choice (TunerOptions::nccl_version):
//   before 2.28 NVLS per channel min(bwIntra, bwInter), NVLSTree min(bwIntra, bwInter, halved
//   from 3 servers), algbw = busBw x 5/6 for both; before 2.28.9 NVLSTree's netHop is 14 us.
std::vector<Estimate> estimate_all(const CommShape& shape, Op op, double bytes,
                                   const NcclParams& params, const TunerOptions& options);

// The fastest enabled estimate of NCCL's table (ties: first in (algo, proto) order), timed without
// NCCL's tree correction, on the communicator's channels (graph x multiplier; NVLS its own),
// shrunk for small messages and then cut to those NCCL's cells fill
// (collectives/nccl/channel_parts.hpp nccl_channel_shrink, nccl_channel_count). NVLS keeps its
// channels. All-to-all and send/recv return a p2p choice (collectives/nccl/p2p_plan.hpp):
// n_channels = the channels one peer's send is striped over (bytes per peer: S / n for all-to-all,
// S for send/recv), busBw = p2p_send_GBps (those channels, capped at the send's share of the p2p
// channels, x the p2p per-channel rate, LL at its own; misaligned Simple sends at the misaligned
// rate and cap), one peer's send; LL when that send is at most p2pnChannelsPerPeer x the LL
// threshold;
// latency over NVLink p2p_nvlink_latency_us where set, else Ring Simple base + one hop of the
// path's class, + the extra-peer latency for each peer a rank reaches beyond the first. Throws
// InputError when the options leave nothing.
TunerChoice choose(const CommShape& shape, Op op, double bytes, const NcclParams& params,
                   const TunerOptions& options);

// NCCL's decision kept apart from its time: the algorithm, protocol, channels and threads are what
// NCCL picks with its own constants (`nccl`, on the shape its graph search sees: `nccl_shape`),
// whatever the real times are; the chosen configuration is then timed with the simulator's
// constants (`params`, a calibration's or the priors, on `shape`): its estimate (latency, bus
// and algorithm bandwidth; for p2p one peer's send) and run latency. A calibration thus never
// moves a choice. With the same constants on both sides it is choose().
TunerChoice choose_timed(const CommShape& nccl_shape, const NcclParams& nccl,
                         const CommShape& shape, const NcclParams& params, Op op, double bytes,
                         const TunerOptions& options);

// Parses NCCL_ALGO / NCCL_PROTO style lists ("ring,tree", case-insensitive) into a mask; throws
// InputError naming `key` and the valid values. An empty text means "all".
unsigned parse_algo_mask(const std::string& text, const std::string& key);
// An NCCL_NVLS_ENABLE / NCCL_COLLNET_ENABLE value: "" -> nullopt (NCCL's default), on / 1 -> true,
// off / 0 -> false; else throws InputError naming `key`.
std::optional<bool> parse_enable(const std::string& text, const std::string& key);
unsigned parse_proto_mask(const std::string& text, const std::string& key);
// An NCCL release, "2.24.3" or "2.24" (patch 0), as NCCL_VERSION_CODE; "" -> 0 (the priors'
// release). Releases before 2.12 or after 2.99 throw InputError naming `key`.
int parse_nccl_version(const std::string& text, const std::string& key);

}  // namespace cs::coll
