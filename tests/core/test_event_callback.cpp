// EventCallback: small captures inline, large ones on the heap, move-only captures, and every
// capture destroyed exactly once whether the callback ran, moved or was dropped.
#include <doctest/doctest.h>

#include <array>
#include <memory>
#include <utility>

#include "core/event_callback.hpp"

namespace cs {

TEST_CASE("a callback runs its callable, small or large, and owns move-only captures") {
  int small_calls = 0;
  EventCallback small([&small_calls] { ++small_calls; });
  small();
  small();
  CHECK(small_calls == 2);

  std::array<long, 16> big{};  // 128 bytes: over the inline room, so on the heap
  big[15] = 7;
  long seen = 0;
  EventCallback large([big, &seen] { seen = big[15]; });
  large();
  CHECK(seen == 7);

  auto owned = std::make_unique<int>(41);
  int result = 0;
  EventCallback move_only([owned = std::move(owned), &result] { result = *owned + 1; });
  move_only();
  CHECK(result == 42);
}

TEST_CASE("captures are destroyed once: after moves, reassignment and destruction") {
  auto shared = std::make_shared<int>(0);
  std::array<char, 100> padding{};
  {
    EventCallback inline_one([shared] { ++*shared; });
    EventCallback heap_one([shared, padding] { *shared += padding[0] + 1; });
    CHECK(shared.use_count() == 3);
    EventCallback moved(std::move(inline_one));
    EventCallback moved_heap(std::move(heap_one));
    CHECK(!inline_one);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
    CHECK(!heap_one);    // NOLINT(bugprone-use-after-move)
    CHECK(shared.use_count() == 3);
    moved();
    moved_heap();
    CHECK(*shared == 2);
    moved = std::move(moved_heap);  // drops the inline capture, takes the heap one
    CHECK(shared.use_count() == 2);
    moved();
    CHECK(*shared == 3);
  }
  CHECK(shared.use_count() == 1);
}

}  // namespace cs
