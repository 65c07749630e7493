// hookforge/torch/optim/cosine_annealing_warm_restarts.hpp — CosineAnnealingWarmRestarts (SGDR),
// with PyTorch's Python semantics (see lr_scheduler.hpp).
#pragma once

#include <cstdint>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2, where the cosine
/// restarts from base_lr every T_i epochs: T_0 first, each period T_mult times the last.
class CosineAnnealingWarmRestarts : public detail::closed_form_scheduler {
 public:
  static constexpr std::int64_t default_T_mult = 1;
  static constexpr double default_eta_min = 0.0;

  CosineAnnealingWarmRestarts(torch::optim::Optimizer& optimizer, std::int64_t T_0,
                              std::int64_t T_mult = default_T_mult,
                              double eta_min = default_eta_min);

 private:
  HOOKFORGE_INLINE double lr_at(double base_lr, std::int64_t epoch) const override;
  HOOKFORGE_INLINE parameter_list saved_parameters() override;

  std::int64_t T_0_;
  std::int64_t T_mult_;
  double eta_min_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/cosine_annealing_warm_restarts-inl.hpp"
#endif
