// hookforge/torch/weights/named_tensors.hpp — tensors by their dotted names, in the order a
// PyTorch state_dict lists them.
//
//   auto tensors = hookforge::state_dict(*model);   // {"body.0.weight", t}, {"body.0.bias", t},
//   ...
//
// PyTorch's `Module.state_dict()` walks the modules depth first and lists each module's own
// parameters, then its own buffers; `state_dict` here does the same, so a file written from
// it lists names in the order a Python user of the same architecture sees. A tensor the
// module registers under two names (tied weights) appears under both, as in PyTorch.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"

namespace hookforge {

/// Tensors by name, in the order they were found.
using named_tensors = std::vector<std::pair<std::string, torch::Tensor>>;

/// Every defined parameter and buffer of `module`, in PyTorch's state_dict order.
HOOKFORGE_INLINE named_tensors state_dict(const torch::nn::Module& module);

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/weights/named_tensors-inl.hpp"
#endif
