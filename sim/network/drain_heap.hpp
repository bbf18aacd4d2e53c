// The flows in flight ordered by the time their last byte drains: an indexed binary min-heap
// keyed by (time, flow index), so a flow's drain time moves in O(log n) when its rate changes and
// equal times pop in index order (deterministic).
#pragma once

#include <cstdint>
#include <vector>

#include "core/units.hpp"

namespace cs::net {

class DrainHeap {
 public:
  // Inserts `flow` or moves it to its new time.
  void set(std::int32_t flow, TimePs drain_at);
  void erase(std::int32_t flow);
  bool contains(std::int32_t flow) const;
  bool empty() const { return heap_.empty(); }
  std::int32_t top() const { return heap_.front(); }
  TimePs top_time() const { return time_[static_cast<std::size_t>(heap_.front())]; }
  std::size_t size() const { return heap_.size(); }

 private:
  bool before(std::int32_t x, std::int32_t y) const {
    const TimePs tx = time_[static_cast<std::size_t>(x)];
    const TimePs ty = time_[static_cast<std::size_t>(y)];
    return tx != ty ? tx < ty : x < y;
  }
  void place(std::size_t slot, std::int32_t flow);
  void sift_up(std::size_t slot);
  void sift_down(std::size_t slot);

  std::vector<std::int32_t> heap_;
  std::vector<std::int32_t> position_;  // per flow: slot in heap_, or -1
  std::vector<TimePs> time_;            // per flow
};

}  // namespace cs::net
