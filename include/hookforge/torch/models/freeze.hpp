// hookforge/torch/models/freeze.hpp — parameters kept out of training by name: a teacher in
// distillation, a pretrained backbone.
//
//   auto frozen = hookforge::freeze(*model, {"backbone.*", "head.0.bias"});
//   torch::optim::Adam optimizer(hookforge::trainable_parameters(*model), 1e-4);
//
// A pattern is a shell-style wildcard over the dotted parameter names (fnmatch: `*` and `?`
// match any characters, dots included; `[...]` a class). Frozen parameters get
// requires_grad(false), so backward computes no gradient for them and an optimiser given
// trainable_parameters() never sees them. A pattern that matches no parameter is an error
// listing the names (a typo would otherwise train what was meant to be frozen).
#pragma once

#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"

namespace hookforge {

/// Sets requires_grad(false) on every parameter of `module` whose name matches one of
/// `patterns`; returns their names. std::invalid_argument for a pattern matching nothing.
std::vector<std::string> freeze(torch::nn::Module& module,
                                const std::vector<std::string>& patterns);

/// The parameters of `module` that require a gradient, in named_parameters() order.
std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& module);

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/models/freeze-inl.hpp"
#endif
