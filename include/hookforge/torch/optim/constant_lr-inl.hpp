// hookforge/torch/optim/constant_lr-inl.hpp — ConstantLR's definitions: included by
// constant_lr.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "hookforge/torch/optim/constant_lr.hpp"

namespace hookforge {

HOOKFORGE_INLINE ConstantLR::ConstantLR(torch::optim::Optimizer& optimizer, double factor,
                                        std::int64_t total_iters)
    : closed_form_scheduler(optimizer), factor_(factor), total_iters_(total_iters) {
  if (!(factor >= 0.0 && factor <= 1.0))
    throw std::invalid_argument("hookforge: ConstantLR needs 0 <= factor <= 1");
  if (total_iters <= 0)
    throw std::invalid_argument("hookforge: ConstantLR needs total_iters >= 1, got " +
                                std::to_string(total_iters));
  step();
}

HOOKFORGE_INLINE double ConstantLR::lr_at(double base_lr, std::int64_t epoch) const {
  // Python's closed form, term for term: factor + (epoch >= total_iters) * (1 - factor).
  const double done = epoch >= total_iters_ ? 1.0 : 0.0;
  return base_lr * (factor_ + done * (1.0 - factor_));
}

HOOKFORGE_INLINE ConstantLR::parameter_list ConstantLR::saved_parameters() {
  return {"ConstantLR", {{"factor", &factor_}, {"total_iters", &total_iters_}}};
}

}  // namespace hookforge
