// hookforge/core/runtime/closest_names.hpp — the names nearest to a misspelled one.
//
// One rule for every "did you mean" in hookforge: a point name a runtime hook binds to
// (runtime_hooks.hpp), and in a config a `_target`, a parameter, a key, a priority level
// (hookforge/config/), an option of hookforge-run. The nearest names are all those at the
// least edit distance:
//
//   hookforge::closest_names("theads", names).first  // {"threads"}
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace hookforge {

/// Levenshtein distance between two names.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// The names in `candidates` nearest to `name` (all those at the least distance) and that distance.
/// Only the first 256 characters of `name` are compared: a longer one is no typo of a short name,
/// and a value of a megabyte (a config's interpolation can make one) would otherwise cost
/// seconds per candidate (the config fuzzer found it).
inline std::pair<std::vector<std::string_view>, std::size_t> closest_names(
    std::string_view name, std::span<const std::string_view> candidates) {
  name = name.substr(0, 256);
  std::vector<std::string_view> best;
  std::size_t least = static_cast<std::size_t>(-1);
  for (auto c : candidates) {
    auto d = edit_distance(name, c);
    if (d < least) best.clear(), least = d;
    if (d == least) best.push_back(c);
  }
  return {best, least};
}

}  // namespace hookforge
