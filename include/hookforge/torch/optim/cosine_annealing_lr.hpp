// hookforge/torch/optim/cosine_annealing_lr.hpp — CosineAnnealingLR, with PyTorch's Python semantics (see lr_scheduler.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>

#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2
/// (no restarts; past T_max the cosine keeps going, as Python's closed form).
class CosineAnnealingLR : public detail::closed_form_scheduler {
 public:
  CosineAnnealingLR(torch::optim::Optimizer& optimizer, std::int64_t T_max, double eta_min = 0.0)
      : closed_form_scheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
    if (T_max <= 0) throw std::invalid_argument("hookforge: CosineAnnealingLR needs T_max > 0");
    step();
  }

  hookforge::state_map state_dict() const override {
    auto state = lr_scheduler::state_dict();
    state["T_max"] = T_max_;
    state["eta_min"] = eta_min_;
    return state;
  }
  void load_state_dict(const hookforge::state_map& state) override {
    const auto T_max = detail::lr_state::get_int(state, "T_max", "CosineAnnealingLR");
    const auto eta_min = detail::lr_state::get_double(state, "eta_min", "CosineAnnealingLR");
    lr_scheduler::load_state_dict(state);
    T_max_ = T_max;
    eta_min_ = eta_min;
  }

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override {
    const double angle = std::numbers::pi * static_cast<double>(epoch) / static_cast<double>(T_max_);
    return eta_min_ + (base_lr - eta_min_) * (1.0 + std::cos(angle)) / 2.0;
  }

  std::int64_t T_max_;
  double eta_min_;
};

}  // namespace hookforge
