// hookforge/torch/weights/named_tensors-inl.hpp — state_dict's definition: included by
// named_tensors.hpp header-only, compiled into hookforge::torch_compiled otherwise.
#pragma once

#include <string>

#include <torch/nn/module.h>

#include "hookforge/torch/weights/named_tensors.hpp"

namespace hookforge {

HOOKFORGE_INLINE named_tensors state_dict(const torch::nn::Module& module) {
  named_tensors out;
  for (const auto& item : module.named_modules(/*name_prefix=*/"", /*include_self=*/true)) {
    const std::string prefix = item.key().empty() ? std::string() : item.key() + ".";
    for (const auto& p : item.value()->named_parameters(/*recurse=*/false))
      if (p.value().defined()) out.emplace_back(prefix + p.key(), p.value());
    for (const auto& b : item.value()->named_buffers(/*recurse=*/false))
      if (b.value().defined()) out.emplace_back(prefix + b.key(), b.value());
  }
  return out;
}

}  // namespace hookforge
