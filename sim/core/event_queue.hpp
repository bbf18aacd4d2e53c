// The one event queue of a simulation: callbacks at integer picosecond times, run in time order
// and, at equal times, in the order they were scheduled. Passed by reference; never a global.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/event_callback.hpp"
#include "core/units.hpp"

namespace cs {

class EventQueue {
 public:
  using Callback = EventCallback;

  // Schedules `callback` at absolute time `at` (>= now()).
  void schedule(TimePs at, Callback callback);
  void schedule_in(TimePs delay, Callback callback) { schedule(now_ + delay, std::move(callback)); }

  // Runs events until none is left; returns the time of the last one.
  TimePs run();
  // Runs events with time <= `until`, then sets now() to `until`.
  void run_until(TimePs until);

  TimePs now() const { return now_; }
  bool empty() const { return pending_ == 0; }
  std::uint64_t events_run() const { return events_run_; }

 private:
  struct Entry {
    TimePs at;
    std::uint32_t slot;  // where its callback waits
  };
  // Bucket 0 holds the events at exactly `last_`; bucket b >= 1 those whose time differs from
  // `last_` first in bit b - 1 (counting from 0 at the least significant bit).
  static constexpr std::size_t kBuckets = 65;
  std::size_t bucket_of(TimePs at) const;
  void push(Entry entry);
  // Makes bucket 0 non-empty by spreading the lowest non-empty bucket; needs pending_ > 0.
  void refill();
  TimePs next_time() const;
  void pop_and_run();
  // Callbacks live in fixed chunks, so growing the store never moves the ones already there.
  static constexpr std::uint32_t kChunkBits = 12;
  using Chunk = std::array<Callback, std::size_t{1} << kChunkBits>;
  Callback& callback_at(std::uint32_t slot) {
    return (*chunks_[slot >> kChunkBits])[slot & ((1U << kChunkBits) - 1)];
  }

  std::array<std::vector<Entry>, kBuckets> buckets_;
  std::array<TimePs, kBuckets> bucket_min_{};  // earliest time in each non-empty bucket
  std::uint64_t occupied_ = 0;                 // bit b - 1 set: bucket b >= 1 is non-empty
  std::size_t head_ = 0;                       // bucket 0 is consumed from here, in order
  TimePs last_ = 0;                            // time of the last event popped
  std::size_t pending_ = 0;
  std::vector<std::unique_ptr<Chunk>> chunks_;
  std::uint32_t slots_ = 0;  // slots ever handed out; the free ones wait in free_slots_
  std::vector<std::uint32_t> free_slots_;
  TimePs now_ = 0;
  std::uint64_t events_run_ = 0;
};

}  // namespace cs
