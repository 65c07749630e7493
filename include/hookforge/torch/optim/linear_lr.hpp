// hookforge/torch/optim/linear_lr.hpp — LinearLR, with PyTorch's Python semantics (see
// lr_scheduler.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// Linear warm-up: lr = base_lr * (start + (end - start) * min(epoch, total_iters) / total_iters).
class LinearLR : public detail::closed_form_scheduler {
 public:
  static constexpr double default_start_factor = 1.0 / 3.0;
  static constexpr double default_end_factor = 1.0;
  static constexpr std::int64_t default_total_iters = 5;

  explicit LinearLR(torch::optim::Optimizer& optimizer, double start_factor = default_start_factor,
                    double end_factor = default_end_factor,
                    std::int64_t total_iters = default_total_iters);

  /// Chains by multiplying (ChainedScheduler).
  bool scales_lr() const override { return true; }

 private:
  HOOKFORGE_INLINE double lr_at(double base_lr, std::int64_t epoch) const override;
  HOOKFORGE_INLINE parameter_list saved_parameters() override;

  double start_factor_;
  double end_factor_;
  std::int64_t total_iters_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/linear_lr-inl.hpp"
#endif
