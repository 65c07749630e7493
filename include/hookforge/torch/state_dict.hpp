// hookforge/torch/state_dict.hpp — the state a stateful component hands to checkpoints.
//
// Hooks, schedulers, scalers and stop conditions return a `state_dict` from
// `state_dict()` and take one in `load_state_dict()`. Values are IValues
// (tensors, ints, doubles, bools, strings, lists), so any of them round-trips
// exactly through a checkpoint file.
#pragma once

#include <map>
#include <string>

#include <ATen/core/ivalue.h>

namespace hookforge {

using state_dict = std::map<std::string, c10::IValue>;

}  // namespace hookforge
