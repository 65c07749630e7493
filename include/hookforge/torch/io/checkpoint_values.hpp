// hookforge/torch/io/checkpoint_values.hpp — the section kinds of plain values: a
// "state_dict" (a state_map: any IValues under free-text keys), an "int" and a "double".
//
//   kind    "state_dict"        kind   "int" or "double"
//   keys    ["step", ...]       value  the value
//   values  {"0": IValue, ...}
#pragma once

#include <torch/serialize/output-archive.h>

#include <ATen/core/ivalue.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/io/checkpoint_section.hpp"
#include "hookforge/torch/io/state_map.hpp"

namespace hookforge::detail::ckpt {

// A state_dict section: the keys in `state`'s order, each value under its index.
HOOKFORGE_INLINE void encode_state(torch::serialize::OutputArchive& section,
                                   const state_map& state);
HOOKFORGE_INLINE state_map decode_state(const stored_section& section);

// An int or double section: one value.
HOOKFORGE_INLINE void encode_value(torch::serialize::OutputArchive& section,
                                   const c10::IValue& value);
HOOKFORGE_INLINE c10::IValue decode_value(const stored_section& section);

}  // namespace hookforge::detail::ckpt

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/checkpoint_values-inl.hpp"
#endif
