// hookforge/torch/optim/step_lr-inl.hpp — StepLR's definitions: included by
// step_lr.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "hookforge/torch/optim/step_lr.hpp"

namespace hookforge {

HOOKFORGE_INLINE StepLR::StepLR(torch::optim::Optimizer& optimizer, std::int64_t step_size,
                                double gamma)
    : closed_form_scheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  if (step_size <= 0) throw std::invalid_argument("hookforge: StepLR needs step_size > 0");
  step();
}

HOOKFORGE_INLINE double StepLR::lr_at(double base_lr, std::int64_t epoch) const {
  return base_lr * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

HOOKFORGE_INLINE StepLR::parameter_list StepLR::saved_parameters() {
  return {"StepLR", {{"step_size", &step_size_}, {"gamma", &gamma_}}};
}

}  // namespace hookforge
