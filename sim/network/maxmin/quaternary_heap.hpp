// A 4-ary min-heap over a vector: half the depth of a binary heap, and the four children of a
// slot share one or two cache lines, which is what the max-min solver's pops spend their time on.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace cs::net {

// `Before(x, y)` is true when x must pop before y; it must be a strict weak order.
template <typename T, typename Before>
class QuaternaryHeap {
 public:
  void clear() { items_.clear(); }
  void push_unordered(T item) { items_.push_back(std::move(item)); }  // then call build()
  // The items, to edit or drop before build() (again).
  std::vector<T>& unordered_items() { return items_; }
  void build() {
    if (items_.size() < 2) return;
    for (std::size_t slot = (items_.size() - 2) / 4 + 1; slot-- > 0;) sift_down(slot, items_[slot]);
  }
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  const T& top() const { return items_.front(); }
  void pop() {
    T last = std::move(items_.back());
    items_.pop_back();
    if (!items_.empty()) sift_down(0, std::move(last));
  }
  void push(T item) {
    std::size_t slot = items_.size();
    items_.push_back(item);
    while (slot > 0) {
      const std::size_t parent = (slot - 1) / 4;
      if (!before_(item, items_[parent])) break;
      items_[slot] = std::move(items_[parent]);
      slot = parent;
    }
    items_[slot] = std::move(item);
  }
  // Replaces the top by `item` (which may belong anywhere) in one pass.
  void replace_top(T item) { sift_down(0, std::move(item)); }

 private:
  void sift_down(std::size_t slot, T item) {
    const std::size_t size = items_.size();
    while (true) {
      const std::size_t first = 4 * slot + 1;
      if (first >= size) break;
      std::size_t best = first;
      if (first + 4 <= size) {  // all four children: a tournament, two independent compares first
        const std::size_t left = before_(items_[first + 1], items_[first]) ? first + 1 : first;
        const std::size_t right =
            before_(items_[first + 3], items_[first + 2]) ? first + 3 : first + 2;
        best = before_(items_[right], items_[left]) ? right : left;
      } else {
        for (std::size_t child = first + 1; child < size; ++child) {
          if (before_(items_[child], items_[best])) best = child;
        }
      }
      if (!before_(items_[best], item)) break;
      items_[slot] = std::move(items_[best]);
      slot = best;
    }
    items_[slot] = std::move(item);
  }

  std::vector<T> items_;
  Before before_;
};

}  // namespace cs::net
