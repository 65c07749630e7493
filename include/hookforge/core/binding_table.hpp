// hookforge/core/binding_table.hpp — a runner's resolved bindings, for people.
//
//   std::cout << runner.hooks().format_table();   // format_binding_table(name, points, rows)
//
//   TrainingEpochRunner
//     on_post_backward
//       HIGH (30)     GradientClip::clip_all_grads
//       NORMAL (50)   GradientNormLogger::log_grad_norm   [runtime]
//     on_epoch_end    -
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hookforge/core/priority.hpp"

namespace hookforge {

/// One handler bound to one point, in firing order within the point.
struct binding_row {
  std::string_view point;
  std::string hook;
  std::string method;
  int priority;
  bool runtime;  ///< attached as an any_hook (config-driven)
};

namespace detail {
/// `text` left-aligned in `width` columns (never cut), as {fmt}'s "{:<width}".
inline std::string padded(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}
}  // namespace detail

/// Render a component's table; `points` lists every point so unbound ones show too.
// Plain string building: every hook_pack can print its table, and {fmt}'s
// formatting header would weigh on every TU that dispatches.
inline std::string format_binding_table(std::string_view component,
                                        std::span<const std::string_view> points,
                                        std::span<const binding_row> rows) {
  std::string out = std::string(component) + "\n";
  for (auto p : points) {
    bool any = false;
    for (const auto& r : rows) {
      if (r.point != p) continue;
      if (!any) out.append("  ").append(p).append("\n");
      any = true;
      auto level = priority::name_of(r.priority) + " (" + std::to_string(r.priority) + ")";
      out.append("    ").append(detail::padded(std::move(level), 18)).append(" ");
      out.append(r.hook).append("::").append(r.method);
      out.append(r.runtime ? "   [runtime]\n" : "\n");
    }
    if (!any) out.append("  ").append(detail::padded(std::string(p), 28)).append(" -\n");
  }
  return out;
}

}  // namespace hookforge
