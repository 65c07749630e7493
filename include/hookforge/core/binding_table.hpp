// hookforge/core/binding_table.hpp — a runner's resolved bindings, for people.
//
//   fmt::print("{}", runner.hooks().format_table());   // or, from rows you hold:
//   hookforge::format_binding_table(name, hookforge::points_of<Runner>::names, rows);
//
//   TrainingEpochRunner
//     on_post_backward
//       HIGH (30)     GradientClip::clip_all_grads
//       NORMAL (50)   GradientNormLogger::log_grad_norm   [runtime]
//     on_epoch_end    -
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

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

/// Render a component's table; `points` lists every point so unbound ones show too.
inline std::string format_binding_table(std::string_view component,
                                        std::span<const std::string_view> points,
                                        std::span<const binding_row> rows) {
  std::string out = fmt::format("{}\n", component);
  for (auto p : points) {
    bool any = false;
    for (const auto& r : rows) {
      if (r.point != p) continue;
      if (!any) out += fmt::format("  {}\n", p);
      any = true;
      out += fmt::format("    {:<18} {}::{}{}\n",
                         fmt::format("{} ({})", priority::name_of(r.priority), r.priority), r.hook,
                         r.method, r.runtime ? "   [runtime]" : "");
    }
    if (!any) out += fmt::format("  {:<28} -\n", p);
  }
  return out;
}

}  // namespace hookforge
