// hookforge/torch/data/criterion-inl.hpp — total_loss's definition: included by
// criterion.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/config.hpp).
#pragma once

#include "hookforge/torch/data/criterion.hpp"

namespace hookforge {

HOOKFORGE_INLINE torch::Tensor total_loss(const loss_terms& terms) {
  torch::Tensor total;
  for (const auto& [name, value] : terms) total = total.defined() ? total + value : value;
  return total;
}

}  // namespace hookforge
