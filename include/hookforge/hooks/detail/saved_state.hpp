// hookforge/hooks/detail/saved_state.hpp — typed, checked reads of a hook's saved state.
//
// load_state_dict() of a built-in hook reads every entry through saved<T>(), so a state
// that lacks an entry or holds another type is a std::invalid_argument naming the hook
// and the entry (the trainer's load then names the file and section, and undoes itself).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "hookforge/torch/io/state_map.hpp"

namespace hookforge::detail {

/// state[key] as a T (std::string, double, std::int64_t or std::vector<std::string>).
template <class T>
T saved(const state_map& state, const char* hook, const char* key) {
  auto it = state.find(key);
  if (it == state.end())
    throw std::invalid_argument(fmt::format("{}: the saved state has no '{}'", hook, key));
  const c10::IValue& value = it->second;
  auto wrong = [&](const char* kind) {
    return std::invalid_argument(
        fmt::format("{}: the saved state's '{}' is not {}", hook, key, kind));
  };
  if constexpr (std::is_same_v<T, std::string>) {
    if (!value.isString()) throw wrong("a string");
    return value.toStringRef();
  } else if constexpr (std::is_same_v<T, double>) {
    if (!value.isDouble()) throw wrong("a number");
    return value.toDouble();
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    if (!value.isInt()) throw wrong("an integer");
    return value.toInt();
  } else {
    static_assert(std::is_same_v<T, std::vector<std::string>>, "saved<T>: an unsupported type");
    if (!value.isList()) throw wrong("a list of strings");
    T out;
    for (const auto& item : value.toListRef()) {
      if (!item.isString()) throw wrong("a list of strings");
      out.push_back(item.toStringRef());
    }
    return out;
  }
}

/// Strings as a state entry (a list of str).
inline c10::List<std::string> string_list(const std::vector<std::string>& strings) {
  c10::List<std::string> list;
  for (const auto& s : strings) list.push_back(s);
  return list;
}

}  // namespace hookforge::detail
