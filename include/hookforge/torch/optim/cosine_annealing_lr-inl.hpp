// hookforge/torch/optim/cosine_annealing_lr-inl.hpp — CosineAnnealingLR's definitions:
// included by cosine_annealing_lr.hpp header-only, compiled into
// hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>

#include "hookforge/torch/optim/cosine_annealing_lr.hpp"

namespace hookforge {

HOOKFORGE_INLINE CosineAnnealingLR::CosineAnnealingLR(torch::optim::Optimizer& optimizer,
                                                      std::int64_t T_max, double eta_min)
    : closed_form_scheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  if (T_max <= 0) throw std::invalid_argument("hookforge: CosineAnnealingLR needs T_max > 0");
  step();
}

HOOKFORGE_INLINE hookforge::state_map CosineAnnealingLR::state_dict() const {
  auto state = lr_scheduler::state_dict();
  state["T_max"] = T_max_;
  state["eta_min"] = eta_min_;
  return state;
}

HOOKFORGE_INLINE void CosineAnnealingLR::load_state_dict(const hookforge::state_map& state) {
  const auto T_max = state_value<std::int64_t>(state, "CosineAnnealingLR", "T_max");
  const auto eta_min = state_value<double>(state, "CosineAnnealingLR", "eta_min");
  lr_scheduler::load_state_dict(state);
  T_max_ = T_max;
  eta_min_ = eta_min;
}

HOOKFORGE_INLINE double CosineAnnealingLR::lr_at(double base_lr, std::int64_t epoch) const {
  const double angle = std::numbers::pi * static_cast<double>(epoch) / static_cast<double>(T_max_);
  return eta_min_ + (base_lr - eta_min_) * (1.0 + std::cos(angle)) / 2.0;
}

}  // namespace hookforge
