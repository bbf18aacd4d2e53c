// A 4-ary heap of (time, sequence) keys pointing at recycled callback slots, so the heap moves
// 24-byte entries and never the callbacks themselves. Four children per slot halve the depth of a
// binary heap and sit in adjacent cache lines, which is what pops of large queues wait on.
#include "core/event_queue.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace cs {

void EventQueue::schedule(TimePs at, Callback callback) {
  CS_ASSERT(at >= now_,
            "event at " + std::to_string(at) + " ps is before now " + std::to_string(now_) + " ps");
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(callbacks_.size());
    callbacks_.push_back(std::move(callback));
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    callbacks_[slot] = std::move(callback);
  }
  heap_.emplace_back();
  sift_up(heap_.size() - 1, Entry{at, next_sequence_++, slot});
}

void EventQueue::sift_up(std::size_t slot, Entry entry) {
  while (slot > 0) {
    const std::size_t parent = (slot - 1) / 4;
    if (!earlier(entry, heap_[parent])) break;
    heap_[slot] = heap_[parent];
    slot = parent;
  }
  heap_[slot] = entry;
}

void EventQueue::sift_down(std::size_t slot, Entry entry) {
  const std::size_t size = heap_.size();
  while (true) {
    const std::size_t first = 4 * slot + 1;
    if (first >= size) break;
    const std::size_t last = std::min(first + 4, size);
    std::size_t best = first;
    for (std::size_t child = first + 1; child < last; ++child) {
      if (earlier(heap_[child], heap_[best])) best = child;
    }
    if (!earlier(heap_[best], entry)) break;
    heap_[slot] = heap_[best];
    slot = best;
  }
  heap_[slot] = entry;
}

void EventQueue::pop_and_run() {
  const Entry entry = heap_.front();
  const Entry last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0, last);
  now_ = entry.at;
  Callback callback = std::move(callbacks_[entry.slot]);
  free_slots_.push_back(entry.slot);
  ++events_run_;
  callback();
}

TimePs EventQueue::run() {
  while (!heap_.empty()) pop_and_run();
  return now_;
}

void EventQueue::run_until(TimePs until) {
  while (!heap_.empty() && heap_.front().at <= until) pop_and_run();
  if (until > now_) now_ = until;
}

}  // namespace cs
