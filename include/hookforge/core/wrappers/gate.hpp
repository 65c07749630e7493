// hookforge/core/wrappers/gate.hpp — a hook that runs, or not, by a flag fixed when it is attached.
//
//   hookforge::enabled_if(LossLogger{}, rank == 0)        // a logger on one process only
//   hookforge::enabled_if(hookforge::ref(saver), verbose)
//
// Every handler of the wrapped hook runs when the flag is true and none runs when it is
// false; the hook keeps its bindings, priority, state and state key either way, so the
// binding tables and the checkpoints of every process look the same. Distributed training
// builds `distributed::rank_zero_only` on it (hookforge/distributed/rank_zero.hpp). The flag costs
// one branch per call; `set_enabled` changes it later.
#pragma once

#include <utility>

#include "hookforge/core/wrappers/wrapper.hpp"

namespace hookforge {

namespace detail {

/// Runs binding Invoker's handler when the wrapper is enabled.
template <class Invoker>
struct gated_invoker {
  template <class W, class Ctx, class... Point>
  auto operator()(W& wrapper, Ctx& ctx, Point... point) const
      -> decltype(void(Invoker{}(wrapper.inner(), ctx, point...))) {
    if (wrapper.enabled()) Invoker{}(wrapper.inner(), ctx, point...);
  }
};

template <class B>
struct gated_binding;
template <fixed_string M, class Inv, class... P>
struct gated_binding<binding<M, Inv, P...>> {
  using type = binding<M, gated_invoker<Inv>, P...>;
};

template <class List>
struct gated_tuple;
template <class... B>
struct gated_tuple<type_list<B...>> {
  static constexpr auto value = hookforge::bindings(typename gated_binding<B>::type{}...);
};

}  // namespace detail

/// A hook whose handlers run only while `enabled()`.
template <class H>
class gated_hook : public detail::wrapper_base<H> {
 public:
  static constexpr auto bindings = detail::gated_tuple<bindings_of<H>>::value;
  // Capture safety is the inner hook's (wrapper_base): on a runner that records a CUDA
  // graph, the flag at the capture decides whether the work is recorded; set_enabled()
  // afterwards changes nothing in the replays.

  gated_hook(H hook, bool enabled) : detail::wrapper_base<H>(std::move(hook)), enabled_(enabled) {}

  bool enabled() const noexcept { return enabled_; }
  void set_enabled(bool enabled) noexcept { enabled_ = enabled; }

 private:
  bool enabled_;
};

/// `hook`, running only when `enabled` is true.
template <class H>
gated_hook<H> enabled_if(H hook, bool enabled) {
  return gated_hook<H>(std::move(hook), enabled);
}

}  // namespace hookforge
