// hookforge/torch/optim/one_cycle_lr-inl.hpp — OneCycleLR's definitions: included by
// one_cycle_lr.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include "hookforge/torch/optim/one_cycle_lr.hpp"

namespace hookforge {

namespace detail {

/// The cycle's length: total_steps, or epochs * steps_per_epoch (PyTorch's rule).
inline std::int64_t one_cycle_steps(const one_cycle_options& o) {
  if (o.total_steps > 0) return o.total_steps;
  if (o.total_steps < 0)
    throw std::invalid_argument(
        fmt::format("hookforge: OneCycleLR needs total_steps > 0, got {}", o.total_steps));
  if (o.epochs > 0 && o.steps_per_epoch > 0) return o.epochs * o.steps_per_epoch;
  throw std::invalid_argument(
      "hookforge: OneCycleLR needs total_steps, or epochs and steps_per_epoch, > 0");
}

/// Writes `momentum` as the group's momentum (SGD, RMSprop) or beta1 (Adam, AdamW, their
/// fused forms); false when the options have neither.
inline bool set_momentum(torch::optim::OptimizerOptions& options, double momentum) {
  if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&options)) {
    sgd->momentum(momentum);
  } else if (auto* rms = dynamic_cast<torch::optim::RMSpropOptions*>(&options)) {
    rms->momentum(momentum);
  } else if (auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&options)) {
    adam->betas(std::make_tuple(momentum, std::get<1>(adam->betas())));
  } else if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&options)) {
    adamw->betas(std::make_tuple(momentum, std::get<1>(adamw->betas())));
  } else {
    return false;
  }
  return true;
}

}  // namespace detail

HOOKFORGE_INLINE OneCycleLR::OneCycleLR(torch::optim::Optimizer& optimizer,
                                        one_cycle_options options)
    : closed_form_scheduler(optimizer),
      max_lr_(options.max_lr),
      total_steps_(detail::one_cycle_steps(options)),
      pct_start_(options.pct_start),
      anneal_strategy_(options.anneal_strategy),
      cycle_momentum_(options.cycle_momentum),
      base_momentum_(options.base_momentum),
      max_momentum_(options.max_momentum),
      div_factor_(options.div_factor),
      final_div_factor_(options.final_div_factor),
      three_phase_(options.three_phase) {
  if (!(max_lr_ > 0)) throw std::invalid_argument("hookforge: OneCycleLR needs max_lr > 0");
  if (!(pct_start_ >= 0 && pct_start_ <= 1))
    throw std::invalid_argument(
        fmt::format("hookforge: OneCycleLR needs pct_start in [0, 1], got {}", pct_start_));
  if (anneal_strategy_ != "cos" && anneal_strategy_ != "linear")
    throw std::invalid_argument(
        fmt::format("hookforge: OneCycleLR's anneal_strategy is 'cos' or 'linear', got '{}'",
                    anneal_strategy_));
  if (!(div_factor_ > 0 && final_div_factor_ > 0))
    throw std::invalid_argument("hookforge: OneCycleLR needs div_factor and final_div_factor > 0");
  // PyTorch divides by each phase's length in steps: a phase of no length is refused here
  // rather than at the step that reaches it.
  double start_step = 0.0;
  for (const phase& p : phases()) {
    if (p.end_step == start_step)
      throw std::invalid_argument(fmt::format(
          "hookforge: OneCycleLR's pct_start {} with total_steps {} gives a phase of no steps",
          pct_start_, total_steps_));
    start_step = p.end_step;
  }
  if (cycle_momentum_)
    for (auto& group : this->optimizer().param_groups())
      if (!detail::set_momentum(group.options(), max_momentum_))
        throw std::invalid_argument(
            "hookforge: OneCycleLR's cycle_momentum needs an optimizer with momentum or betas "
            "(SGD, RMSprop, Adam, AdamW); set cycle_momentum to false");
  base_lrs_.assign(group_count(), max_lr_ / div_factor_);
  set_interval(schedule_interval::step);  // the 1cycle policy is a schedule of updates
  step();
}

HOOKFORGE_INLINE std::vector<OneCycleLR::phase> OneCycleLR::phases() const {
  // PyTorch's phases, with its arithmetic: initial = max_lr / div_factor, and so on.
  const double initial = max_lr_ / div_factor_;
  const double final_lr = initial / final_div_factor_;
  const double total = static_cast<double>(total_steps_);
  if (three_phase_)
    return {{pct_start_ * total - 1, initial, max_lr_, max_momentum_, base_momentum_},
            {2 * pct_start_ * total - 2, max_lr_, initial, base_momentum_, max_momentum_},
            {total - 1, initial, final_lr, max_momentum_, max_momentum_}};
  return {{pct_start_ * total - 1, initial, max_lr_, max_momentum_, base_momentum_},
          {total - 1, max_lr_, final_lr, base_momentum_, max_momentum_}};
}

HOOKFORGE_INLINE OneCycleLR::point OneCycleLR::at(std::int64_t step) const {
  if (step > total_steps_)
    throw std::out_of_range(fmt::format(
        "hookforge: OneCycleLR stepped {} times, past its total_steps {} (stepped per update, it "
        "needs total_steps = epochs * updates per epoch)",
        step, total_steps_));
  auto anneal = [&](double start, double end, double pct) {
    if (anneal_strategy_ == "linear") return (end - start) * pct + start;
    return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
  };
  const auto s = static_cast<double>(step);
  const auto all = phases();
  double start_step = 0.0;
  for (std::size_t i = 0;; ++i) {
    const phase& p = all[i];
    if (s <= p.end_step || i + 1 == all.size()) {
      const double pct = (s - start_step) / (p.end_step - start_step);
      return {anneal(p.start_lr, p.end_lr, pct), anneal(p.start_momentum, p.end_momentum, pct)};
    }
    start_step = p.end_step;
  }
}

HOOKFORGE_INLINE double OneCycleLR::lr_at(double base_lr, std::int64_t epoch) const {
  (void)base_lr;  // the cycle's own rates, from max_lr, as PyTorch's group['initial_lr']
  return at(epoch).lr;
}

HOOKFORGE_INLINE void OneCycleLR::set_extras(std::int64_t epoch) {
  if (!cycle_momentum_) return;
  const double momentum = at(epoch).momentum;
  for (auto& group : optimizer().param_groups()) detail::set_momentum(group.options(), momentum);
}

HOOKFORGE_INLINE OneCycleLR::parameter_list OneCycleLR::saved_parameters() {
  return {"OneCycleLR",
          {{"max_lr", &max_lr_},
           {"total_steps", &total_steps_},
           {"pct_start", &pct_start_},
           {"anneal_strategy", &anneal_strategy_},
           {"cycle_momentum", &cycle_momentum_},
           {"base_momentum", &base_momentum_},
           {"max_momentum", &max_momentum_},
           {"div_factor", &div_factor_},
           {"final_div_factor", &final_div_factor_},
           {"three_phase", &three_phase_}}};
}

}  // namespace hookforge
