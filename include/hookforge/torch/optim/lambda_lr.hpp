// hookforge/torch/optim/lambda_lr.hpp — LambdaLR, with PyTorch's Python semantics (see
// lr_scheduler.hpp).
#pragma once

#include <cstdint>
#include <functional>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// lr = base_lr * lambda(epoch), for a C++ callable (a warm-up, an inverse square root, ...).
/// The callable is code, so a checkpoint holds the epoch and the rates, not the function: a
/// resumed run gives the scheduler the same callable, as PyTorch's LambdaLR asks.
class LambdaLR : public detail::closed_form_scheduler {
 public:
  LambdaLR(torch::optim::Optimizer& optimizer, std::function<double(std::int64_t)> lambda);

  bool scales_lr() const override { return true; }

 private:
  HOOKFORGE_INLINE double lr_at(double base_lr, std::int64_t epoch) const override;
  HOOKFORGE_INLINE parameter_list saved_parameters() override;

  std::function<double(std::int64_t)> lambda_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/lambda_lr-inl.hpp"
#endif
