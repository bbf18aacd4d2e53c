// Writing a step graph: streams, nodes in program order, events after a stream's last node.
#include "workload/step/step_graph.hpp"

#include <utility>

#include "core/error.hpp"
#include "workload/step/strategy.hpp"

namespace cs::workload {

StreamId StepGraph::add_stream(std::string name, StreamKind kind) {
  streams_.push_back({std::move(name), kind});
  last_on_stream_.push_back(-1);
  return static_cast<StreamId>(streams_.size()) - 1;
}

NodeId StepGraph::add(Node node, const std::vector<EventId>& waits) {
  CS_ASSERT(node.kind == Kind::host_work ||
                (node.stream >= 0 && node.stream < static_cast<int>(streams_.size())),
            "a node on a stream the graph does not have");
  node.waits_begin = static_cast<int>(waits_.size());
  node.waits_count = static_cast<int>(waits.size());
  for (EventId e : waits) {
    CS_ASSERT(e >= 0 && e < static_cast<int>(events_.size()), "a wait on an unrecorded event");
    waits_.push_back(e);
  }
  const StreamId stream = node.stream;
  const bool on_stream = node.kind != Kind::host_work;
  nodes_.push_back(std::move(node));
  const auto id = static_cast<NodeId>(nodes_.size()) - 1;
  if (on_stream) last_on_stream_[static_cast<std::size_t>(stream)] = id;
  return id;
}

const Task* StepGraph::own(Task task) {
  owned_.push_back(std::move(task));
  return &owned_.back();
}

NodeId StepGraph::kernels(StreamId stream, Task task, std::string category,
                          const std::vector<EventId>& waits) {
  if (task.kernels == 0 && !(task.gpu_us > 0)) return -1;
  return kernels_ref(stream, *own(std::move(task)), std::move(category), waits);
}

NodeId StepGraph::kernels_ref(StreamId stream, const Task& task, std::string category,
                              const std::vector<EventId>& waits) {
  if (task.kernels == 0 && !(task.gpu_us > 0)) return -1;
  CS_ASSERT(streams_[static_cast<std::size_t>(stream)].kind == StreamKind::compute,
            "kernels on a communication stream");
  Node n;
  n.kind = Kind::kernels;
  n.stream = stream;
  n.category = std::move(category);
  n.task = &task;
  return add(std::move(n), waits);
}

NodeId StepGraph::collective(StreamId stream, CollectiveKernel kernel, double host_us,
                             const std::vector<EventId>& waits) {
  CS_ASSERT(streams_[static_cast<std::size_t>(stream)].kind == StreamKind::communication,
            "a collective on a compute stream");
  Node n;
  n.kind = Kind::collective;
  n.stream = stream;
  n.category = kernel.category;
  n.collective = static_cast<int>(collectives_.size());
  collectives_.push_back(std::move(kernel));
  n.host_us = host_us;
  return add(std::move(n), waits);
}

EventId StepGraph::record(StreamId stream) {
  CS_ASSERT(stream >= 0 && stream < static_cast<int>(streams_.size()),
            "an event on a stream the graph does not have");
  events_.push_back(last_on_stream_[static_cast<std::size_t>(stream)]);
  return static_cast<EventId>(events_.size()) - 1;
}

void StepGraph::host_work(std::string name, std::string category, double us) {
  if (!(us > 0)) return;
  Task t;
  t.name = std::move(name);
  Node n;
  n.kind = Kind::host_work;
  n.category = std::move(category);
  n.task = own(std::move(t));
  n.host_us = us;
  add(std::move(n), {});
}

NodeId StepGraph::blocking_copy(StreamId stream, std::string name, std::string category, double us,
                                double host_us) {
  Task t;
  t.name = std::move(name);
  t.gpu_us = us;
  t.host_us_per_kernel = host_us;
  Node n;
  n.kind = Kind::blocking_copy;
  n.stream = stream;
  n.category = std::move(category);
  n.task = own(std::move(t));
  return add(std::move(n), {});
}

const char* to_string(Strategy s) {
  return s == Strategy::hsdp ? "hsdp" : s == Strategy::fsdp ? "fsdp" : "ddp";
}

}  // namespace cs::workload
