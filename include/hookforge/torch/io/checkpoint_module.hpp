// hookforge/torch/io/checkpoint_module.hpp — the "module" section kind: a module's
// parameters and buffers by their dotted names, and their all-or-nothing load.
//
//   kind        "module"
//   parameters  {"0.weight": tensor, ...}
//   buffers     {"encoder.bn.running_mean": tensor, ...}
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/serialize/output-archive.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/io/checkpoint_section.hpp"

namespace hookforge::detail::ckpt {

// Every defined parameter and buffer of `module` (recursively) into `section`.
HOOKFORGE_INLINE void encode_module(torch::serialize::OutputArchive& section,
                                    const torch::nn::Module& module);

// Checks every parameter and buffer of `module` (names and shapes) against `section` before
// any is copied; a mismatch throws naming each offending tensor with both shapes. Values
// are copied into the existing tensors (device and dtype of the module are kept).
HOOKFORGE_INLINE void decode_module(const stored_section& section, torch::nn::Module& module);

// Every tensor of `section` by its dotted name: the parameters, then the buffers.
HOOKFORGE_INLINE std::vector<std::pair<std::string, torch::Tensor>> module_tensors(
    const stored_section& section);

}  // namespace hookforge::detail::ckpt

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/checkpoint_module-inl.hpp"
#endif
