// hookforge/torch/optim/step_lr.hpp — StepLR, with PyTorch's Python semantics (see
// lr_scheduler.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// lr = base_lr * gamma^(epoch / step_size): decays by gamma every step_size epochs.
class StepLR : public detail::closed_form_scheduler {
 public:
  static constexpr double default_gamma = 0.1;

  StepLR(torch::optim::Optimizer& optimizer, std::int64_t step_size, double gamma = default_gamma);

  /// Chains by multiplying (ChainedScheduler).
  bool scales_lr() const override { return true; }

 private:
  HOOKFORGE_INLINE double lr_at(double base_lr, std::int64_t epoch) const override;
  HOOKFORGE_INLINE parameter_list saved_parameters() override;

  std::int64_t step_size_;
  double gamma_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/step_lr-inl.hpp"
#endif
