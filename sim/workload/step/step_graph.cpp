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

StepGraph::Node& StepGraph::add(Kind kind, StreamId stream, std::string_view category,
                                const std::vector<EventId>& waits) {
  CS_ASSERT(kind == Kind::host_work || (stream >= 0 && stream < static_cast<int>(streams_.size())),
            "a node on a stream the graph does not have");
  // Filled in place: a Node built aside and copied in stalls on reading back its parts.
  Node& node = nodes_.emplace_back();
  node.kind = kind;
  node.stream = stream;
  node.category = this->category(category);
  node.waits_begin = static_cast<int>(waits_.size());
  node.waits_count = static_cast<int>(waits.size());
  for (EventId e : waits) {
    CS_ASSERT(e >= 0 && e < static_cast<int>(events_.size()), "a wait on an unrecorded event");
    waits_.push_back(e);
  }
  if (kind != Kind::host_work)
    last_on_stream_[static_cast<std::size_t>(stream)] = static_cast<NodeId>(nodes_.size()) - 1;
  return node;
}

NodeId StepGraph::last_node() const {
  return static_cast<NodeId>(nodes_.size()) - 1;
}

const Task* StepGraph::own(Task task) {
  owned_.push_back(std::move(task));
  return &owned_.back();
}

namespace {

// a == b for the short names of a graph, compared here rather than through a call to memcmp.
bool same(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

CategoryId StepGraph::category(std::string_view category) {
  if (last_category_ >= 0 && same(categories_[static_cast<std::size_t>(last_category_)], category))
    return last_category_;
  for (std::size_t i = 0; i < categories_.size(); ++i) {
    if (same(categories_[i], category)) return last_category_ = static_cast<CategoryId>(i);
  }
  categories_.emplace_back(category);
  return last_category_ = static_cast<CategoryId>(categories_.size()) - 1;
}

int StepGraph::name(std::string name) {
  // A generator repeats a few names (DDP: a copy per gradient, between hooks' own work), or
  // names each node anew (FSDP's units): looking further back would cost more than a copy.
  constexpr std::size_t kLookBack = 4;
  for (std::size_t i = names_.size(); i > 0 && i + kLookBack > names_.size(); --i) {
    if (same(names_[i - 1], name)) return static_cast<int>(i) - 1;
  }
  names_.push_back(std::move(name));
  return static_cast<int>(names_.size()) - 1;
}

NodeId StepGraph::kernels(StreamId stream, Task task, std::string_view category,
                          const std::vector<EventId>& waits) {
  if (task.kernels == 0 && !(task.gpu_us > 0)) return -1;
  if (task.kernels != 1 || !task.kernel_us.empty() || !task.memory_bound.empty())
    return kernels_ref(stream, *own(std::move(task)), category, waits);
  CS_ASSERT(streams_[static_cast<std::size_t>(stream)].kind == StreamKind::compute,
            "kernels on a communication stream");
  const int name = this->name(std::move(task.name));
  Node& n = add(Kind::kernels, stream, category, waits);
  n.name = name;
  n.host_us = task.host_us_per_kernel;
  n.gpu_us = task.gpu_us;
  n.memory_bound = task.memory_bound_default;
  return last_node();
}

NodeId StepGraph::kernels_ref(StreamId stream, const Task& task, std::string_view category,
                              const std::vector<EventId>& waits) {
  if (task.kernels == 0 && !(task.gpu_us > 0)) return -1;
  CS_ASSERT(streams_[static_cast<std::size_t>(stream)].kind == StreamKind::compute,
            "kernels on a communication stream");
  add(Kind::kernels, stream, category, waits).task = &task;
  return last_node();
}

NodeId StepGraph::collective(StreamId stream, CollectiveKernel kernel, double host_us,
                             const std::vector<EventId>& waits) {
  CS_ASSERT(streams_[static_cast<std::size_t>(stream)].kind == StreamKind::communication,
            "a collective on a compute stream");
  Node& n = add(Kind::collective, stream, kernel.category, waits);
  n.collective = static_cast<int>(collectives_.size());
  n.host_us = host_us;
  collectives_.push_back(std::move(kernel));
  return last_node();
}

EventId StepGraph::record(StreamId stream) {
  CS_ASSERT(stream >= 0 && stream < static_cast<int>(streams_.size()),
            "an event on a stream the graph does not have");
  events_.push_back(last_on_stream_[static_cast<std::size_t>(stream)]);
  return static_cast<EventId>(events_.size()) - 1;
}

void StepGraph::host_work(std::string_view name, std::string_view category, double us) {
  if (!(us > 0)) return;
  Task t;
  t.name = name;
  const Task* task = own(std::move(t));
  Node& n = add(Kind::host_work, -1, category, {});
  n.task = task;
  n.host_us = us;
}

NodeId StepGraph::blocking_copy(StreamId stream, std::string name, std::string_view category,
                                double us, double host_us) {
  Task t;
  t.name = std::move(name);
  t.gpu_us = us;
  t.host_us_per_kernel = host_us;
  const Task* task = own(std::move(t));
  add(Kind::blocking_copy, stream, category, {}).task = task;
  return last_node();
}

const char* to_string(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::gpipe:
      return "gpipe";
    case PipelineSchedule::one_f_one_b:
      return "1f1b";
    case PipelineSchedule::interleaved:
      return "interleaved-1f1b";
  }
  return "?";
}

const char* to_string(Strategy s) {
  return s == Strategy::hsdp ? "hsdp" : s == Strategy::fsdp ? "fsdp" : "ddp";
}

}  // namespace cs::workload
