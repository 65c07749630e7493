// hookforge/torch/io/checkpoint_module.hpp — the "module" section kind: a module's
// parameters and buffers by their dotted names, and their all-or-nothing load.
//
//   kind        "module"
//   parameters  {"0.weight": tensor, ...}
//   buffers     {"encoder.bn.running_mean": tensor, ...}
#pragma once

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/ordered_dict.h>
#include <torch/serialize/output-archive.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/io/checkpoint_section.hpp"

namespace hookforge::detail::ckpt {

// Every defined parameter and buffer of `module` (recursively) into `section`.
HOOKFORGE_INLINE void encode_module(torch::serialize::OutputArchive& section,
                                    const torch::nn::Module& module);

using named_tensors = std::vector<std::pair<std::string, torch::Tensor>>;

// A module's tensors against stored ones, by name: the one rule a checkpoint's load and
// load_pretrained (io/pretrained.hpp) match by. Each list keeps the order it was found in.
struct tensor_match {
  std::vector<std::pair<torch::Tensor, torch::Tensor>> copies;  // (into, from): same shape
  named_tensors missing;                                        // the module's, not stored
  std::vector<std::tuple<std::string, torch::Tensor, torch::Tensor>>
      misshaped;             // (name, into, from)
  named_tensors unexpected;  // stored, not the module's
};

// Every defined tensor of `expected` against `stored`.
HOOKFORGE_INLINE tensor_match match_tensors(
    const torch::OrderedDict<std::string, torch::Tensor>& expected, const named_tensors& stored);

// Checks every parameter and buffer of `module` (names and shapes) against `section` before
// any is copied; a mismatch throws naming each offending tensor with both shapes. Values
// are copied into the existing tensors (device and dtype of the module are kept).
HOOKFORGE_INLINE void decode_module(const stored_section& section, torch::nn::Module& module);

// Every tensor of `section` by its dotted name: the parameters, then the buffers.
HOOKFORGE_INLINE named_tensors module_tensors(const stored_section& section);

}  // namespace hookforge::detail::ckpt

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/checkpoint_module-inl.hpp"
#endif
