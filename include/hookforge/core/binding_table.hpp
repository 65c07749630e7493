// hookforge/core/binding_table.hpp — a runner's resolved bindings, for people.
//
//   std::cout << runner.hooks().format_table();        // or, from rows you hold:
//   hookforge::format_binding_table(name, hookforge::points_of<Runner>::names, rows);
//
//   TrainingEpochRunner
//     on_post_backward
//       HIGH (30)     GradientClip::clip_all_grads
//       NORMAL (50)   GradientNormLogger::log_grad_norm   [runtime]
//     on_post_step
//       NORMAL (50)   SrLogger::log   reads lr, output; writes sr    (a hook's `fields`)
//     on_epoch_end    -
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/core/order.hpp"
#include "hookforge/core/priority.hpp"

namespace hookforge {

/// One handler bound to one point, in firing order within the point.
struct binding_row {
  std::string_view point;
  std::string hook;
  std::string method;
  int priority;
  bool runtime;        ///< attached as an any_hook (config-driven)
  std::string fields;  ///< what the handler reads and writes (fields.hpp); "" when undeclared
};

namespace detail {
/// Appends `text` left-aligned in `width` columns (never cut), as {fmt}'s "{:<width}".
HOOKFORGE_INLINE void append_padded(std::string& out, std::string_view text, std::size_t width);

/// A static handler's row, known at compile time (hook_pack builds one array per point).
struct static_row {
  std::string_view hook;
  std::string_view method;
  int priority;
  order_key key;            ///< where runtime handlers merge in (order.hpp)
  std::string_view fields;  ///< "reads lr; writes sr" (fields.hpp); "" when undeclared
};

/// A runtime handler as runtime_hooks describes it for the table.
struct runtime_row {
  std::string hook;
  std::string method;
  int priority;
  std::string fields{};                             ///< as static_row's
  std::vector<std::string_view> reads{}, writes{};  ///< the same as names (fields.hpp)
};

/// Appends `point`'s rows: the static handlers `fixed` in firing order, with the runtime
/// ones (`dynamic`, attached at slot `runtime_index`) merged in by order.hpp's rule,
/// exactly as hook_pack fires them. One loop, compiled once, not code per point.
HOOKFORGE_INLINE void append_rows(std::vector<binding_row>& rows, std::string_view point,
                                  std::span<const static_row> fixed,
                                  std::span<const runtime_row> dynamic, std::size_t runtime_index);
}  // namespace detail

/// Render a runner's table; `points` lists every point so unbound ones show too.
// Plain string building: every hook_pack can print its table, and {fmt}'s
// formatting header would weigh on every TU that dispatches.
HOOKFORGE_INLINE std::string format_binding_table(std::string_view component,
                                                  std::span<const std::string_view> points,
                                                  std::span<const binding_row> rows);

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/core/binding_table-inl.hpp"
#endif
