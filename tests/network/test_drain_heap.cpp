// The indexed drain-time heap against a sorted reference under random inserts, moves and erases.
#include <doctest/doctest.h>

#include <random>
#include <set>
#include <utility>
#include <vector>

#include "network/drain_heap.hpp"

namespace cs::net {
namespace {

TEST_CASE("equal drain times pop in flow index order") {
  DrainHeap heap;
  heap.set(5, 100);
  heap.set(2, 100);
  heap.set(9, 50);
  CHECK(heap.top() == 9);
  heap.erase(9);
  CHECK(heap.top() == 2);
  heap.set(2, 200);  // moves later
  CHECK(heap.top() == 5);
  CHECK(heap.top_time() == 100);
  CHECK(heap.size() == 2);
  CHECK_FALSE(heap.contains(9));
}

TEST_CASE("random operations match a sorted set") {
  std::mt19937 rng(3);
  DrainHeap heap;
  std::set<std::pair<TimePs, std::int32_t>> reference;
  std::vector<TimePs> time(64, -1);
  for (int step = 0; step < 20'000; ++step) {
    const auto flow = static_cast<std::int32_t>(rng() % 64);
    const auto f = static_cast<std::size_t>(flow);
    if (time[f] >= 0 && rng() % 3 == 0) {
      heap.erase(flow);
      reference.erase({time[f], flow});
      time[f] = -1;
    } else {
      if (time[f] >= 0) reference.erase({time[f], flow});
      time[f] = static_cast<TimePs>(rng() % 1000);
      heap.set(flow, time[f]);
      reference.insert({time[f], flow});
    }
    REQUIRE(heap.size() == reference.size());
    if (!reference.empty()) {
      REQUIRE(heap.top() == reference.begin()->second);
      REQUIRE(heap.top_time() == reference.begin()->first);
    }
  }
}

}  // namespace
}  // namespace cs::net
