// hookforge/torch/io/state_map-inl.hpp — nest_state's and nested_state's definitions:
// included by state_map.hpp header-only, compiled into hookforge::torch_compiled otherwise.
#pragma once

#include <string>
#include <string_view>

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

}  // namespace hookforge
