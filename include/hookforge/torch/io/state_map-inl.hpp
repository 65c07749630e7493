// hookforge/torch/io/state_map-inl.hpp — state_map's non-template functions: included by
// state_map.hpp header-only, compiled into hookforge::torch_compiled otherwise.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hookforge/torch/io/state_map.hpp"

namespace hookforge {

HOOKFORGE_INLINE void nest_state(state_map& outer, std::string_view prefix,
                                 const state_map& inner) {
  for (const auto& [key, value] : inner) outer[std::string(prefix) + "." + key] = value;
}

HOOKFORGE_INLINE state_map nested_state(const state_map& outer, std::string_view prefix) {
  const std::string head = std::string(prefix) + ".";
  state_map inner;
  for (auto it = outer.lower_bound(head);
       it != outer.end() && it->first.compare(0, head.size(), head) == 0; ++it)
    inner[it->first.substr(head.size())] = it->second;
  return inner;
}

HOOKFORGE_INLINE c10::List<std::string> string_list(const std::vector<std::string>& strings) {
  c10::List<std::string> list;
  for (const auto& s : strings) list.push_back(s);
  return list;
}

namespace detail {

HOOKFORGE_INLINE const c10::IValue& state_entry(const state_map& state, std::string_view owner,
                                                std::string_view key) {
  if (auto found = state.find(std::string(key)); found != state.end()) return found->second;
  constexpr std::size_t shown = 8;
  std::string keys;
  std::size_t n = 0;
  for (const auto& [name, value] : state) {
    if (n++ == shown) break;
    keys += (keys.empty() ? "'" : ", '") + name + "'";
  }
  if (state.size() > shown) keys += ", ... (" + std::to_string(state.size()) + " in all)";
  const std::string prefix = owner.empty() ? std::string() : std::string(owner) + ": ";
  throw std::invalid_argument(prefix + "the saved state has no '" + std::string(key) + "' (" +
                              (state.empty() ? std::string("it is empty") : "it has: " + keys) +
                              ")");
}

HOOKFORGE_INLINE void wrong_state_kind(std::string_view owner, std::string_view key,
                                       const c10::IValue& value, std::string_view expected) {
  const std::string prefix = owner.empty() ? std::string() : std::string(owner) + ": ";
  throw std::invalid_argument(prefix + "the saved state's '" + std::string(key) + "' is a " +
                              value.tagKind() + ", expected " + std::string(expected));
}

}  // namespace detail

}  // namespace hookforge
