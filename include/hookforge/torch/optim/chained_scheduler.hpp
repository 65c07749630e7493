// hookforge/torch/optim/chained_scheduler.hpp — ChainedScheduler, with PyTorch's Python
// semantics (see lr_scheduler.hpp): several schedules at once, their factors multiplied.
//
//   auto warmup = std::make_shared<hookforge::ConstantLR>(opt, 0.1, 5);
//   auto decay = std::make_shared<hookforge::ExponentialLR>(opt, 0.95);
//   hookforge::ChainedScheduler schedule(opt, {warmup, decay});
#pragma once

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/optim/composite_scheduler.hpp"

namespace hookforge {

/// lr = base_lr * the product of every schedule's factor at the epoch: what PyTorch's
/// ChainedScheduler gives by stepping each in turn. Only schedules that scale the lr chain
/// (StepLR, MultiStepLR, ExponentialLR, LinearLR, ConstantLR, PolynomialLR, LambdaLR,
/// CosineAnnealingLR with eta_min 0); one that sets it outright (OneCycleLR,
/// CosineAnnealingWarmRestarts, a CosineAnnealingLR with eta_min) is refused, as its
/// PyTorch chaining depends on the order of the steps rather than on the schedules.
class ChainedScheduler : public detail::composite_scheduler {
 public:
  ChainedScheduler(torch::optim::Optimizer& optimizer, const schedule_list& schedules);

  bool scales_lr() const override { return true; }

 private:
  HOOKFORGE_INLINE double lr_at(double base_lr, std::int64_t epoch) const override;
  HOOKFORGE_INLINE parameter_list saved_parameters() override;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/chained_scheduler-inl.hpp"
#endif
