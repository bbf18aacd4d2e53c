// The 4-ary heap pops in order after build() or push(), and replace_top() re-keys the top.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

#include "network/maxmin/quaternary_heap.hpp"

namespace cs::net {
namespace {

TEST_CASE("build, pop and replace_top keep min-heap order") {
  std::mt19937 rng(11);
  for (int size : {0, 1, 2, 5, 17, 1000}) {
    CAPTURE(size);
    QuaternaryHeap<int, std::less<int>> heap;
    std::vector<int> reference;
    for (int i = 0; i < size; ++i) {
      const int value = static_cast<int>(rng() % 100);
      heap.push_unordered(value);
      reference.push_back(value);
    }
    heap.build();
    std::sort(reference.begin(), reference.end());
    // Re-key the top a few times the way the solver does (only ever upwards).
    for (int k = 0; k < 3 && !heap.empty(); ++k) {
      REQUIRE(heap.top() == reference.front());
      const int raised = heap.top() + static_cast<int>(rng() % 50);
      heap.replace_top(raised);
      reference.front() = raised;
      std::sort(reference.begin(), reference.end());
    }
    std::vector<int> popped;
    while (!heap.empty()) {
      popped.push_back(heap.top());
      heap.pop();
    }
    CHECK(popped == reference);
  }
}

TEST_CASE("push keeps min-heap order between pops, as the sweep uses it") {
  std::mt19937 rng(12);
  QuaternaryHeap<int, std::less<int>> heap;
  std::vector<int> reference;  // kept sorted
  for (int step = 0; step < 2000; ++step) {
    if (!reference.empty() && rng() % 3 == 0) {
      REQUIRE(heap.top() == reference.front());
      heap.pop();
      reference.erase(reference.begin());
    } else {
      const int value = static_cast<int>(rng() % 1000);
      heap.push(value);
      reference.insert(std::upper_bound(reference.begin(), reference.end(), value), value);
    }
  }
  CHECK(heap.size() == reference.size());
}

}  // namespace
}  // namespace cs::net
