// hookforge/torch/optim/multi_step_lr.hpp — MultiStepLR, with PyTorch's Python semantics (see
// lr_scheduler.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// lr = base_lr * gamma^(number of milestones <= epoch); a milestone listed twice counts twice.
class MultiStepLR : public detail::closed_form_scheduler {
 public:
  static constexpr double default_gamma = 0.1;

  MultiStepLR(torch::optim::Optimizer& optimizer, std::vector<std::int64_t> milestones,
              double gamma = default_gamma);

  /// Chains by multiplying (ChainedScheduler).
  bool scales_lr() const override { return true; }

 private:
  HOOKFORGE_INLINE double lr_at(double base_lr, std::int64_t epoch) const override;
  HOOKFORGE_INLINE parameter_list saved_parameters() override;

  std::vector<std::int64_t> milestones_;  // sorted
  double gamma_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/multi_step_lr-inl.hpp"
#endif
