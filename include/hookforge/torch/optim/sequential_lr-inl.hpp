// hookforge/torch/optim/sequential_lr-inl.hpp — SequentialLR's definitions: included by
// sequential_lr.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hookforge/torch/optim/sequential_lr.hpp"

namespace hookforge {

HOOKFORGE_INLINE SequentialLR::SequentialLR(torch::optim::Optimizer& optimizer,
                                            const schedule_list& schedules,
                                            std::vector<std::int64_t> milestones)
    : composite_scheduler("SequentialLR", optimizer, schedules),
      milestones_(std::move(milestones)) {
  if (milestones_.size() + 1 != schedules_.size())
    throw std::invalid_argument(
        fmt::format("hookforge: SequentialLR needs one milestone fewer than schedulers, got {} "
                    "schedulers and {} milestones",
                    schedules_.size(), milestones_.size()));
  for (std::size_t i = 0; i < milestones_.size(); ++i)
    if (milestones_[i] <= (i == 0 ? 0 : milestones_[i - 1]))
      throw std::invalid_argument(fmt::format(
          "hookforge: SequentialLR's milestones must be positive and increasing, got [{}]",
          fmt::join(milestones_, ", ")));
  step();
}

HOOKFORGE_INLINE std::pair<detail::closed_form_scheduler*, std::int64_t> SequentialLR::running(
    std::int64_t epoch) const {
  // PyTorch's bisect_right: at a milestone, the next schedule starts (its epoch 0).
  const auto passed = static_cast<std::size_t>(
      std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin());
  const std::int64_t start = passed == 0 ? 0 : milestones_[passed - 1];
  return {schedules_[passed].get(), epoch - start};
}

HOOKFORGE_INLINE double SequentialLR::lr_at(double base_lr, std::int64_t epoch) const {
  const auto [schedule, local] = running(epoch);
  return lr_of(*schedule, base_lr, local);
}

HOOKFORGE_INLINE void SequentialLR::set_extras(std::int64_t epoch) {
  const auto [schedule, local] = running(epoch);
  extras_of(*schedule, local);
}

HOOKFORGE_INLINE SequentialLR::parameter_list SequentialLR::saved_parameters() {
  return {"SequentialLR", {{"milestones", &milestones_}}};
}

}  // namespace hookforge
