// A binary heap of (time, sequence) keys pointing at recycled callback slots, so the heap moves
// 16-byte entries and never the callbacks themselves.
#include "core/event_queue.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace cs {

void EventQueue::schedule(TimePs at, Callback callback) {
  CS_ASSERT(at >= now_, "event at " + std::to_string(at) + " ps is before now " +
                            std::to_string(now_) + " ps");
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(callbacks_.size());
    callbacks_.push_back(std::move(callback));
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    callbacks_[slot] = std::move(callback);
  }
  heap_.push_back(Entry{at, next_sequence_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

void EventQueue::pop_and_run() {
  std::pop_heap(heap_.begin(), heap_.end(), later);
  const Entry entry = heap_.back();
  heap_.pop_back();
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
