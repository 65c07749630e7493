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

#include "hookforge/core/config.hpp"

namespace hookforge {

using state_map = std::map<std::string, c10::IValue>;

/// Store `inner`'s entries in `outer` as "<prefix>.<key>" (a component's state inside another's).
HOOKFORGE_INLINE void nest_state(state_map& outer, std::string_view prefix, const state_map& inner);

/// The entries of `outer` stored under "<prefix>.", with the prefix removed.
HOOKFORGE_INLINE state_map nested_state(const state_map& outer, std::string_view prefix);

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/state_map-inl.hpp"
#endif
