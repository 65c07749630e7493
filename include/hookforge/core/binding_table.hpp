// hookforge/core/binding_table.hpp — a runner's resolved bindings, for people.
//
//   std::cout << runner.hooks().format_table();        // or, from rows you hold:
//   hookforge::format_binding_table(name, hookforge::points_of<Runner>::names, rows);
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
/// Appends `text` left-aligned in `width` columns (never cut), as {fmt}'s "{:<width}".
inline void append_padded(std::string& out, std::string_view text, std::size_t width) {
  out.append(text);
  if (text.size() < width) out.append(width - text.size(), ' ');
}
}  // namespace detail

/// Render a runner's table; `points` lists every point so unbound ones show too.
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
      out.append("    ");
      detail::append_padded(out, level, 18);
      out.append(" ");
      out.append(r.hook).append("::").append(r.method);
      out.append(r.runtime ? "   [runtime]\n" : "\n");
    }
    if (!any) {
      out.append("  ");
      detail::append_padded(out, p, 28);
      out.append(" -\n");
    }
  }
  return out;
}

}  // namespace hookforge
