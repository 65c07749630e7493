// hookforge/torch/optim/constant_lr.hpp — ConstantLR, with PyTorch's Python semantics (see
// lr_scheduler.hpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// lr = base_lr * factor for the first total_iters epochs, then base_lr.
///
/// total_iters must be >= 1. Python accepts 0 (and negatives), but there its two forms
/// disagree: step() scales epoch 0 by factor and never restores the base lr, while the
/// closed form (used here) runs at the base lr from epoch 0. Neither is a useful schedule.
class ConstantLR : public detail::closed_form_scheduler {
 public:
  // PyTorch's defaults, which hookforge-run's registration shows too.
  static constexpr double default_factor = 1.0 / 3.0;
  static constexpr std::int64_t default_total_iters = 5;

  explicit ConstantLR(torch::optim::Optimizer& optimizer, double factor = default_factor,
                      std::int64_t total_iters = default_total_iters);

  /// Chains by multiplying (ChainedScheduler).
  bool scales_lr() const override { return true; }

 private:
  HOOKFORGE_INLINE double lr_at(double base_lr, std::int64_t epoch) const override;
  HOOKFORGE_INLINE parameter_list saved_parameters() override;

  double factor_;
  std::int64_t total_iters_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/constant_lr-inl.hpp"
#endif
