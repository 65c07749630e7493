// hookforge/config/detail/source.hpp — where a config's node came from: the file or one
// `--set`, and the location a YAML mark stands for in it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/mark.h>

#include "hookforge/config/error.hpp"

namespace hookforge::config::detail {

/// Where a node came from: the file, or one `--set` (whose nodes count columns from its value).
struct source {
  std::string name;  ///< the file, or "<--set a.b=v>"
  std::string path;  ///< a --set's dotted path; empty for the file
  std::size_t column_offset = 0;
};

struct source_table {
  std::shared_ptr<const source> file;
  std::vector<std::shared_ptr<const source>> overrides;  ///< in the order given

  /// The source of the node at dotted `path`: the last --set at or above it, else the file.
  std::shared_ptr<const source> of(std::string_view path) const {
    for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
      const auto& p = (*it)->path;
      if (path == p || (path.size() > p.size() && path.starts_with(p) && path[p.size()] == '.'))
        return *it;
    }
    return file;
  }
};

/// The place yaml-cpp's `mark` (0-based) stands for in `src`; 1:1 for a null mark.
inline location locate(const YAML::Mark& mark, const source& src) {
  if (mark.is_null()) return {src.name, 1, 1};
  return {src.name, static_cast<std::size_t>(mark.line) + 1,
          static_cast<std::size_t>(mark.column) + 1 + src.column_offset};
}

}  // namespace hookforge::config::detail
