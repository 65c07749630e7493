// hookforge/core/priority.hpp — handler order within one point (MMEngine's scale).
//
// Lower runs first; equal priorities keep attach order. A hook's priority comes
// from the attach call (`with_priority<...>(hook)`), else its
// `static constexpr int priority`, else NORMAL.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hookforge::priority {

inline constexpr int HIGHEST = 0;
inline constexpr int VERY_HIGH = 10;
inline constexpr int HIGH = 30;
inline constexpr int ABOVE_NORMAL = 40;
inline constexpr int NORMAL = 50;
inline constexpr int BELOW_NORMAL = 60;
inline constexpr int LOW = 70;
inline constexpr int VERY_LOW = 90;
inline constexpr int LOWEST = 100;

constexpr bool in_range(int value) { return value >= HIGHEST && value <= LOWEST; }

/// A named level: the names configs write and tables print.
struct level {
  std::string_view name;
  int value;
};

/// Every named level, highest first.
inline constexpr level levels[] = {{"HIGHEST", HIGHEST}, {"VERY_HIGH", VERY_HIGH},
                                   {"HIGH", HIGH},       {"ABOVE_NORMAL", ABOVE_NORMAL},
                                   {"NORMAL", NORMAL},   {"BELOW_NORMAL", BELOW_NORMAL},
                                   {"LOW", LOW},         {"VERY_LOW", VERY_LOW},
                                   {"LOWEST", LOWEST}};

/// "HIGH" -> 30; nullopt for an unknown name (config files name levels).
constexpr std::optional<int> from_name(std::string_view name) {
  for (const auto& l : levels)
    if (l.name == name) return l.value;
  return std::nullopt;
}

/// 30 -> "HIGH"; other values print as numbers.
inline std::string name_of(int value) {
  for (const auto& l : levels)
    if (l.value == value) return std::string(l.name);
  return std::to_string(value);
}

}  // namespace hookforge::priority
