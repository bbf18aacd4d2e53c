// The step graph in time: the host thread walked in program order (its times depend on the GPU
// only where it blocks), and every stream's kernels run as a fluid in one clock: between two
// events (a kernel starting or ending) each running kernel progresses at a constant rate set by
// what runs beside it. Kernels begin and end on whole picoseconds.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/error.hpp"
#include "workload/step/step_graph.hpp"
#include "workload/work/overlap.hpp"

namespace cs::workload {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

TimePs ps_of_us(double us) {
  return ps_from_seconds(us * 1e-6);
}

// One kernel on a stream.
struct Item {
  NodeId node = -1;
  bool first = false;  // the node's first kernel: it waits for the node's events
  bool last = false;   // the node's last kernel: its end is the node's
  TimePs launch = 0;   // when the host's launch has happened
  TimePs length = 0;   // alone
  bool memory_bound = false;
  double left = 0;  // picoseconds of alone time still to run
  TimePs start = -1;
};

struct StreamState {
  bool compute = true;
  std::vector<Item> items;
  std::size_t next = 0;  // items before it have ended
  bool running = false;  // items[next] has started
  TimePs last_end = 0;   // end of the last kernel run on it
  bool ran = false;      // whether one has: the GPU's gap only separates queued kernels
  double rate = 1;       // of the running kernel, for the current interval
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
  }

  void run() {
    const std::vector<StepGraph::Node>& nodes = g_.nodes();
    std::vector<std::size_t> kernels(streams_.size(), 0);
    for (const StepGraph::Node& n : nodes) {
      if (n.kind == StepGraph::Kind::kernels)
        kernels[static_cast<std::size_t>(n.stream)] +=
            static_cast<std::size_t>(std::max(n.task->kernels, 1));
      if (n.kind == StepGraph::Kind::collective) ++kernels[static_cast<std::size_t>(n.stream)];
    }
    for (std::size_t s = 0; s < streams_.size(); ++s) streams_[s].items.reserve(kernels[s]);
    x_.spans.reserve(2 * nodes.size());
    for (std::size_t n = 0; n < nodes.size(); ++n) issue(static_cast<NodeId>(n), nodes[n]);
    advance([] { return false; });
    finish();
  }

 private:
  void issue(NodeId id, const StepGraph::Node& node) {
    const TimePs host_start = host_;
    switch (node.kind) {
      case StepGraph::Kind::kernels: {
        const Task& task = *node.task;
        const int kernels = task.gpu_us > 0 ? std::max(task.kernels, 1) : task.kernels;
        if (kernels == 0) return;
        const bool listed = static_cast<int>(task.kernel_us.size()) == kernels;
        const TimePs h = ps_of_us(task.host_us_per_kernel);
        const TimePs even = ps_of_us(task.gpu_us / kernels);
        StreamState& s = stream(node.stream);
        for (int j = 0; j < kernels; ++j) {
          host_ += h;
          Item item;
          item.node = id;
          item.first = j == 0;
          item.last = j == kernels - 1;
          item.launch = host_;
          item.length = listed ? ps_of_us(task.kernel_us[static_cast<std::size_t>(j)]) : even;
          item.memory_bound = static_cast<std::size_t>(j) < task.memory_bound.size()
                                  ? task.memory_bound[static_cast<std::size_t>(j)] != 0
                                  : task.memory_bound_default;
          s.items.push_back(item);
        }
        host_busy_ += host_ - host_start;
        add_gpu_us(node.category, task.gpu_us);
        if (host_ > host_start) span(task.name, "launch", 0, host_start, host_);
        return;
      }
      case StepGraph::Kind::collective: {
        host_ += ps_of_us(node.host_us);
        host_busy_ += host_ - host_start;
        if (host_ > host_start) span(g_.collective_of(node).name, "launch", 0, host_start, host_);
        Item item;
        item.node = id;
        item.first = item.last = true;
        item.launch = host_;
        item.length = ps_of_us(g_.collective_of(node).alone_us);
        stream(node.stream).items.push_back(item);
        return;
      }
      case StepGraph::Kind::host_work:
        if (node.host_us <= 0) return;
        host_ += ps_of_us(node.host_us);
        host_busy_ += host_ - host_start;
        span(node.task->name, node.category, 0, host_start, host_);
        return;
      case StepGraph::Kind::blocking_copy: {
        // The host waits for the stream's work, then the copy engine copies while it waits.
        StreamState& s = stream(node.stream);
        advance([&s] { return s.next >= s.items.size(); });
        const TimePs start = std::max(host_ + ps_of_us(node.task->host_us_per_kernel), s.last_end);
        if (node.stream == main_) host_idle_ += start - s.last_end;
        const TimePs end = start + ps_of_us(node.task->gpu_us);
        span(node.task->name, node.category, 0, host_, end);
        span(node.task->name, node.category, node.stream + 1, start, end);
        host_ = end;
        s.last_end = end;
        x_.nodes[static_cast<std::size_t>(id)] = {start, start, end};
        add_gpu_us(node.category, node.task->gpu_us);
        return;
      }
    }
  }

  StreamState& stream(StreamId s) { return streams_[static_cast<std::size_t>(s)]; }

  void add_gpu_us(const std::string& category, double us) {
    for (auto& [name, total] : x_.gpu_us) {
      if (name == category) {
        total += us;
        return;
      }
    }
    x_.gpu_us.emplace_back(category, us);
  }

  // When the head kernel of a stream can start: its launch, the stream's previous kernel and
  // the GPU's gap, the events its node waits on. -1 while one of those events has not fired.
  TimePs head_start(const StreamState& s, TimePs* events_at) const {
    const Item& item = s.items[s.next];
    TimePs waits = 0;
    if (item.first) {
      const StepGraph::Node& node = g_.nodes()[static_cast<std::size_t>(item.node)];
      for (const EventId* e = g_.waits_begin(node); e != g_.waits_end(node); ++e) {
        const NodeId n = g_.event_node(*e);
        if (n < 0) continue;
        const TimePs end = x_.nodes[static_cast<std::size_t>(n)].end;
        if (end < 0) return -1;
        waits = std::max(waits, end);
      }
    }
    if (events_at != nullptr) *events_at = waits;
    return std::max({item.launch, waits, s.last_end + (s.ran ? gap_ : 0)});
  }

  // Sets each running kernel's rate for the interval ahead.
  void set_rates() {
    int ctas = 0;
    const Item* compute = nullptr;
    for (const StreamState& s : streams_) {
      if (!s.running) continue;
      if (s.compute) {
        if (compute == nullptr) compute = &s.items[s.next];
      } else {
        ctas += g_.collective_of(node_of(s.items[s.next])).ctas;
      }
    }
    bool comm_running = false;
    for (const StreamState& s : streams_) comm_running = comm_running || (s.running && !s.compute);
    for (StreamState& s : streams_) {
      if (!s.running) continue;
      const Item& item = s.items[s.next];
      if (s.compute) {
        s.rate = comm_running ? 1.0 / overlap_.factor(ctas, item.memory_bound) : 1.0;
      } else {
        s.rate = compute != nullptr
                     ? 1.0 / overlap_.comm_factor(g_.collective_of(node_of(item)).rate_gbps,
                                                  compute->memory_bound)
                     : 1.0;
      }
    }
  }

  const StepGraph::Node& node_of(const Item& item) const {
    return g_.nodes()[static_cast<std::size_t>(item.node)];
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
      bool running = false;
      for (std::size_t i = 0; i < streams_.size(); ++i) {
        StreamState& s = streams_[i];
        running = running || s.running;
        if (s.running || s.next >= s.items.size()) continue;
        const TimePs at = head_start(s, nullptr);
        if (at < 0) continue;
        const auto t = static_cast<double>(at);
        if (t < next_start) {
          second_start = next_start;
          next_start = t;
          first = static_cast<int>(i);
        } else {
          second_start = std::min(second_start, t);
        }
      }
      // Nothing runs and one kernel starts first: when it ends before anything else starts it
      // runs alone, at full speed, and is run here in one step (the same arithmetic as below).
      if (!running && first >= 0 && second_start > std::max(next_start, clock_) &&
          run_alone(first, second_start))
        continue;
      set_rates();
      int ending = -1;
      double dt = kNever;
      for (std::size_t i = 0; i < streams_.size(); ++i) {
        const StreamState& s = streams_[i];
        if (!s.running) continue;
        const double d = s.items[s.next].left / s.rate;
        if (d < dt) {
          dt = d;
          ending = static_cast<int>(i);
        }
      }
      if (ending < 0 && next_start == kNever) return;
      if (ending >= 0 && clock_ + dt <= next_start) {
        for (std::size_t i = 0; i < streams_.size(); ++i) {
          StreamState& s = streams_[i];
          if (s.running && static_cast<int>(i) != ending) s.items[s.next].left -= dt * s.rate;
        }
        clock_ += dt;
        end_kernel(ending);
        continue;
      }
      if (next_start > clock_) {
        for (StreamState& s : streams_) {
          if (s.running) s.items[s.next].left -= (next_start - clock_) * s.rate;
        }
        clock_ = next_start;
      }
      for (std::size_t i = 0; i < streams_.size(); ++i) {
        StreamState& s = streams_[i];
        if (s.running || s.next >= s.items.size()) continue;
        TimePs events_at = 0;
        const TimePs at = head_start(s, &events_at);
        if (at < 0 || static_cast<double>(at) > clock_) continue;
        if (s.compute) clock_ = static_cast<double>(at);
        start_kernel(static_cast<int>(i), at, events_at);
      }
    }
  }

  // Starts the head kernel of stream `index`, nothing running, and ends it if it ends by
  // `next_start` (when the next kernel of another stream starts); false, doing nothing, if not.
  bool run_alone(int index, double next_start) {
    StreamState& s = streams_[static_cast<std::size_t>(index)];
    TimePs events_at = 0;
    const TimePs at = head_start(s, &events_at);
    const double start =
        s.compute ? static_cast<double>(at) : std::max(clock_, static_cast<double>(at));
    const double length = static_cast<double>(s.items[s.next].length);
    if (start + length / 1.0 > next_start) return false;
    clock_ = start;
    start_kernel(index, at, events_at);
    s.rate = 1.0;
    clock_ += s.items[s.next].left / s.rate;
    end_kernel(index);
    return true;
  }

  void start_kernel(int index, TimePs at, TimePs events_at) {
    StreamState& s = streams_[static_cast<std::size_t>(index)];
    Item& item = s.items[s.next];
    item.start = at;
    item.left = static_cast<double>(item.length);
    s.running = true;
    Execution::NodeTime& t = x_.nodes[static_cast<std::size_t>(item.node)];
    if (item.first) {
      t.ready = events_at;
      t.start = at;
    }
    if (index != main_) return;
    // The compute stream's idle time before this kernel: the GPU's gap, then a wait for the
    // node's events, then for the host's launch.
    const TimePs gap = s.ran ? gap_ : 0;
    const TimePs idle = at - s.last_end;
    const TimePs gap_part = std::min(gap, idle);
    const TimePs waited =
        item.first ? std::clamp<TimePs>(events_at - s.last_end - gap_part, 0, idle - gap_part) : 0;
    gaps_ += gap_part;
    exposed_ += waited;
    host_idle_ += idle - gap_part - waited;
  }

  void end_kernel(int index) {
    StreamState& s = streams_[static_cast<std::size_t>(index)];
    Item& item = s.items[s.next];
    const TimePs end = static_cast<TimePs>(std::llround(clock_));
    item.left = 0;
    s.running = false;
    s.last_end = end;
    s.ran = true;
    ++s.next;
    const StepGraph::Node& node = node_of(item);
    if (s.compute) {
      if (index == main_) slowdown_ += end - item.start - item.length;
    } else {
      comm_busy_ += end - item.start;
      comm_alone_ += item.length;
      comm_last_end_ = std::max(comm_last_end_, end);
    }
    if (!item.last) return;
    Execution::NodeTime& t = x_.nodes[static_cast<std::size_t>(item.node)];
    t.end = end;
    const std::string& name =
        node.kind == StepGraph::Kind::collective ? g_.collective_of(node).name : node.task->name;
    span(name, node.category, index + 1, t.start, end);
  }

  void finish() {
    for (const StreamState& s : streams_)
      CS_ASSERT(s.next == s.items.size(), "a kernel waits on an event that never fires");
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
  }

  void span(const std::string& name, const std::string& category, int lane, TimePs start,
            TimePs end) {
    x_.spans.push_back({name, category, lane, start, end});
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
};

}  // namespace

double Execution::gpu_us_of(const std::string& category) const {
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
