// hookforge/torch/optim/polynomial_lr-inl.hpp — PolynomialLR's definitions: included by
// polynomial_lr.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "hookforge/torch/optim/polynomial_lr.hpp"

namespace hookforge {

HOOKFORGE_INLINE PolynomialLR::PolynomialLR(torch::optim::Optimizer& optimizer,
                                            std::int64_t total_iters, double power)
    : closed_form_scheduler(optimizer), total_iters_(total_iters), power_(power) {
  if (total_iters <= 0)
    throw std::invalid_argument("hookforge: PolynomialLR needs total_iters > 0");
  step();
}

HOOKFORGE_INLINE double PolynomialLR::lr_at(double base_lr, std::int64_t epoch) const {
  const auto done = static_cast<double>(std::min(total_iters_, epoch));
  return base_lr * std::pow(1.0 - done / static_cast<double>(total_iters_), power_);
}

HOOKFORGE_INLINE PolynomialLR::parameter_list PolynomialLR::saved_parameters() {
  return {"PolynomialLR", {{"total_iters", &total_iters_}, {"power", &power_}}};
}

}  // namespace hookforge
