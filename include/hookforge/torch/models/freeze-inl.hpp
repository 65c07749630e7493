// hookforge/torch/models/freeze-inl.hpp — freeze's definitions: included by freeze.hpp
// header-only, compiled into hookforge::torch_compiled otherwise.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <fnmatch.h>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "hookforge/core/runtime/join.hpp"
#include "hookforge/torch/models/freeze.hpp"

namespace hookforge {

HOOKFORGE_INLINE std::vector<std::string> freeze(torch::nn::Module& module,
                                                 const std::vector<std::string>& patterns) {
  const auto parameters = module.named_parameters(/*recurse=*/true);
  std::vector<std::string> frozen;
  for (const auto& pattern : patterns) {
    bool matched = false;
    for (const auto& p : parameters) {
      if (::fnmatch(pattern.c_str(), p.key().c_str(), 0) != 0) continue;
      matched = true;
      if (!p.value().requires_grad()) continue;  // frozen by an earlier pattern
      p.value().set_requires_grad(false);
      frozen.push_back(p.key());
    }
    if (!matched)
      throw std::invalid_argument("freeze: pattern '" + pattern +
                                  "' matches no parameter of the model (" +
                                  join_names(parameters.keys(), ", ") + ")");
  }
  return frozen;
}

HOOKFORGE_INLINE std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& module) {
  std::vector<torch::Tensor> out;
  for (const auto& p : module.parameters(/*recurse=*/true))
    if (p.requires_grad()) out.push_back(p);
  return out;
}

}  // namespace hookforge
