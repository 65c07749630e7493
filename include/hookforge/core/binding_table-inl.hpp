// hookforge/core/binding_table-inl.hpp — format_binding_table's definition: included by
// binding_table.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hookforge/core/binding_table.hpp"
#include "hookforge/core/order.hpp"
#include "hookforge/core/priority.hpp"

namespace hookforge {

namespace detail {

HOOKFORGE_INLINE void append_padded(std::string& out, std::string_view text, std::size_t width) {
  out.append(text);
  if (text.size() < width) out.append(width - text.size(), ' ');
}

HOOKFORGE_INLINE void append_rows(std::vector<binding_row>& rows, std::string_view point,
                                  std::span<const static_row> fixed,
                                  std::span<const runtime_row> dynamic, std::size_t runtime_index) {
  std::size_t r = 0;
  // The runtime rows not yet appended that run before `next` (all of them without one).
  auto append_dynamic_before = [&](const order_key* next) {
    for (;
         r < dynamic.size() && (!next || runs_before({dynamic[r].priority, runtime_index}, *next));
         ++r)
      rows.push_back({point, dynamic[r].hook, dynamic[r].method, dynamic[r].priority, true,
                      dynamic[r].fields});
  };
  for (const auto& f : fixed) {
    append_dynamic_before(&f.key);
    rows.push_back({point, std::string(f.hook), std::string(f.method), f.priority, false,
                    std::string(f.fields)});
  }
  append_dynamic_before(nullptr);
}

}  // namespace detail

HOOKFORGE_INLINE std::string format_binding_table(std::string_view component,
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
      if (!r.fields.empty()) out.append("   ").append(r.fields);
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
