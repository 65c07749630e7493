// hookforge/torch/optim/reduce_lr_on_plateau-inl.hpp — ReduceLROnPlateau's definitions:
// included by reduce_lr_on_plateau.hpp header-only, compiled into
// hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hookforge/torch/optim/reduce_lr_on_plateau.hpp"

namespace hookforge {

HOOKFORGE_INLINE ReduceLROnPlateau::ReduceLROnPlateau(torch::optim::Optimizer& optimizer,
                                                      plateau_options options)
    : lr_scheduler(optimizer), options_(std::move(options)) {
  if (!(options_.factor < 1.0))
    throw std::invalid_argument("hookforge: ReduceLROnPlateau needs factor < 1");
  if (options_.min_lrs.empty()) {
    options_.min_lrs.assign(group_count(), options_.min_lr);
  } else if (options_.min_lrs.size() != group_count()) {
    throw std::invalid_argument("hookforge: ReduceLROnPlateau got " +
                                std::to_string(options_.min_lrs.size()) + " min_lrs for " +
                                std::to_string(group_count()) + " param groups");
  }
  last_epoch_ = 0;  // as Python: no initial step
  best_ = worst_value();
}

HOOKFORGE_INLINE void ReduceLROnPlateau::step() {
  throw std::logic_error("hookforge: ReduceLROnPlateau needs the metric: call step(metric)");
}

HOOKFORGE_INLINE void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric, best_)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // bad epochs during cooldown do not count
  }
  if (num_bad_epochs_ > options_.patience) {
    reduce_lrs();
    cooldown_counter_ = options_.cooldown;
    num_bad_epochs_ = 0;
  }
  last_lr_ = current_lrs();
}

HOOKFORGE_INLINE hookforge::state_map ReduceLROnPlateau::state_dict() const {
  auto state = lr_scheduler::state_dict();
  state["mode"] = std::string(options_.mode == plateau_mode::min ? "min" : "max");
  state["factor"] = options_.factor;
  state["patience"] = options_.patience;
  state["threshold"] = options_.threshold;
  state["threshold_mode"] =
      std::string(options_.threshold_mode == plateau_threshold_mode::rel ? "rel" : "abs");
  state["cooldown"] = options_.cooldown;
  state["min_lrs"] = options_.min_lrs;
  state["eps"] = options_.eps;
  state["best"] = best_;
  state["num_bad_epochs"] = num_bad_epochs_;
  state["cooldown_counter"] = cooldown_counter_;
  return state;
}

HOOKFORGE_INLINE void ReduceLROnPlateau::load_state_dict(const hookforge::state_map& state) {
  const char* owner = "ReduceLROnPlateau";
  plateau_options options;
  options.mode = parse_choice(state_value(state, owner, "mode"), "min", "max") ? plateau_mode::max
                                                                               : plateau_mode::min;
  options.factor = state_value<double>(state, owner, "factor");
  options.patience = state_value<std::int64_t>(state, owner, "patience");
  options.threshold = state_value<double>(state, owner, "threshold");
  options.threshold_mode = parse_choice(state_value(state, owner, "threshold_mode"), "rel", "abs")
                               ? plateau_threshold_mode::abs
                               : plateau_threshold_mode::rel;
  options.cooldown = state_value<std::int64_t>(state, owner, "cooldown");
  options.min_lrs = state_value<std::vector<double>>(state, owner, "min_lrs");
  options.min_lr = options_.min_lr;
  options.eps = state_value<double>(state, owner, "eps");
  const double best = state_value<double>(state, owner, "best");
  const auto num_bad_epochs = state_value<std::int64_t>(state, owner, "num_bad_epochs");
  const auto cooldown_counter = state_value<std::int64_t>(state, owner, "cooldown_counter");
  if (options.min_lrs.size() != group_count()) {
    throw std::invalid_argument(
        "hookforge: ReduceLROnPlateau state_dict has the wrong number of min_lrs");
  }
  lr_scheduler::load_state_dict(state);
  options_ = std::move(options);
  best_ = best;
  num_bad_epochs_ = num_bad_epochs;
  cooldown_counter_ = cooldown_counter;
}

HOOKFORGE_INLINE bool ReduceLROnPlateau::parse_choice(const c10::IValue& value, const char* first,
                                                      const char* second) {
  const std::string& text = value.toStringRef();
  if (text != first && text != second) {
    throw std::invalid_argument("hookforge: ReduceLROnPlateau state_dict has unknown mode '" +
                                text + "'");
  }
  return text == second;
}

HOOKFORGE_INLINE metric_rule ReduceLROnPlateau::rule() const {
  return options_.mode == plateau_mode::min ? metric_rule::less : metric_rule::greater;
}

HOOKFORGE_INLINE double ReduceLROnPlateau::worst_value() const { return worst_score(rule()); }

// PyTorch's forms exactly (best - threshold, not current + threshold): they differ on the boundary.
HOOKFORGE_INLINE bool ReduceLROnPlateau::is_better(double current, double best) const {
  return options_.threshold_mode == plateau_threshold_mode::rel
             ? is_better_relative(rule(), current, best, options_.threshold)
             : is_better_absolute(rule(), current, best, options_.threshold);
}

HOOKFORGE_INLINE void ReduceLROnPlateau::reduce_lrs() {
  auto& groups = optimizer().param_groups();
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const double old_lr = groups[i].options().get_lr();
    const double new_lr = std::max(old_lr * options_.factor, options_.min_lrs.at(i));
    if (old_lr - new_lr > options_.eps) groups[i].options().set_lr(new_lr);
  }
}

}  // namespace hookforge
