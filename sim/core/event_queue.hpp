// The one event queue of a simulation: callbacks at integer picosecond times, run in time order
// and, at equal times, in the order they were scheduled. Passed by reference; never a global.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/units.hpp"

namespace cs {

class EventQueue {
 public:
  using Callback = std::function<void()>;

  // Schedules `callback` at absolute time `at` (>= now()).
  void schedule(TimePs at, Callback callback);
  void schedule_in(TimePs delay, Callback callback) { schedule(now_ + delay, std::move(callback)); }

  // Runs events until none is left; returns the time of the last one.
  TimePs run();
  // Runs events with time <= `until`, then sets now() to `until`.
  void run_until(TimePs until);

  TimePs now() const { return now_; }
  bool empty() const { return heap_.empty(); }
  std::uint64_t events_run() const { return events_run_; }

 private:
  struct Entry {
    TimePs at;
    std::uint64_t sequence;
    std::uint32_t slot;  // index into callbacks_
  };
  static bool earlier(const Entry& x, const Entry& y) {
    return x.at != y.at ? x.at < y.at : x.sequence < y.sequence;
  }
  void sift_up(std::size_t slot, Entry entry);
  void sift_down(std::size_t slot, Entry entry);
  void pop_and_run();

  std::vector<Entry> heap_;  // 4-ary min-heap on (at, sequence)
  std::vector<Callback> callbacks_;
  std::vector<std::uint32_t> free_slots_;
  TimePs now_ = 0;
  std::uint64_t next_sequence_ = 0;
  std::uint64_t events_run_ = 0;
};

}  // namespace cs
