// Predictor: communicators cached per rank count, copies simulated on a fresh flow network.
#include "calibration/predict/predictor.hpp"

#include <algorithm>

#include "network/copies.hpp"
#include "network/flow_network.hpp"

namespace cs::cal {

Predictor::Predictor(topo::Cluster cluster, coll::NcclParams params)
    : cluster_(std::move(cluster)), graph_(cluster_), params_(std::move(params)) {}

coll::CollectiveResult Predictor::collective(coll::Op op, int n_ranks, double bytes,
                                             const coll::TunerOptions& options) {
  auto& comm = comms_[n_ranks];
  if (!comm) {
    comm = std::make_unique<coll::Communicator>(graph_, coll::first_ranks(n_ranks), params_);
  }
  coll::CollectiveCall call;
  call.op = op;
  call.bytes = bytes;
  call.options = options;
  return coll::simulate_alone(*comm, call, coll::Fidelity::flow);
}

double Predictor::copy_us(const CopyPoint& c) const {
  auto gpu = [&](int index) { return cluster_.ranks[static_cast<std::size_t>(index)]; };
  const auto memory = c.memory == "pageable" ? net::HostMemory::pageable : net::HostMemory::pinned;
  std::vector<net::FlowSpec> flows;
  switch (c.direction) {
    case CopyDirection::h2d:
      flows.push_back(net::host_to_device(graph_, gpu(c.dst), c.bytes, memory));
      break;
    case CopyDirection::d2h:
      flows.push_back(net::device_to_host(graph_, gpu(c.src), c.bytes, memory));
      break;
    case CopyDirection::d2d:
      flows.push_back(net::device_copy(graph_, gpu(c.src), c.bytes));
      break;
    case CopyDirection::peer:
      flows.push_back(net::peer_copy(graph_, gpu(c.src), gpu(c.dst), c.bytes));
      if (c.bidirectional) flows.push_back(net::peer_copy(graph_, gpu(c.dst), gpu(c.src), c.bytes));
      break;
  }
  EventQueue queue;
  net::FlowNetwork network(queue, graph_);
  TimePs last = 0;
  for (net::FlowSpec& f : flows)
    network.start(std::move(f), [&last](TimePs at) { last = std::max(last, at); });
  queue.run();
  return us_from_ps(last);
}

}  // namespace cs::cal
