// Sift operations of the indexed drain-time heap.
#include "network/drain_heap.hpp"

#include <string>

#include "core/error.hpp"

namespace cs::net {

bool DrainHeap::contains(std::int32_t flow) const {
  return static_cast<std::size_t>(flow) < position_.size() &&
         position_[static_cast<std::size_t>(flow)] >= 0;
}

void DrainHeap::set(std::int32_t flow, TimePs drain_at) {
  CS_ASSERT(flow >= 0, "negative flow index");
  const auto f = static_cast<std::size_t>(flow);
  if (f >= position_.size()) {
    position_.resize(f + 1, -1);
    time_.resize(f + 1, 0);
  }
  if (position_[f] < 0) {
    time_[f] = drain_at;
    heap_.push_back(flow);
    position_[f] = static_cast<std::int32_t>(heap_.size() - 1);
    sift_up(heap_.size() - 1);
    return;
  }
  const TimePs old = time_[f];
  time_[f] = drain_at;
  const auto slot = static_cast<std::size_t>(position_[f]);
  if (drain_at < old) {
    sift_up(slot);
  } else if (drain_at > old) {
    sift_down(slot);
  }
}

void DrainHeap::erase(std::int32_t flow) {
  CS_ASSERT(contains(flow), "flow " + std::to_string(flow) + " is not in the drain heap");
  const auto slot = static_cast<std::size_t>(position_[static_cast<std::size_t>(flow)]);
  position_[static_cast<std::size_t>(flow)] = -1;
  const std::int32_t last = heap_.back();
  heap_.pop_back();
  if (slot == heap_.size()) return;
  place(slot, last);
  sift_up(slot);
  sift_down(static_cast<std::size_t>(position_[static_cast<std::size_t>(last)]));
}

void DrainHeap::place(std::size_t slot, std::int32_t flow) {
  heap_[slot] = flow;
  position_[static_cast<std::size_t>(flow)] = static_cast<std::int32_t>(slot);
}

void DrainHeap::sift_up(std::size_t slot) {
  const std::int32_t flow = heap_[slot];
  while (slot > 0) {
    const std::size_t parent = (slot - 1) / 2;
    if (!before(flow, heap_[parent])) break;
    place(slot, heap_[parent]);
    slot = parent;
  }
  place(slot, flow);
}

void DrainHeap::sift_down(std::size_t slot) {
  const std::int32_t flow = heap_[slot];
  const std::size_t size = heap_.size();
  while (true) {
    std::size_t child = 2 * slot + 1;
    if (child >= size) break;
    if (child + 1 < size && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], flow)) break;
    place(slot, heap_[child]);
    slot = child;
  }
  place(slot, flow);
}

}  // namespace cs::net
