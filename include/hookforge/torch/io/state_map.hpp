// hookforge/torch/io/state_map.hpp — the state a stateful component hands to checkpoints.
//
// Hooks, schedulers, scalers and stop conditions return a `state_dict` from
// `state_dict()` and take one in `load_state_dict()`. Values are IValues
// (tensors, ints, doubles, bools, strings, lists), so any of them round-trips
// exactly through a checkpoint file.
//
// load_state_dict() reads each entry with state_value<T>(state, owner, key), the one reader
// of a saved state: a missing entry or one of another kind is a std::invalid_argument of one
// shape, naming the owner, the key and what the state holds instead:
//   GradScaler: the saved state has no 'scale' (it has: 'backoff_factor', 'growth_factor')
//   StepLR: the saved state's 'gamma' is a String, expected a number
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include "hookforge/core/build_mode.hpp"

namespace hookforge {

using state_map = std::map<std::string, c10::IValue>;

/// Store `inner`'s entries in `outer` as "<prefix>.<key>" (a component's state inside another's).
HOOKFORGE_INLINE void nest_state(state_map& outer, std::string_view prefix, const state_map& inner);

/// The entries of `outer` stored under "<prefix>.", with the prefix removed.
HOOKFORGE_INLINE state_map nested_state(const state_map& outer, std::string_view prefix);

/// Strings as a state entry (a list of str), which state_value<std::vector<std::string>> reads.
HOOKFORGE_INLINE c10::List<std::string> string_list(const std::vector<std::string>& strings);

namespace detail {
/// state[key], or std::invalid_argument naming `owner`, the key and the keys there are.
HOOKFORGE_INLINE const c10::IValue& state_entry(const state_map& state, std::string_view owner,
                                                std::string_view key);
/// std::invalid_argument: `owner`'s entry `key` holds `value`, not `expected`.
[[noreturn]] HOOKFORGE_INLINE void wrong_state_kind(std::string_view owner, std::string_view key,
                                                    const c10::IValue& value,
                                                    std::string_view expected);
}  // namespace detail

/// state[key] as a T: c10::IValue (as stored), bool, std::int64_t, double (an integer
/// converts), std::string, std::vector<std::int64_t>, std::vector<double>,
/// std::vector<std::string> or at::Tensor. See the top of this file for the errors;
/// `owner` names the component ("" leaves the prefix out).
template <class T = c10::IValue>
T state_value(const state_map& state, std::string_view owner, std::string_view key) {
  const c10::IValue& value = detail::state_entry(state, owner, key);
  const auto expect = [&](bool ok, std::string_view what) {
    if (!ok) detail::wrong_state_kind(owner, key, value, what);
  };
  if constexpr (std::is_same_v<T, c10::IValue>) {
    return value;
  } else if constexpr (std::is_same_v<T, bool>) {
    expect(value.isBool(), "a boolean");
    return value.toBool();
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    expect(value.isInt(), "an integer");
    return value.toInt();
  } else if constexpr (std::is_same_v<T, double>) {
    expect(value.isDouble() || value.isInt(), "a number");
    return value.isDouble() ? value.toDouble() : static_cast<double>(value.toInt());
  } else if constexpr (std::is_same_v<T, std::string>) {
    expect(value.isString(), "a string");
    return value.toStringRef();
  } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
    expect(value.isIntList(), "a list of integers");
    return value.toIntVector();
  } else if constexpr (std::is_same_v<T, std::vector<double>>) {
    expect(value.isDoubleList(), "a list of numbers");
    return value.toDoubleVector();
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    expect(value.isList(), "a list of strings");
    T out;
    for (const auto& item : value.toListRef()) {
      expect(item.isString(), "a list of strings");
      out.push_back(item.toStringRef());
    }
    return out;
  } else {
    static_assert(std::is_same_v<T, at::Tensor>,
                  "hookforge::state_value<T>: T is not a state type");
    expect(value.isTensor(), "a tensor");
    return value.toTensor();
  }
}

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/state_map-inl.hpp"
#endif
