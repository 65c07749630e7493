// hookforge/torch/optim/step_lr.hpp — StepLR, with PyTorch's Python semantics (see lr_scheduler.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// lr = base_lr * gamma^(epoch / step_size): decays by gamma every step_size epochs.
class StepLR : public detail::closed_form_scheduler {
 public:
  StepLR(torch::optim::Optimizer& optimizer, std::int64_t step_size, double gamma = 0.1)
      : closed_form_scheduler(optimizer), step_size_(step_size), gamma_(gamma) {
    if (step_size <= 0) throw std::invalid_argument("hookforge: StepLR needs step_size > 0");
    step();
  }

  hookforge::state_map state_dict() const override {
    auto state = lr_scheduler::state_dict();
    state["step_size"] = step_size_;
    state["gamma"] = gamma_;
    return state;
  }
  void load_state_dict(const hookforge::state_map& state) override {
    const auto step_size = detail::lr_state::get_int(state, "step_size", "StepLR");
    const auto gamma = detail::lr_state::get_double(state, "gamma", "StepLR");
    lr_scheduler::load_state_dict(state);
    step_size_ = step_size;
    gamma_ = gamma;
  }

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override {
    return base_lr * std::pow(gamma_, static_cast<double>(epoch / step_size_));
  }

  std::int64_t step_size_;
  double gamma_;
};

}  // namespace hookforge
