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

HOOKFORGE_INLINE double CosineAnnealingLR::lr_at(double base_lr, std::int64_t epoch) const {
  const double angle = std::numbers::pi * static_cast<double>(epoch) / static_cast<double>(T_max_);
  return eta_min_ + (base_lr - eta_min_) * (1.0 + std::cos(angle)) / 2.0;
}

HOOKFORGE_INLINE CosineAnnealingLR::parameter_list CosineAnnealingLR::saved_parameters() {
  return {"CosineAnnealingLR", {{"T_max", &T_max_}, {"eta_min", &eta_min_}}};
}

}  // namespace hookforge
