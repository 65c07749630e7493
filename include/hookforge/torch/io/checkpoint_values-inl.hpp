// hookforge/torch/io/checkpoint_values-inl.hpp — the plain value section kinds'
// definitions: included by checkpoint_values.hpp header-only, compiled into
// hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/List.h>
#include <ATen/core/ivalue.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "hookforge/torch/io/checkpoint_section.hpp"
#include "hookforge/torch/io/checkpoint_values.hpp"
#include "hookforge/torch/io/state_map.hpp"

namespace hookforge::detail::ckpt {

HOOKFORGE_INLINE void encode_state(torch::serialize::OutputArchive& section,
                                   const state_map& state) {
  c10::List<std::string> keys;
  torch::serialize::OutputArchive values(section.compilation_unit());
  std::int64_t i = 0;
  for (const auto& [key, value] : state) {
    keys.push_back(key);
    values.write(std::to_string(i++), value);
  }
  section.write("keys", c10::IValue(keys));
  section.write("values", values);
}

HOOKFORGE_INLINE state_map decode_state(const stored_section& section) {
  const auto keys = section.read("keys").to<std::vector<std::string>>();
  torch::serialize::InputArchive values;
  section.archive.read("values", values);
  state_map state;
  for (std::size_t i = 0; i < keys.size(); ++i)
    state.emplace(keys[i], read_value(values, std::to_string(i)));
  return state;
}

HOOKFORGE_INLINE void encode_value(torch::serialize::OutputArchive& section,
                                   const c10::IValue& value) {
  section.write("value", value);
}

HOOKFORGE_INLINE c10::IValue decode_value(const stored_section& section) {
  return section.read("value");
}

}  // namespace hookforge::detail::ckpt
