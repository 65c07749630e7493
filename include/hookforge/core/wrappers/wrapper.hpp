// hookforge/core/wrappers/wrapper.hpp — the machinery shared by hook wrappers
// (`ref`, `rebind`, `with_priority`, `keyed`, `when`).
//
// A wrapper is itself a hook: it re-exports the inner hook's bindings with
// invokers that reach through to the inner object, and forwards priority and
// state. Runners therefore see one kind of thing, and wrappers compose.
#pragma once

#include <cstddef>
#include <utility>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"

namespace hookforge::detail {

/// Calls `Invoker` on the object a wrapper holds, with the point tag when given one.
template <class Invoker>
struct via_inner {
  template <class W, class Ctx, class... Point>
  constexpr auto operator()(W& wrapper, Ctx& ctx, Point... point) const
      -> decltype(Invoker{}(wrapper.inner(), ctx, point...)) {
    return Invoker{}(wrapper.inner(), ctx, point...);
  }
};

template <class B>
struct forwarded;
template <fixed_string M, class Inv, class... P>
struct forwarded<binding<M, Inv, P...>> {
  using type = binding<M, via_inner<Inv>, P...>;
};

template <class List>
struct forwarded_tuple;
template <class... B>
struct forwarded_tuple<type_list<B...>> {
  static constexpr auto value = hookforge::bindings(typename forwarded<B>::type{}...);
};

/// The bindings of `Inner`, re-targeted at a wrapper's `inner()`.
template <class Inner>
inline constexpr auto forward_bindings = forwarded_tuple<bindings_of<Inner>>::value;

/// Base of every wrapper: holds the wrapped hook (by value, or by pointer for
/// `ref`), re-exports its bindings, and forwards its priority, state, state key and
/// capture safety.
/// A derived wrapper changes what it needs by declaring a member of the same name.
template <class Inner, bool ByReference = false>
class wrapper_base {
 public:
  using inner_type = Inner;
  static constexpr auto bindings = forward_bindings<Inner>;
  static constexpr int priority = priority_of<Inner>();
  static constexpr std::string_view state_key = state_key_of<Inner>();
  static constexpr bool capture_safe = capture_safe_of<Inner>();

  explicit wrapper_base(Inner hook)
    requires(!ByReference)
      : held_(std::move(hook)) {}
  explicit wrapper_base(Inner& hook)
    requires ByReference
      : held_(&hook) {}

  Inner& inner() {
    if constexpr (ByReference)
      return *held_;
    else
      return held_;
  }
  const Inner& inner() const {
    if constexpr (ByReference)
      return *held_;
    else
      return held_;
  }

  auto state_dict() const
    requires stateful<Inner>
  {
    return inner().state_dict();
  }
  template <class State>
  void load_state_dict(const State& state)
    requires stateful<Inner>
  {
    inner().load_state_dict(state);
  }

  std::vector<std::int64_t> event_counts() const
    requires counted<Inner>
  {
    return inner().event_counts();
  }
  void set_event_counts(const std::vector<std::int64_t>& counts)
    requires counted<Inner>
  {
    inner().set_event_counts(counts);
  }

 private:
  std::conditional_t<ByReference, Inner*, Inner> held_;
};

}  // namespace hookforge::detail
