// hookforge/torch/optim/exponential_lr-inl.hpp — ExponentialLR's definitions: included by
// exponential_lr.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "hookforge/torch/optim/exponential_lr.hpp"

namespace hookforge {

HOOKFORGE_INLINE ExponentialLR::ExponentialLR(torch::optim::Optimizer& optimizer, double gamma)
    : closed_form_scheduler(optimizer), gamma_(gamma) {
  step();
}

HOOKFORGE_INLINE double ExponentialLR::lr_at(double base_lr, std::int64_t epoch) const {
  return base_lr * std::pow(gamma_, static_cast<double>(epoch));
}

HOOKFORGE_INLINE ExponentialLR::parameter_list ExponentialLR::saved_parameters() {
  return {"ExponentialLR", {{"gamma", &gamma_}}};
}

}  // namespace hookforge
