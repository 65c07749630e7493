// hookforge/torch/io/state_map.hpp — the state a stateful component hands to checkpoints.
//
// Hooks, schedulers, scalers and stop conditions return a `state_dict` from
// `state_dict()` and take one in `load_state_dict()`. Values are IValues
// (tensors, ints, doubles, bools, strings, lists), so any of them round-trips
// exactly through a checkpoint file.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <ATen/core/ivalue.h>

namespace hookforge {

using state_map = std::map<std::string, c10::IValue>;

/// Store `inner`'s entries in `outer` as "<prefix>.<key>" (a component's state inside another's).
inline void nest_state(state_map& outer, std::string_view prefix, const state_map& inner) {
  for (const auto& [key, value] : inner) outer[std::string(prefix) + "." + key] = value;
}

/// The entries of `outer` stored under "<prefix>.", with the prefix removed.
inline state_map nested_state(const state_map& outer, std::string_view prefix) {
  const std::string head = std::string(prefix) + ".";
  state_map inner;
  for (auto it = outer.lower_bound(head); it != outer.end() && it->first.compare(0, head.size(), head) == 0; ++it)
    inner[it->first.substr(head.size())] = it->second;
  return inner;
}

}  // namespace hookforge
