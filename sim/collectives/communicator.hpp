// A communicator on the simulated cluster: NCCL's tuner picks (algorithm, protocol, channels) for
// each call, and the call runs as flows on a network model, one flow per channel per ring/tree
// pass whose channel list holds every edge (so a ring over 16,384 GPUs is a few dozen flows, yet
// shares links with everything else in flight, at the pace of its slowest edge).
#pragma once

#include <functional>
#include <map>
#include <tuple>
#include <vector>

#include "collectives/comm_layout.hpp"
#include "collectives/transfer_paths.hpp"
#include "core/event_queue.hpp"
#include "network/network_model.hpp"

namespace cs::coll {

struct CollectiveCall {
  Op op = Op::all_reduce;
  double bytes = 0;  // nccl-tests' S: the buffer; the gathered size for all-gather/reduce-scatter
  int root = 0;      // communicator rank: broadcast / reduce root (send/recv: every rank sends)
  TunerOptions options;
};

struct CollectiveResult {
  TimePs start = 0;
  TimePs finish = 0;
  TunerChoice choice;
  int flows = 0;  // flows started on the network
  double time_us() const { return us_from_ps(finish - start); }
};

class Communicator {
 public:
  using Done = std::function<void(const CollectiveResult&)>;

  // Throws InputError for ranks that do not exist or repeat.
  Communicator(const topo::ClusterGraph& graph, const std::vector<int>& ranks, NcclParams params);
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  const CommLayout& layout() const { return layout_; }
  // The constants that time the calls (a calibration's, or NCCL's priors).
  const NcclParams& params() const { return params_; }
  // The constants NCCL chooses with: its priors for the GPU generation, whatever `params` says.
  const NcclParams& nccl_params() const { return nccl_params_; }
  const RouteCache& routes() const { return routes_; }

  // NCCL's decision for this call, made with NCCL's own constants and timed with params()
  // (tuner/tuner.hpp, choose_timed; no simulation).
  TunerChoice tune(const CollectiveCall& call) const;

  // Starts the call now on `network`; `on_done` runs from the event queue when its last flow has
  // landed. The queue and network must outlive the call; the communicator need not.
  // Throws InputError for a call that cannot run (bad root).
  void run(EventQueue& queue, net::NetworkModel& network, const CollectiveCall& call, Done on_done);

  // All-to-all runs one flow per peer distance over every rank (n^2 route entries) up to this
  // many ranks; beyond, cross-server distances are grouped (nccl/p2p_plan.hpp, alltoall_shifts) so
  // that its flows list about kAllToAllSends sends (one route each) in all.
  static constexpr int kExactAllToAllRanks = 1024;
  static constexpr double kAllToAllSends = 1 << 18;

 private:
  enum class PathKind { ring, chain, tree, nvls, nvls_tree, shift, collnet };
  static constexpr int kMaxHeads = 32;  // NCCL_MAX_NVLS_ARITY: NVLSTree heads per server
  // Channel `channel`'s path of `kind`, crossing the fabric on plane `plane` (-1: any).
  const ChannelList& path(PathKind kind, int channel, int arg, int plane);
  int channel_period() const;
  // Fabric planes a cross-server flow is split over (topo::FabricInfo::planes), else 1.
  int planes() const;

  RouteCache routes_;
  NcclParams params_;
  CommLayout layout_;
  PathBuilder builder_;
  NcclParams nccl_params_;
  CommShape nccl_shape_;  // the shape NCCL's own search finds (layout_.shape when it is the same)
  std::map<std::tuple<int, int, int, int>, ChannelList> paths_;
};

enum class Fidelity { flow, analytical };

// Simulates one call alone on a fresh event queue and network of the given fidelity.
CollectiveResult simulate_alone(Communicator& comm, const CollectiveCall& call, Fidelity fidelity);

// The convenience form: a communicator over `ranks` for this one call, started now.
void run_collective(EventQueue& queue, net::NetworkModel& network, const topo::ClusterGraph& graph,
                    const std::vector<int>& ranks, const CollectiveCall& call,
                    const NcclParams& params, Communicator::Done on_done);

}  // namespace cs::coll
