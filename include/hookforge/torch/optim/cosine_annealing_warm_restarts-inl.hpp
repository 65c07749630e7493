// hookforge/torch/optim/cosine_annealing_warm_restarts-inl.hpp — CosineAnnealingWarmRestarts's
// definitions: included by cosine_annealing_warm_restarts.hpp header-only, compiled into
// hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>

#include "hookforge/torch/optim/cosine_annealing_warm_restarts.hpp"

namespace hookforge {

HOOKFORGE_INLINE CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(
    torch::optim::Optimizer& optimizer, std::int64_t T_0, std::int64_t T_mult, double eta_min)
    : closed_form_scheduler(optimizer), T_0_(T_0), T_mult_(T_mult), eta_min_(eta_min) {
  if (T_0 <= 0) throw std::invalid_argument("hookforge: CosineAnnealingWarmRestarts needs T_0 > 0");
  if (T_mult < 1)
    throw std::invalid_argument("hookforge: CosineAnnealingWarmRestarts needs T_mult >= 1");
  step();
}

HOOKFORGE_INLINE double CosineAnnealingWarmRestarts::lr_at(double base_lr,
                                                           std::int64_t epoch) const {
  // The period the epoch falls in, counted in whole epochs as PyTorch's step() counts them
  // (its T_cur and T_i): exact integers, so resuming at any epoch gives the same lr.
  std::int64_t t_cur = T_mult_ == 1 ? epoch % T_0_ : epoch;
  std::int64_t t_i = T_0_;
  while (t_cur >= t_i) {
    t_cur -= t_i;
    t_i *= T_mult_;
  }
  const double angle = std::numbers::pi * static_cast<double>(t_cur) / static_cast<double>(t_i);
  return eta_min_ + (base_lr - eta_min_) * (1.0 + std::cos(angle)) / 2.0;
}

HOOKFORGE_INLINE CosineAnnealingWarmRestarts::parameter_list
CosineAnnealingWarmRestarts::saved_parameters() {
  return {"CosineAnnealingWarmRestarts",
          {{"T_0", &T_0_}, {"T_mult", &T_mult_}, {"eta_min", &eta_min_}}};
}

}  // namespace hookforge
