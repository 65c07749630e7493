// hookforge/torch/optim/polynomial_lr.hpp — PolynomialLR, with PyTorch's Python semantics (see
// lr_scheduler.hpp).
#pragma once

#include <cstdint>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ^ power: a decay to 0 over
/// total_iters (power 1 is linear), then 0.
class PolynomialLR : public detail::closed_form_scheduler {
 public:
  static constexpr std::int64_t default_total_iters = 5;
  static constexpr double default_power = 1.0;

  explicit PolynomialLR(torch::optim::Optimizer& optimizer,
                        std::int64_t total_iters = default_total_iters,
                        double power = default_power);

  bool scales_lr() const override { return true; }

 private:
  HOOKFORGE_INLINE double lr_at(double base_lr, std::int64_t epoch) const override;
  HOOKFORGE_INLINE parameter_list saved_parameters() override;

  std::int64_t total_iters_;
  double power_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/polynomial_lr-inl.hpp"
#endif
