// hookforge/torch/optim/cosine_annealing_lr.hpp — CosineAnnealingLR, with PyTorch's Python
// semantics (see lr_scheduler.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2
/// (no restarts; past T_max the cosine keeps going, as Python's closed form).
class CosineAnnealingLR : public detail::closed_form_scheduler {
 public:
  static constexpr double default_eta_min = 0.0;  // PyTorch's, as the others below

  CosineAnnealingLR(torch::optim::Optimizer& optimizer, std::int64_t T_max,
                    double eta_min = default_eta_min);

  /// Chains by multiplying (ChainedScheduler) when eta_min is 0.
  bool scales_lr() const override { return eta_min_ == 0.0; }

 private:
  HOOKFORGE_INLINE double lr_at(double base_lr, std::int64_t epoch) const override;
  HOOKFORGE_INLINE parameter_list saved_parameters() override;

  std::int64_t T_max_;
  double eta_min_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/cosine_annealing_lr-inl.hpp"
#endif
