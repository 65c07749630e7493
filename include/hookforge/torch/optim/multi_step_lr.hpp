// hookforge/torch/optim/multi_step_lr.hpp — MultiStepLR, with PyTorch's Python semantics (see lr_scheduler.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// lr = base_lr * gamma^(number of milestones <= epoch); a milestone listed twice counts twice.
class MultiStepLR : public detail::closed_form_scheduler {
 public:
  MultiStepLR(torch::optim::Optimizer& optimizer, std::vector<std::int64_t> milestones, double gamma = 0.1)
      : closed_form_scheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
    std::sort(milestones_.begin(), milestones_.end());
    step();
  }

  hookforge::state_map state_dict() const override {
    auto state = lr_scheduler::state_dict();
    state["milestones"] = milestones_;
    state["gamma"] = gamma_;
    return state;
  }
  void load_state_dict(const hookforge::state_map& state) override {
    auto milestones = detail::lr_state::entry(state, "milestones", "MultiStepLR").toIntVector();
    const auto gamma = detail::lr_state::get_double(state, "gamma", "MultiStepLR");
    lr_scheduler::load_state_dict(state);
    milestones_ = std::move(milestones);
    gamma_ = gamma;
  }

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override {
    auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
    return base_lr * std::pow(gamma_, static_cast<double>(passed));
  }

  std::vector<std::int64_t> milestones_;  // sorted
  double gamma_;
};

}  // namespace hookforge
