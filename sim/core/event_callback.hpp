// The callable an event runs: a move-only `void()` that keeps up to 40 bytes of captures inline, so
// scheduling the simulator's callbacks (a `this` and a version, a completion std::function and a
// time) never allocates, and one callback fills 48 bytes. Larger callables go to the heap.
// std::function would allocate for anything over 16 bytes, and std::move_only_function is C++23.
#pragma once

#include <concepts>
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace cs {

class EventCallback {
 public:
  static constexpr std::size_t kInlineBytes = 40;
  static constexpr std::size_t kAlignment = alignof(void*);

  EventCallback() = default;

  template <class F>
  requires(!std::same_as<std::decay_t<F>, EventCallback> && std::invocable<std::decay_t<F>&>)
      EventCallback(       // NOLINT(bugprone-forwarding-reference-overload): the requires-clause
                           // keeps EventCallback itself out, which clang-tidy 14 does not read
          F&& callable) {  // NOLINT(google-explicit-constructor): lambdas convert, on purpose
    using Fn = std::decay_t<F>;
    if constexpr (fits_inline<Fn>()) {
      ::new (static_cast<void*>(storage_)) Fn(std::forward<F>(callable));
      ops_ = &kInlineOps<Fn>;
    } else {
      ::new (static_cast<void*>(storage_)) Fn*(new Fn(std::forward<F>(callable)));
      ops_ = &kHeapOps<Fn>;
    }
  }

  EventCallback(EventCallback&& other) noexcept : ops_(other.ops_) {
    if (ops_ != nullptr) ops_->relocate(other.storage_, storage_);
    other.ops_ = nullptr;
  }
  EventCallback& operator=(EventCallback&& other) noexcept {
    if (this != &other) {
      reset();
      ops_ = other.ops_;
      if (ops_ != nullptr) ops_->relocate(other.storage_, storage_);
      other.ops_ = nullptr;
    }
    return *this;
  }
  EventCallback(const EventCallback&) = delete;
  EventCallback& operator=(const EventCallback&) = delete;
  ~EventCallback() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }
  void operator()() { ops_->invoke(storage_); }

 private:
  struct Ops {
    void (*invoke)(void* storage);
    void (*relocate)(void* from, void* to) noexcept;  // move-constructs at `to`, destroys `from`
    void (*destroy)(void* storage) noexcept;
  };

  template <class Fn>
  static constexpr bool fits_inline() {
    return sizeof(Fn) <= kInlineBytes && alignof(Fn) <= kAlignment &&
           std::is_nothrow_move_constructible_v<Fn>;
  }
  template <class Fn>
  static Fn& inline_object(void* storage) {
    return *std::launder(static_cast<Fn*>(storage));
  }
  template <class Fn>
  static Fn*& heap_pointer(void* storage) {
    return *std::launder(static_cast<Fn**>(storage));
  }

  template <class Fn>
  static constexpr Ops kInlineOps{[](void* storage) { inline_object<Fn>(storage)(); },
                                  [](void* from, void* to) noexcept {
                                    ::new (to) Fn(std::move(inline_object<Fn>(from)));
                                    inline_object<Fn>(from).~Fn();
                                  },
                                  [](void* storage) noexcept { inline_object<Fn>(storage).~Fn(); }};
  template <class Fn>
  static constexpr Ops kHeapOps{
      [](void* storage) { (*heap_pointer<Fn>(storage))(); },
      [](void* from, void* to) noexcept { ::new (to) Fn*(heap_pointer<Fn>(from)); },
      [](void* storage) noexcept { delete heap_pointer<Fn>(storage); }};

  void reset() {
    if (ops_ != nullptr) ops_->destroy(storage_);
    ops_ = nullptr;
  }

  alignas(kAlignment) unsigned char storage_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace cs
