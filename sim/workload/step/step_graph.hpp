// A training step as a task graph, whatever the parallelism: one host thread that issues work in
// program order onto named GPU streams, with CUDA events between streams. A generator (DDP today,
// workload/ddp/) writes the program; execute() (executor.cpp) times it.
//
// Vocabulary, borrowed from Chakra's execution trace (mlcommons/chakra, et_def.proto): a node is
// a compute node (kernels on a stream) or a collective node (one communication kernel on a
// stream, of an op, bytes and rank group); a node's control dependency is the host thread's
// program order (every node is issued after the one before it), its data dependencies are the
// events it waits on. What Chakra leaves to the simulator, this graph states: the host's cost to
// issue each node, the stream each runs on, and the GPU time each kernel needs alone.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"
#include "workload/work/overlap.hpp"

namespace cs::workload {

// A run of `kernels` kernels on one stream whose GPU times add to gpu_us; the host spends
// host_us_per_kernel launching each.
struct Task {
  std::string name;
  double gpu_us = 0;
  int kernels = 0;
  double host_us_per_kernel = 0;
  // Each kernel's GPU time, when known (they add to gpu_us); else the kernels split it evenly.
  std::vector<double> kernel_us;
  std::vector<std::uint8_t> memory_bound;  // per kernel of kernel_us: 1 for memory-bound
  bool memory_bound_default = false;       // for kernels memory_bound does not list
};

// A collective's kernel as the collective model times it alone: its duration, its CTAs (NCCL's
// channels, one CTA each; compute beside it slows by the overlap curve at that count), and the
// bytes each CTA moves per second alone (beside compute it slows to the overlap cap).
struct CollectiveKernel {
  std::string name;
  std::string category = "allreduce";  // what the trace files it under
  double alone_us = 0;
  int ctas = 0;
  double rate_gbps = 0;
};

// A stream computes (its kernels hold SMs and slow beside communication) or communicates (its
// kernels are collectives, slowed by the compute beside them).
enum class StreamKind { compute, communication };

using StreamId = int;
using EventId = int;
using NodeId = int;
using CategoryId = int;  // an index of StepGraph::categories()

// The program of one rank's host thread. Streams are created first; the first compute stream is
// "the compute stream" whose idle time the breakdown explains.
class StepGraph {
 public:
  StepGraph() = default;
  // Nodes point at the graph's own tasks: a copy would point at the original's.
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;
  StepGraph(StepGraph&&) = default;
  StepGraph& operator=(StepGraph&&) = default;

  StreamId add_stream(std::string name, StreamKind kind);

  // The host launches `task`'s kernels on `stream`, each after host_us_per_kernel; the first
  // waits for `waits` (cudaStreamWaitEvent before it). Its GPU time is summed under `category`.
  // No node when the task has no kernels and no GPU time. A task of one kernel (a strategy's
  // copy, one per gradient) is held in its node.
  NodeId kernels(StreamId stream, Task task, std::string_view category,
                 const std::vector<EventId>& waits = {});
  // The same for a task the caller keeps alive until the graph is executed (no copy: a plan's
  // layers, thousands of kernel times).
  NodeId kernels_ref(StreamId stream, const Task& task, std::string_view category,
                     const std::vector<EventId>& waits = {});
  // The host launches a collective on `stream` after `host_us` of launch work.
  NodeId collective(StreamId stream, CollectiveKernel kernel, double host_us,
                    const std::vector<EventId>& waits = {});
  // An event recorded after everything issued to `stream` so far (cudaEventRecord): it fires when
  // that work ends, at once when there is none.
  EventId record(StreamId stream);
  // Host work that launches nothing (a hook's own work, a walk of the autograd graph).
  void host_work(std::string_view name, std::string_view category, double us);
  // A copy the host performs itself and waits for (pageable memory): after host_us of its own
  // work the host waits for `stream`'s work to end, then the copy of `us` runs on the stream
  // through the copy engine (no SMs, never slowed) and the host returns when it ends. Summed
  // under `category`.
  NodeId blocking_copy(StreamId stream, std::string name, std::string_view category, double us,
                       double host_us);

  enum class Kind { kernels, collective, host_work, blocking_copy };
  // Plain data: what a node names (its category, name, collective) is an index into the graph.
  struct Node {
    Kind kind = Kind::kernels;
    StreamId stream = -1;
    CategoryId category = -1;
    int waits_begin = 0, waits_count = 0;  // in waits()
    // kernels; blocking_copy: name, gpu_us, host_us_per_kernel; host_work: name. A kernels
    // node without a task is one kernel: `name`, `gpu_us`, `memory_bound`, launched after
    // `host_us`.
    const Task* task = nullptr;
    int name = -1;        // in the graph's names, for a kernels node without a task
    int collective = -1;  // index in collectives()
    double host_us = 0;   // collective launch, host_work, a kernels node without a task
    double gpu_us = 0;
    bool memory_bound = false;
  };
  struct Stream {
    std::string name;
    StreamKind kind = StreamKind::compute;
  };
  const std::vector<Node>& nodes() const { return nodes_; }
  const CollectiveKernel& collective_of(const Node& n) const {
    return collectives_[static_cast<std::size_t>(n.collective)];
  }
  // The categories nodes are summed under, in the order the graph first named them.
  const std::vector<std::string>& categories() const { return categories_; }
  // What the trace calls node `n`.
  const std::string& name_of(const Node& n) const {
    if (n.kind == Kind::collective) return collective_of(n).name;
    if (n.task != nullptr) return n.task->name;
    return names_[static_cast<std::size_t>(n.name)];
  }
  // The events node `n` waits on.
  const EventId* waits_begin(const Node& n) const { return waits_.data() + n.waits_begin; }
  const EventId* waits_end(const Node& n) const {
    return waits_.data() + n.waits_begin + n.waits_count;
  }
  void reserve(std::size_t nodes) { nodes_.reserve(nodes); }
  const std::vector<Stream>& streams() const { return streams_; }
  // The node whose end an event marks; -1 for an event on a stream that had nothing yet.
  NodeId event_node(EventId e) const { return events_[static_cast<std::size_t>(e)]; }

 private:
  // A new node at the end, its stream, category and waits set; the caller fills in the rest.
  Node& add(Kind kind, StreamId stream, std::string_view category,
            const std::vector<EventId>& waits);
  NodeId last_node() const;
  const Task* own(Task task);
  // The index of `category` in categories_, added when new.
  CategoryId category(std::string_view category);
  // An index of `name` in names_: one of the last few when they have it, else added.
  int name(std::string name);
  std::vector<Stream> streams_;
  std::vector<Node> nodes_;
  std::deque<Task> owned_;  // tasks given by value (a deque: their addresses stay)
  std::vector<CollectiveKernel> collectives_;
  std::vector<EventId> waits_;
  std::vector<NodeId> events_;
  std::vector<NodeId> last_on_stream_;
  std::vector<std::string> categories_;
  std::vector<std::string> names_;  // of kernels nodes without a task
  CategoryId last_category_ = -1;   // the last one looked up: nodes come in runs of one
};

// A span of the step, for the trace: a node on the host thread (lane 0) or on stream s (lane
// 1 + s).
struct Span {
  Span() = default;
  // (So that the executor builds each span in place: a step has thousands.)
  Span(const std::string& name, const std::string& category, int lane, TimePs start, TimePs end)
      : name(name), category(category), lane(lane), start(start), end(end) {}
  std::string name;
  std::string category;
  int lane = 0;
  TimePs start = 0, end = 0;
};

// The step in time. The compute stream's busy time plus its idle time add up to the step: step =
// sum of gpu_us (the compute stream's categories) + kernel_gaps + overlap_slowdown +
// exposed_communication + host_bound_idle.
struct Execution {
  std::vector<std::string> lanes;  // "host thread", then each stream's name
  std::vector<Span> spans;
  // Per node, in program order: when it started and ended on its stream (host_work: on the host
  // thread), and when the events it waited on had all fired.
  struct NodeTime {
    TimePs ready = 0, start = -1, end = -1;
  };
  std::vector<NodeTime> nodes;
  // GPU time alone per category, summed in program order; communication nodes not included.
  std::vector<std::pair<std::string, double>> gpu_us;
  double gpu_us_of(std::string_view category) const;
  double step_us = 0;
  double exposed_communication_us = 0;   // the compute stream waiting on other streams
  double host_bound_idle_us = 0;         // the compute stream waiting for the host's launches
  double host_busy_us = 0;               // the host thread's launch and own work
  double kernel_gaps_us = 0;             // the GPU's own time between queued kernels
  double overlap_slowdown_us = 0;        // compute stretched by communication holding SMs
  double communication_us = 0;           // communication streams busy, hidden or not
  double communication_slowdown_us = 0;  // the part of it that compute beside stretched
};

// Runs the step once from an idle GPU and host (a step that ends in a synchronize, as measured).
// CUDA's semantics: a kernel starts when its launch has happened, its stream's previous kernel
// has ended and the GPU's `kernel_gap_us` has passed, and the events it waits on have fired.
// While communication kernels run beside a compute kernel, the compute kernel progresses at
// 1 / overlap.factor(their CTAs together) and each communication kernel at
// 1 / overlap.comm_factor(its rate); two compute kernels beside each other, or two
// communication kernels, do not slow each other here (no contention model between them yet).
Execution execute(const StepGraph& graph, double kernel_gap_us, const OverlapSlowdown& overlap);

}  // namespace cs::workload
