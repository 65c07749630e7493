// hookforge/config/keys.hpp — "a mapping takes these keys": the check every reader of a
// mapping makes (an entry's keys, a class's parameters, a section's settings, a hook's
// handlers, a WeightedSum term), with one message shape:
//
//   run.yaml:4:5: system.theads: expected a key of system (device, seed, threads, work_dir,
//   mixed_precision), got 'theads' (closest: threads)
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/document.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/core/runtime/join.hpp"

namespace hookforge::config {

/// What a mapping may hold: `what` names it in messages ("a key of system", "a parameter of
/// Clip"); `names` are listed; `unlisted` are accepted without being listed (reserved
/// keys); `if_none` is the message when `names` is empty ("no parameters (X takes none)").
struct known_keys {
  std::string what;
  std::vector<std::string> names;
  std::span<const std::string_view> unlisted = {};
  std::string if_none = {};

  bool contains(std::string_view key) const {
    for (const auto& n : names)
      if (n == key) return true;
    for (auto u : unlisted)
      if (u == key) return true;
    return false;
  }

  /// "a key of system (device, seed)", or `if_none` when nothing is listed.
  std::string expected() const {
    if (names.empty() && !if_none.empty()) return if_none;
    return fmt::format("{} ({})", what, hookforge::join_names(names, ", "));
  }
};

/// Throws a config_error at the first key of the mapping `map` that `keys` does not hold,
/// with the closest names.
inline void check_keys(const value& map, const known_keys& keys) {
  for (const auto& item : map.items())
    if (!keys.contains(item.name))
      throw config_error(
          item.key.where(), item.val.key(), keys.expected(), detail::quote(item.name),
          keys.names.empty() ? std::string() : detail::closest_note(item.name, keys.names));
}

}  // namespace hookforge::config
