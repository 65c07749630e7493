// hookforge/core/point.hpp — hook points: tag types with a compile-time name.
//
//   HOOKFORGE_POINT(on_pre_attack);   // declares `struct on_pre_attack`
//
// A runner lists the points it fires in `using hook_points = point_list<...>;`.
// A misspelled point is an undeclared type, so it cannot compile.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

#define HOOKFORGE_POINT(point_name)                         \
  struct point_name {                                       \
    static constexpr ::std::string_view name = #point_name; \
    static constexpr bool is_hookforge_point = true;        \
  }

namespace hookforge {

/// A hook point: a tag type declared with HOOKFORGE_POINT.
template <class P>
concept point = requires {
  { P::name } -> std::convertible_to<std::string_view>;
  requires P::is_hookforge_point;
};

/// P is one of Q...: for a handler bound to several points and told which one fired,
///   template <class C, class P> requires hookforge::one_of_points<P, points::on_pre_step,
///                                                               points::on_post_step>
///   void tick(C& ctx, P);
template <class P, class... Q>
concept one_of_points = (std::is_same_v<P, Q> || ...);

/// The points a runner fires, in the order its binding table lists them.
template <point... Points>
struct point_list {
  static constexpr std::size_t size = sizeof...(Points);
  static constexpr std::array<std::string_view, sizeof...(Points)> names{Points::name...};

  template <class P>
  static constexpr bool contains = (std::is_same_v<P, Points> || ...);

  /// Position of P in the list (size when absent).
  template <class P>
  static constexpr std::size_t index_of = [] {
    constexpr bool match[] = {std::is_same_v<P, Points>..., false};
    std::size_t i = 0;
    while (i < sizeof...(Points) && !match[i]) ++i;
    return i;
  }();
};

}  // namespace hookforge
