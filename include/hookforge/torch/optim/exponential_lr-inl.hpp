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

HOOKFORGE_INLINE hookforge::state_map ExponentialLR::state_dict() const {
  auto state = lr_scheduler::state_dict();
  state["gamma"] = gamma_;
  return state;
}

HOOKFORGE_INLINE void ExponentialLR::load_state_dict(const hookforge::state_map& state) {
  const auto gamma = state_value<double>(state, "ExponentialLR", "gamma");
  lr_scheduler::load_state_dict(state);
  gamma_ = gamma;
}

HOOKFORGE_INLINE double ExponentialLR::lr_at(double base_lr, std::int64_t epoch) const {
  return base_lr * std::pow(gamma_, static_cast<double>(epoch));
}

}  // namespace hookforge
