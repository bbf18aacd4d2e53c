// The step graph in time: the host thread walked in program order (its times depend on the GPU
// only where it blocks), and every stream's kernels run as a fluid in one clock: between two
// events (a kernel starting or ending) each running kernel progresses at a constant rate set by
// what runs beside it. Kernels begin and end on whole picoseconds.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"
#include "workload/step/step_graph.hpp"
#include "workload/step/stream_queue.hpp"
#include "workload/work/overlap.hpp"

namespace cs::workload {
namespace {

using exec::Kernel;
using exec::ps_of_us;
using exec::round_ps;
using exec::Run;

constexpr double kNever = std::numeric_limits<double>::infinity();

struct StreamState {
  bool compute = true;
  exec::StreamQueue queue;
  bool running = false;  // the queue's head has started
  TimePs last_end = 0;   // end of the last kernel run on it
  bool ran = false;      // whether one has: the GPU's gap only separates queued kernels
  double rate = 1;       // of the running kernel, for the current interval
  // The events of the head's node, looked up once per run (`waits_for`): the latest end among
  // them (`waits`), or the node whose end has not come yet (`blocked`). An end never changes.
  std::size_t waits_for = static_cast<std::size_t>(-1);
  TimePs waits = 0;
  NodeId blocked = -1;
};

class Executor {
 public:
  Executor(const StepGraph& graph, TimePs gap, const OverlapSlowdown& overlap, Execution& x)
      : g_(graph), gap_(gap), overlap_(overlap), x_(x) {
    for (const StepGraph::Stream& s : g_.streams()) {
      StreamState state;
      state.compute = s.kind == StreamKind::compute;
      streams_.push_back(std::move(state));
      if (main_ < 0 && s.kind == StreamKind::compute) main_ = static_cast<int>(streams_.size()) - 1;
    }
    x_.nodes.resize(g_.nodes().size());
    gpu_us_.assign(g_.categories().size(), 0.0);
    gpu_us_seen_.assign(g_.categories().size(), 0);
  }

  void run() {
    const std::vector<StepGraph::Node>& nodes = g_.nodes();
    std::vector<std::size_t> runs(streams_.size(), 0);
    for (const StepGraph::Node& n : nodes) {
      if (n.kind == StepGraph::Kind::kernels || n.kind == StepGraph::Kind::collective)
        ++runs[static_cast<std::size_t>(n.stream)];
    }
    for (std::size_t s = 0; s < streams_.size(); ++s) streams_[s].queue.reserve(runs[s]);
    x_.spans.reserve(2 * nodes.size());
    for (std::size_t n = 0; n < nodes.size(); ++n) issue(static_cast<NodeId>(n), nodes[n]);
    advance([] { return false; });
    finish();
  }

 private:
  void issue(NodeId id, const StepGraph::Node& node) {
    const TimePs host_start = host_;
    switch (node.kind) {
      case StepGraph::Kind::kernels:
        if (node.task == nullptr) {
          launch(id, node, node.gpu_us, 1, node.host_us, {}, {}, node.memory_bound);
        } else {
          const Task& t = *node.task;
          launch(id, node, t.gpu_us, t.kernels, t.host_us_per_kernel, t.kernel_us, t.memory_bound,
                 t.memory_bound_default);
        }
        return;
      case StepGraph::Kind::collective: {
        Run& run = stream(node.stream).queue.push();
        run.node = id;
        run.kernels = 1;
        run.host_start = host_start;
        run.host_step = ps_of_us(node.host_us);
        run.even = ps_of_us(g_.collective_of(node).alone_us);
        host_ += run.host_step;
        host_busy_ += host_ - host_start;
        if (host_ > host_start) span(g_.name_of(node), launch_category(), 0, host_start, host_);
        return;
      }
      case StepGraph::Kind::host_work:
        if (node.host_us <= 0) return;
        host_ += ps_of_us(node.host_us);
        host_busy_ += host_ - host_start;
        span(node.task->name, category(node), 0, host_start, host_);
        return;
      case StepGraph::Kind::blocking_copy: {
        // The host waits for the stream's work, then the copy engine copies while it waits.
        StreamState& s = stream(node.stream);
        advance([&s] { return s.queue.drained(); });
        const TimePs start = std::max(host_ + ps_of_us(node.task->host_us_per_kernel), s.last_end);
        if (node.stream == main_) host_idle_ += start - s.last_end;
        const TimePs end = start + ps_of_us(node.task->gpu_us);
        span(node.task->name, category(node), 0, host_, end);
        span(node.task->name, category(node), node.stream + 1, start, end);
        host_ = end;
        s.last_end = end;
        x_.nodes[static_cast<std::size_t>(id)] = {start, start, end};
        add_gpu_us(node.category, node.task->gpu_us);
        return;
      }
    }
  }

  // A kernels node's kernels (a Task's fields, or the node's own one kernel) queued on its
  // stream, each launched after the host's cost per kernel.
  void launch(NodeId id, const StepGraph::Node& node, double gpu_us, int task_kernels,
              double host_us_per_kernel, std::span<const double> kernel_us,
              std::span<const std::uint8_t> memory_bound, bool memory_bound_default) {
    const TimePs host_start = host_;
    const int kernels = gpu_us > 0 ? std::max(task_kernels, 1) : task_kernels;
    if (kernels == 0) return;
    if (kernels > 0) {  // (a count below zero launches nothing, as a loop over it would)
      Run& run = stream(node.stream).queue.push();
      run.node = id;
      run.kernels = kernels;
      run.host_start = host_start;
      run.host_step = ps_of_us(host_us_per_kernel);
      run.even = ps_of_us(gpu_us / kernels);
      if (static_cast<int>(kernel_us.size()) == kernels) run.kernel_us = kernel_us;
      run.memory_bound = memory_bound;
      run.memory_bound_default = memory_bound_default;
      host_ += static_cast<TimePs>(kernels) * run.host_step;
    }
    host_busy_ += host_ - host_start;
    add_gpu_us(node.category, gpu_us);
    if (host_ > host_start) span(g_.name_of(node), launch_category(), 0, host_start, host_);
  }

  StreamState& stream(StreamId s) { return streams_[static_cast<std::size_t>(s)]; }

  const std::string& category(const StepGraph::Node& node) const {
    return g_.categories()[static_cast<std::size_t>(node.category)];
  }
  static const std::string& launch_category() {
    static const std::string kLaunch = "launch";
    return kLaunch;
  }

  // Summed per category in program order; Execution::gpu_us lists them as first added.
  void add_gpu_us(CategoryId category, double us) {
    const auto c = static_cast<std::size_t>(category);
    if (gpu_us_seen_[c] == 0) {
      gpu_us_seen_[c] = 1;
      gpu_us_order_.push_back(category);
      gpu_us_[c] = us;
    } else {
      gpu_us_[c] += us;
    }
  }

  // When the head kernel of a stream can start: its launch, the stream's previous kernel and
  // the GPU's gap, the events its node waits on (`events_at`: when the last fired). -1 while one
  // of those events has not fired.
  TimePs head_start(StreamState& s, TimePs& events_at) {
    const Kernel& k = s.queue.head();
    TimePs waits = 0;
    if (k.first) {
      waits = head_events(s, k.node);
      if (waits < 0) return -1;
    }
    events_at = waits;
    return std::max({k.launch, waits, s.last_end + (s.ran ? gap_ : 0)});
  }

  // When the events that node `id`, the head's, waits on have all fired; -1 while one has not.
  TimePs head_events(StreamState& s, NodeId id) {
    if (s.waits_for == s.queue.run_index()) {
      if (s.blocked < 0) return s.waits;
      if (x_.nodes[static_cast<std::size_t>(s.blocked)].end < 0) return -1;
    }
    s.waits_for = s.queue.run_index();
    const StepGraph::Node& node = g_.nodes()[static_cast<std::size_t>(id)];
    TimePs waits = 0;
    for (const EventId* e = g_.waits_begin(node); e != g_.waits_end(node); ++e) {
      const NodeId n = g_.event_node(*e);
      if (n < 0) continue;
      const TimePs end = x_.nodes[static_cast<std::size_t>(n)].end;
      if (end < 0) {
        s.blocked = n;
        return -1;
      }
      waits = std::max(waits, end);
    }
    s.blocked = -1;
    s.waits = waits;
    return waits;
  }

  // Sets each running kernel's rate for the interval ahead.
  void set_rates() {
    int ctas = 0;
    const Kernel* compute = nullptr;
    for (StreamState& s : streams_) {
      if (!s.running) continue;
      if (s.compute) {
        if (compute == nullptr) compute = &s.queue.head();
      } else {
        ctas += collective_of(s.queue.head()).ctas;
      }
    }
    bool comm_running = false;
    for (const StreamState& s : streams_) comm_running = comm_running || (s.running && !s.compute);
    for (StreamState& s : streams_) {
      if (!s.running) continue;
      const Kernel& k = s.queue.head();
      if (s.compute) {
        s.rate = comm_running ? 1.0 / overlap_.factor(ctas, k.memory_bound) : 1.0;
      } else {
        s.rate = compute != nullptr
                     ? 1.0 / overlap_.comm_factor(collective_of(k).rate_gbps, compute->memory_bound)
                     : 1.0;
      }
    }
  }

  const CollectiveKernel& collective_of(const Kernel& k) const {
    return g_.collective_of(g_.nodes()[static_cast<std::size_t>(k.node)]);
  }

  // Runs the streams event by event until `stop()` holds or nothing is left that can run. Ties:
  // a kernel ending before one starting at the same time, and among kernels ending together the
  // one on the earliest stream. A compute kernel starts at its whole picosecond, which may lie
  // below the clock by the rounding of the kernel before it: the clock moves back to it.
  template <typename Stop>
  void advance(Stop stop) {
    for (;;) {
      if (stop()) return;
      double next_start = kNever, second_start = kNever;
      int first = -1;
      TimePs first_at = 0, first_events_at = 0;
      bool running = false;
      for (std::size_t i = 0; i < streams_.size(); ++i) {
        StreamState& s = streams_[i];
        running = running || s.running;
        if (s.running || s.queue.drained()) continue;
        TimePs events_at = 0;
        const TimePs at = head_start(s, events_at);
        if (at < 0) continue;
        const auto t = static_cast<double>(at);
        if (t < next_start) {
          second_start = next_start;
          next_start = t;
          first = static_cast<int>(i);
          first_at = at;
          first_events_at = events_at;
        } else {
          second_start = std::min(second_start, t);
        }
      }
      // Nothing runs and one kernel starts first: when it ends before anything else starts it
      // runs alone, at full speed, and is run here in one step (the same arithmetic as below).
      if (!running && first >= 0 && second_start > std::max(next_start, clock_) &&
          run_alone(first, second_start, first_at, first_events_at)) {
        run_rest_alone(first, second_start, stop);
        continue;
      }
      set_rates();
      int ending = -1;
      double dt = kNever;
      for (std::size_t i = 0; i < streams_.size(); ++i) {
        StreamState& s = streams_[i];
        if (!s.running) continue;
        const double d = s.queue.head().left / s.rate;
        if (d < dt) {
          dt = d;
          ending = static_cast<int>(i);
        }
      }
      if (ending < 0 && next_start == kNever) return;
      if (ending >= 0 && clock_ + dt <= next_start) {
        for (std::size_t i = 0; i < streams_.size(); ++i) {
          StreamState& s = streams_[i];
          if (s.running && static_cast<int>(i) != ending) s.queue.head().left -= dt * s.rate;
        }
        clock_ += dt;
        end_kernel(ending);
        continue;
      }
      if (next_start > clock_) {
        for (StreamState& s : streams_) {
          if (s.running) s.queue.head().left -= (next_start - clock_) * s.rate;
        }
        clock_ = next_start;
      }
      for (std::size_t i = 0; i < streams_.size(); ++i) {
        StreamState& s = streams_[i];
        if (s.running || s.queue.drained()) continue;
        TimePs events_at = 0;
        const TimePs at = head_start(s, events_at);
        if (at < 0 || static_cast<double>(at) > clock_) continue;
        if (s.compute) clock_ = static_cast<double>(at);
        start_kernel(static_cast<int>(i), at, events_at);
      }
    }
  }

  // Starts the head kernel of stream `index` (its head_start `at` and `events_at`), nothing
  // running, and ends it if it ends by `next_start` (when the next kernel of another stream
  // starts); false, doing nothing, if not.
  bool run_alone(int index, double next_start, TimePs at, TimePs events_at) {
    StreamState& s = streams_[static_cast<std::size_t>(index)];
    const double start =
        s.compute ? static_cast<double>(at) : std::max(clock_, static_cast<double>(at));
    const double length = static_cast<double>(s.queue.head().length);
    if (start + length / 1.0 > next_start) return false;
    clock_ = start;
    start_kernel(index, at, events_at);
    s.rate = 1.0;
    clock_ += s.queue.head().left;  // at rate 1: left / 1.0 is left
    end_kernel(index);
    return true;
  }

  // After run_alone ended a kernel of stream `index` that was not its node's last: no event has
  // fired, so every other stream's next start is as advance() found it, the earliest `others`.
  // The node's next kernels run alone in turn while each starts before `others` and ends by
  // then: what advance() and run_alone() would do for each (the same arithmetic), read straight
  // off the node's run without looking at the other streams again.
  template <typename Stop>
  void run_rest_alone(int index, double others, Stop& stop) {
    StreamState& s = streams_[static_cast<std::size_t>(index)];
    while (s.queue.mid_run() && !stop()) {
      const Run& run = s.queue.run();
      const int j = s.queue.kernel_index();
      const TimePs launch = run.host_start + static_cast<TimePs>(j + 1) * run.host_step;
      const TimePs at = std::max({launch, TimePs{0}, s.last_end + (s.ran ? gap_ : 0)});
      const auto t = static_cast<double>(at);
      if (!(t < others && others > std::max(t, clock_))) return;
      const TimePs length = exec::length_of(run, j);
      const double start = s.compute ? t : std::max(clock_, t);
      if (start + static_cast<double>(length) > others) return;
      clock_ = start;
      started(index, at, 0, false);
      clock_ += static_cast<double>(length);
      ended(index, run.node, at, length, j == run.kernels - 1);
    }
  }

  void start_kernel(int index, TimePs at, TimePs events_at) {
    StreamState& s = streams_[static_cast<std::size_t>(index)];
    Kernel& k = s.queue.head();
    k.start = at;
    k.left = static_cast<double>(k.length);
    s.running = true;
    if (k.first) {
      Execution::NodeTime& t = x_.nodes[static_cast<std::size_t>(k.node)];
      t.ready = events_at;
      t.start = at;
    }
    started(index, at, events_at, k.first);
  }

  // The compute stream's idle time before a kernel starting at `at`: the GPU's gap, then a wait
  // for the node's events (a first kernel's), then for the host's launch.
  void started(int index, TimePs at, TimePs events_at, bool first) {
    if (index != main_) return;
    const StreamState& s = streams_[static_cast<std::size_t>(index)];
    const TimePs gap = s.ran ? gap_ : 0;
    const TimePs idle = at - s.last_end;
    const TimePs gap_part = std::min(gap, idle);
    const TimePs waited =
        first ? std::clamp<TimePs>(events_at - s.last_end - gap_part, 0, idle - gap_part) : 0;
    gaps_ += gap_part;
    exposed_ += waited;
    host_idle_ += idle - gap_part - waited;
  }

  void end_kernel(int index) {
    StreamState& s = streams_[static_cast<std::size_t>(index)];
    const Kernel& k = s.queue.head();
    s.running = false;
    ended(index, k.node, k.start, k.length, k.last);
  }

  // The head kernel of stream `index` (of node `node`, started at `start`, `length` alone) ends
  // now, on the clock's whole picosecond; the node ends with it when it is the `last`.
  void ended(int index, NodeId node, TimePs start, TimePs length, bool last) {
    StreamState& s = streams_[static_cast<std::size_t>(index)];
    const TimePs end = round_ps(clock_);
    s.last_end = end;
    s.ran = true;
    if (s.compute) {
      if (index == main_) slowdown_ += end - start - length;
    } else {
      comm_busy_ += end - start;
      comm_alone_ += length;
      comm_last_end_ = std::max(comm_last_end_, end);
    }
    if (last) {
      Execution::NodeTime& t = x_.nodes[static_cast<std::size_t>(node)];
      t.end = end;
      const StepGraph::Node& n = g_.nodes()[static_cast<std::size_t>(node)];
      span(g_.name_of(n), category(n), index + 1, t.start, end);
    }
    s.queue.pop();
  }

  void finish() {
    for (const StreamState& s : streams_)
      CS_ASSERT(s.queue.drained(), "a kernel waits on an event that never fires");
    const TimePs main_end = main_ >= 0 ? stream(main_).last_end : 0;
    const TimePs end = std::max({host_, main_end, comm_last_end_});
    // Past the compute stream's last kernel: communication still running is exposed (the step
    // waits for it), and a host still busy beyond that is host-bound.
    const TimePs comm_tail = std::max<TimePs>(0, comm_last_end_ - main_end);
    exposed_ += comm_tail;
    host_idle_ += end - main_end - comm_tail;
    x_.step_us = us_from_ps(end);
    x_.exposed_communication_us = us_from_ps(exposed_);
    x_.host_bound_idle_us = us_from_ps(host_idle_);
    x_.host_busy_us = us_from_ps(host_busy_);
    x_.kernel_gaps_us = us_from_ps(gaps_);
    x_.overlap_slowdown_us = us_from_ps(slowdown_);
    x_.communication_us = us_from_ps(comm_busy_);
    x_.communication_slowdown_us = us_from_ps(comm_busy_ - comm_alone_);
    x_.gpu_us.reserve(gpu_us_order_.size());
    for (CategoryId c : gpu_us_order_)
      x_.gpu_us.emplace_back(g_.categories()[static_cast<std::size_t>(c)],
                             gpu_us_[static_cast<std::size_t>(c)]);
  }

  void span(const std::string& name, const std::string& category, int lane, TimePs start,
            TimePs end) {
    x_.spans.emplace_back(name, category, lane, start, end);
  }

  const StepGraph& g_;
  TimePs gap_;
  const OverlapSlowdown& overlap_;
  Execution& x_;
  std::vector<StreamState> streams_;
  int main_ = -1;
  double clock_ = 0;
  TimePs host_ = 0;
  TimePs exposed_ = 0, host_idle_ = 0, host_busy_ = 0, gaps_ = 0, slowdown_ = 0;
  TimePs comm_busy_ = 0, comm_alone_ = 0, comm_last_end_ = 0;
  std::vector<double> gpu_us_;             // per category
  std::vector<std::uint8_t> gpu_us_seen_;  // per category: added to yet
  std::vector<CategoryId> gpu_us_order_;   // in the order first added
};

}  // namespace

double Execution::gpu_us_of(std::string_view category) const {
  for (const auto& [name, us] : gpu_us) {
    if (name == category) return us;
  }
  return 0;
}

Execution execute(const StepGraph& graph, double kernel_gap_us, const OverlapSlowdown& overlap) {
  Execution x;
  x.lanes.emplace_back("host thread");
  for (const StepGraph::Stream& s : graph.streams()) x.lanes.push_back(s.name);
  Executor(graph, ps_of_us(kernel_gap_us), overlap, x).run();
  return x;
}

}  // namespace cs::workload
