// hookforge/config/detail/dotted_path.hpp — dotted paths (`a.hooks.0.params`): split into
// keys, a list index read, a key joined on.
//
// What makes a path valid is interpolation.hpp's path_problem.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace hookforge::config::detail {

inline std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  while (true) {
    auto dot = path.find('.');
    out.push_back(path.substr(0, dot));
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return out;
}

inline std::optional<std::size_t> parse_index(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  std::size_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  return n;
}

inline std::string join_key(std::string_view parent, std::string_view name) {
  if (parent.empty()) return std::string(name);
  return fmt::format("{}.{}", parent, name);
}

}  // namespace hookforge::config::detail
