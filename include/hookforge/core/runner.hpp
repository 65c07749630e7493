// hookforge/core/runner.hpp — what makes a type a runner, and what hookforge reads from one.
//
// A runner (a component hooks attach to: an epoch runner, the trainer, a class of
// yours) declares
//   using hook_points = hookforge::point_list<P...>;   the points it fires
//   using Ctx = ...;                                    what its handlers receive
// and keeps its hooks in a `hookforge::hook_pack<Runner, Hooks...>` that it
// returns from `hooks()`. Nothing else is needed for hooks to bind to its points.
//
// A runner that records part of its step in a CUDA graph and replays it also declares
//   using captured_points = hookforge::point_list<P...>;  fired inside the capture
// and hooks bound there must be capture-safe (hook_traits.hpp, capture_safe_of).
#pragma once

#include <string_view>
#include <type_traits>

#include "hookforge/core/point.hpp"
#include "hookforge/core/type_name.hpp"

namespace hookforge {

namespace detail {
template <class T>
inline constexpr bool is_point_list = false;
template <class... P>
inline constexpr bool is_point_list<point_list<P...>> = true;
}  // namespace detail

/// The declarations hookforge reads from a runner type (usable while it is incomplete).
template <class R>
concept runner_declarations = requires {
  typename R::hook_points;
  typename R::Ctx;
} && detail::is_point_list<typename R::hook_points> && std::is_object_v<typename R::Ctx>;

/// A complete runner: its declarations plus the hook pack it fires.
template <class R>
concept runner = runner_declarations<R> && requires(R& r) { r.hooks(); };

/// The points of a runner type.
template <class Runner>
using points_of = typename Runner::hook_points;

namespace detail {
template <class Runner>
struct captured_points {
  using type = point_list<>;
};
template <class Runner>
  requires requires { typename Runner::captured_points; }
struct captured_points<Runner> {
  using type = typename Runner::captured_points;
};
}  // namespace detail

/// The points a runner fires inside a captured CUDA graph (none unless it declares them).
template <class Runner>
using captured_points_of = typename detail::captured_points<Runner>::type;

/// The context type a runner passes to its handlers.
template <class Runner>
using context_of = typename Runner::Ctx;

/// The runner's name for messages: `Runner::runner_name` when given, else its
/// type name without namespaces or template arguments.
template <class Runner>
constexpr std::string_view runner_name() {
  if constexpr (requires { std::string_view{Runner::runner_name}; })
    return Runner::runner_name;
  else
    return short_type_name<Runner>();
}

}  // namespace hookforge
