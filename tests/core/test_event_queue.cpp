// The event queue: time order, insertion order at equal times, run_until, callbacks that schedule.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "core/event_queue.hpp"

namespace cs {

TEST_CASE("events run in time order and equal times in insertion order") {
  EventQueue queue;
  std::vector<int> order;
  queue.schedule(30, [&] { order.push_back(3); });
  queue.schedule(10, [&] { order.push_back(1); });
  queue.schedule(20, [&] { order.push_back(20); });
  queue.schedule(20, [&] { order.push_back(21); });
  queue.schedule(20, [&] { order.push_back(22); });
  queue.schedule(10, [&] { order.push_back(11); });
  CHECK(queue.run() == 30);
  CHECK(order == std::vector<int>{1, 11, 20, 21, 22, 3});
  CHECK(queue.events_run() == 6);
  CHECK(queue.empty());
}

TEST_CASE("now() is the time of the running event") {
  EventQueue queue;
  std::vector<TimePs> seen;
  queue.schedule(5 * kPsPerUs, [&] { seen.push_back(queue.now()); });
  queue.schedule(7, [&] { seen.push_back(queue.now()); });
  queue.run();
  CHECK(seen == std::vector<TimePs>{7, 5 * kPsPerUs});
}

TEST_CASE("run_until stops at the limit, inclusive, and advances now()") {
  EventQueue queue;
  std::vector<int> order;
  queue.schedule(100, [&] { order.push_back(100); });
  queue.schedule(200, [&] { order.push_back(200); });
  queue.schedule(201, [&] { order.push_back(201); });
  queue.run_until(200);
  CHECK(order == std::vector<int>{100, 200});
  CHECK(queue.now() == 200);
  CHECK_FALSE(queue.empty());
  queue.run_until(150);  // the past: nothing runs, time does not go back
  CHECK(queue.now() == 200);
  queue.run_until(1000);
  CHECK(order == std::vector<int>{100, 200, 201});
  CHECK(queue.now() == 1000);  // no event at 1000, yet time moved to the limit
}

TEST_CASE("callbacks schedule more events, including at the current time") {
  EventQueue queue;
  std::vector<int> order;
  queue.schedule(10, [&] {
    order.push_back(1);
    // Same time as the running event, but scheduled later than the event already waiting at 10:
    // it runs after that one.
    queue.schedule(10, [&] { order.push_back(3); });
    queue.schedule_in(5, [&] { order.push_back(4); });  // at 15
  });
  queue.schedule(10, [&] { order.push_back(2); });
  CHECK(queue.run() == 15);
  CHECK(order == std::vector<int>{1, 2, 3, 4});
}

TEST_CASE("scheduling in the past is a bug") {
  EventQueue queue;
  queue.schedule(50, [] {});
  queue.run();
  CHECK_THROWS_AS(queue.schedule(49, [] {}), InternalError);
}

TEST_CASE("callbacks own their captures until they run, and slots are reused safely") {
  EventQueue queue;
  auto shared = std::make_shared<int>(0);
  for (int i = 0; i < 100; ++i) {
    queue.schedule(i % 7, [shared, i] { *shared += i; });
  }
  CHECK(shared.use_count() == 101);
  queue.run();
  CHECK(*shared == 99 * 100 / 2);
  CHECK(shared.use_count() == 1);  // a callback is destroyed once it has run
}

// Runs a self-feeding random workload and records the (time, id) trace.
std::vector<std::pair<TimePs, int>> random_trace(std::uint32_t seed) {
  EventQueue queue;
  std::mt19937 rng(seed);
  std::vector<std::pair<TimePs, int>> trace;
  int next_id = 0;
  std::function<void(int)> fire = [&](int id) {
    trace.emplace_back(queue.now(), id);
    if (next_id < 2000) {
      const int children = static_cast<int>(rng() % 3);
      for (int c = 0; c < children; ++c) {
        const int child = next_id++;
        queue.schedule_in(static_cast<TimePs>(rng() % 50), [&fire, child] { fire(child); });
      }
    }
  };
  for (int i = 0; i < 20; ++i) {
    const int id = next_id++;
    queue.schedule(static_cast<TimePs>(rng() % 100), [&fire, id] { fire(id); });
  }
  queue.run();
  return trace;
}

TEST_CASE("the same workload gives the same trace, in time order") {
  const auto first = random_trace(7);
  const auto second = random_trace(7);
  CHECK(first == second);
  REQUIRE(first.size() > 100);
  for (std::size_t i = 1; i < first.size(); ++i) {
    REQUIRE(first[i - 1].first <= first[i].first);
  }
}

// Against a reference: the order a stable sort on time gives (time, then scheduling order). Times
// span 40 bits and cluster on a few values, so events move through many buckets and equal times
// meet after different moves; run_until stops between events and new ones land before the next.
TEST_CASE("random schedules run in (time, scheduling order), across run_until stops") {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    EventQueue queue;
    std::vector<std::pair<TimePs, int>> scheduled;  // (time, id); ids count up in schedule order
    std::vector<int> ran;
    const auto add = [&](TimePs at) {
      const int id = static_cast<int>(scheduled.size());
      scheduled.emplace_back(at, id);
      queue.schedule(at, [&ran, id] { ran.push_back(id); });
    };
    const auto random_time = [&](TimePs from) {
      switch (rng() % 3) {
        case 0:
          return from;  // now
        case 1:
          return from + static_cast<TimePs>(rng() % 4) * 1000;  // a few shared times
        default:
          return from + static_cast<TimePs>(rng() % (1ULL << 40));  // anywhere
      }
    };
    for (int i = 0; i < 300; ++i) add(random_time(0));
    for (int stop = 0; stop < 50; ++stop) {
      queue.run_until(queue.now() + static_cast<TimePs>(rng() % (1ULL << 36)));
      for (int i = 0; i < 10; ++i) add(random_time(queue.now()));
    }
    queue.run();
    std::vector<std::pair<TimePs, int>> expected = scheduled;
    std::stable_sort(expected.begin(), expected.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<int> expected_ids;
    for (const auto& [at, id] : expected) expected_ids.push_back(id);
    REQUIRE(ran == expected_ids);
  }
}

}  // namespace cs
