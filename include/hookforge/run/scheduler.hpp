// hookforge/run/scheduler.hpp — the scheduler and stop_condition kinds.
//
//   scheduler:
//     _target: CosineAnnealingLR     # ChainedScheduler, ConstantLR, CosineAnnealingLR,
//     params:                        # CosineAnnealingWarmRestarts, ExponentialLR, LinearLR,
//       optimizer: ${ref:optimizer}  # MultiStepLR, OneCycleLR, PolynomialLR, SequentialLR,
//       T_max: 20                    # StepLR, ReduceLROnPlateau
//       interval: epoch              # or step: after each optimiser update
//   stop:
//     _target: ValidationLossDidNotImprove
//     params: {patience: 5, min_delta: 1.0e-4}
//
// A scheduler entry builds a `std::shared_ptr<hookforge::lr_scheduler>` over `optimizer`
// (which it keeps alive); the Trainer steps it once per epoch (ReduceLROnPlateau with the
// monitored validation score), or per update with `interval: step` (src/run/schedulers.cpp). A
// stop_condition entry builds a `std::shared_ptr<hookforge::stop_condition>` the Trainer asks after
// each validation. See docs/schedulers.md for what each does.
#pragma once

#include "hookforge/config/register.hpp"
#include "hookforge/run/values.hpp"
#include "hookforge/torch/optim/reduce_lr_on_plateau.hpp"
#include "hookforge/torch/optim/schedulers.hpp"
#include "hookforge/torch/optim/stop_condition.hpp"

HOOKFORGE_DECLARE_KIND(scheduler, hookforge::lr_scheduler);
HOOKFORGE_DECLARE_KIND(stop_condition, hookforge::stop_condition);

template <>
struct hookforge::run::enum_names<hookforge::schedule_interval> {
  static constexpr std::pair<std::string_view, hookforge::schedule_interval> values[] = {
      {"epoch", hookforge::schedule_interval::epoch}, {"step", hookforge::schedule_interval::step}};
};
template <>
struct hookforge::run::enum_names<hookforge::plateau_mode> {
  static constexpr std::pair<std::string_view, hookforge::plateau_mode> values[] = {
      {"min", hookforge::plateau_mode::min}, {"max", hookforge::plateau_mode::max}};
};
template <>
struct hookforge::run::enum_names<hookforge::plateau_threshold_mode> {
  static constexpr std::pair<std::string_view, hookforge::plateau_threshold_mode> values[] = {
      {"rel", hookforge::plateau_threshold_mode::rel},
      {"abs", hookforge::plateau_threshold_mode::abs}};
};
