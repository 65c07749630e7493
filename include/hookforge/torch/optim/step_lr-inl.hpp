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

HOOKFORGE_INLINE hookforge::state_map StepLR::state_dict() const {
  auto state = lr_scheduler::state_dict();
  state["step_size"] = step_size_;
  state["gamma"] = gamma_;
  return state;
}

HOOKFORGE_INLINE void StepLR::load_state_dict(const hookforge::state_map& state) {
  const auto step_size = state_value<std::int64_t>(state, "StepLR", "step_size");
  const auto gamma = state_value<double>(state, "StepLR", "gamma");
  lr_scheduler::load_state_dict(state);
  step_size_ = step_size;
  gamma_ = gamma;
}

HOOKFORGE_INLINE double StepLR::lr_at(double base_lr, std::int64_t epoch) const {
  return base_lr * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

}  // namespace hookforge
