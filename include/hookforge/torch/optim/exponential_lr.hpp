// hookforge/torch/optim/exponential_lr.hpp — ExponentialLR, with PyTorch's Python semantics (see lr_scheduler.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// lr = base_lr * gamma^epoch.
class ExponentialLR : public detail::closed_form_scheduler {
 public:
  ExponentialLR(torch::optim::Optimizer& optimizer, double gamma)
      : closed_form_scheduler(optimizer), gamma_(gamma) {
    step();
  }

  hookforge::state_map state_dict() const override {
    auto state = lr_scheduler::state_dict();
    state["gamma"] = gamma_;
    return state;
  }
  void load_state_dict(const hookforge::state_map& state) override {
    const auto gamma = detail::lr_state::get_double(state, "gamma", "ExponentialLR");
    lr_scheduler::load_state_dict(state);
    gamma_ = gamma;
  }

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override {
    return base_lr * std::pow(gamma_, static_cast<double>(epoch));
  }

  double gamma_;
};

}  // namespace hookforge
