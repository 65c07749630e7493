// hookforge/torch/optim/chained_scheduler-inl.hpp — ChainedScheduler's definitions: included by
// chained_scheduler.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>

#include "hookforge/torch/optim/chained_scheduler.hpp"

namespace hookforge {

HOOKFORGE_INLINE ChainedScheduler::ChainedScheduler(torch::optim::Optimizer& optimizer,
                                                    const schedule_list& schedules)
    : composite_scheduler("ChainedScheduler", optimizer, schedules) {
  for (std::size_t i = 0; i < schedules_.size(); ++i)
    if (!schedules_[i]->scales_lr())
      throw std::invalid_argument(fmt::format(
          "hookforge: ChainedScheduler's schedulers[{}] sets the lr rather than scaling it, so it "
          "does not chain; use SequentialLR to run it after (or before) the others",
          i));
  step();
}

HOOKFORGE_INLINE double ChainedScheduler::lr_at(double base_lr, std::int64_t epoch) const {
  // Each factor is lr_at(x) / x, so folding the schedules multiplies them.
  double lr = base_lr;
  for (const auto& schedule : schedules_) lr = lr_of(*schedule, lr, epoch);
  return lr;
}

HOOKFORGE_INLINE ChainedScheduler::parameter_list ChainedScheduler::saved_parameters() {
  return {"ChainedScheduler", {}};
}

}  // namespace hookforge
