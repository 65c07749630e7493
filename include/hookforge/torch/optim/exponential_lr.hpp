// hookforge/torch/optim/exponential_lr.hpp — ExponentialLR, with PyTorch's Python semantics (see
// lr_scheduler.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// lr = base_lr * gamma^epoch.
class ExponentialLR : public detail::closed_form_scheduler {
 public:
  ExponentialLR(torch::optim::Optimizer& optimizer, double gamma);

  /// Chains by multiplying (ChainedScheduler).
  bool scales_lr() const override { return true; }

 private:
  HOOKFORGE_INLINE double lr_at(double base_lr, std::int64_t epoch) const override;
  HOOKFORGE_INLINE parameter_list saved_parameters() override;

  double gamma_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/exponential_lr-inl.hpp"
#endif
