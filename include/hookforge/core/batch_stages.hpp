// hookforge/core/batch_stages.hpp — what a runner's batch holds at each of its points, for
// the field checks made before training when the data's fields are known only at run time
// (a dataset's options choose them). A runner says it beside hook_points:
//
//   using batch_stages = hookforge::batch_stages<
//       hookforge::loaded_at<points::on_pre_step>,
//       hookforge::output_at<points::on_post_forward, points::on_post_backward,
//                            points::on_post_step>>;
//
//   loaded_at<P...>       the batch as loaded: the model has not run yet
//   output_at<P...>       the model's output merged in
//   adds_at<P, "f"...>    the model's output and fields the runner itself adds at P (a GAN
//                         runner's "d_real", "d_fake")
//
// A point listed nowhere carries no batch (epoch and trainer points). Hooks' writes<> add
// to the batch by the same stages: what a handler writes at a loaded point is there from
// then on; what it writes at any point is there once the model's output is
// (core/runtime/field_flow.hpp follows this). A runner whose fields are known at compile time
// lists them with batch_fields (fields.hpp) instead, and the compiler checks its hooks.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

#include "hookforge/core/fixed_string.hpp"
#include "hookforge/core/point.hpp"
#include "hookforge/core/runner.hpp"

namespace hookforge {

/// When a point fires, what its batch holds (see the top of this file).
enum class batch_stage { none, loaded, output };

/// The batch at P... is as loaded.
template <point... P>
struct loaded_at {
  static constexpr batch_stage stage = batch_stage::loaded;
  using points = point_list<P...>;
  static constexpr std::array<std::string_view, 0> adds{};
};

/// The batch at P... holds the model's output.
template <point... P>
struct output_at {
  static constexpr batch_stage stage = batch_stage::output;
  using points = point_list<P...>;
  static constexpr std::array<std::string_view, 0> adds{};
};

/// The batch at P holds the model's output and `Fields...`, which the runner adds there.
template <point P, fixed_string... Fields>
struct adds_at {
  static constexpr batch_stage stage = batch_stage::output;
  using points = point_list<P>;
  static constexpr std::array<std::string_view, sizeof...(Fields)> adds{Fields.view()...};
};

/// A runner's `using batch_stages = ...`: loaded_at, output_at and adds_at, each point in one.
template <class... Stages>
struct batch_stages {};

/// What the batch holds at one point, as data.
struct point_batch {
  std::string_view point;
  batch_stage stage = batch_stage::none;
  std::span<const std::string_view> adds{};
};

namespace detail {

template <class Points, class... P>
constexpr bool all_in(point_list<P...>) {
  return (Points::template contains<P> && ...);
}

template <class Runner>
struct declared_stages {
  static constexpr bool declared = false;
};
template <class Runner>
  requires requires { typename Runner::batch_stages; }
struct declared_stages<Runner> : declared_stages<typename Runner::batch_stages> {};
template <class... S>
struct declared_stages<batch_stages<S...>> {
  static constexpr bool declared = true;
  /// P's entry: the last stage that lists it.
  template <class P>
  static constexpr point_batch at() {
    point_batch out{P::name};
    ((S::points::template contains<P> ? void(out = {P::name, S::stage, S::adds}) : void()), ...);
    return out;
  }
  /// Does every stage name points of `Points`?
  template <class Points>
  static constexpr bool within = (all_in<Points>(typename S::points{}) && ...);
};

template <class Runner, class... P>
constexpr auto stage_table(point_list<P...>) {
  using stages = declared_stages<Runner>;
  static_assert(stages::template within<points_of<Runner>>,
                "hookforge: the runner's batch_stages name a point that is not in its hook_points");
  return std::array<point_batch, sizeof...(P)>{stages::template at<P>()...};
}

}  // namespace detail

/// Does Runner say what its batch holds where (`batch_stages`)?
template <class Runner>
inline constexpr bool declares_batch_stages_v = detail::declared_stages<Runner>::declared;

/// Runner's batch at each of its points, in hook_points' order (empty when it says nothing).
template <class Runner>
inline constexpr auto batch_stages_of = [] {
  if constexpr (declares_batch_stages_v<Runner>)
    return detail::stage_table<Runner>(points_of<Runner>{});
  else
    return std::array<point_batch, 0>{};
}();

}  // namespace hookforge
