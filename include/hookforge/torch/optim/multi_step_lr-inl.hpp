// hookforge/torch/optim/multi_step_lr-inl.hpp — MultiStepLR's definitions: included by
// multi_step_lr.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "hookforge/torch/optim/multi_step_lr.hpp"

namespace hookforge {

HOOKFORGE_INLINE MultiStepLR::MultiStepLR(torch::optim::Optimizer& optimizer,
                                          std::vector<std::int64_t> milestones, double gamma)
    : closed_form_scheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  step();
}

HOOKFORGE_INLINE hookforge::state_map MultiStepLR::state_dict() const {
  auto state = lr_scheduler::state_dict();
  state["milestones"] = milestones_;
  state["gamma"] = gamma_;
  return state;
}

HOOKFORGE_INLINE void MultiStepLR::load_state_dict(const hookforge::state_map& state) {
  auto milestones = state_value<std::vector<std::int64_t>>(state, "MultiStepLR", "milestones");
  const auto gamma = state_value<double>(state, "MultiStepLR", "gamma");
  lr_scheduler::load_state_dict(state);
  milestones_ = std::move(milestones);
  gamma_ = gamma;
}

HOOKFORGE_INLINE double MultiStepLR::lr_at(double base_lr, std::int64_t epoch) const {
  auto passed =
      std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return base_lr * std::pow(gamma_, static_cast<double>(passed));
}

}  // namespace hookforge
