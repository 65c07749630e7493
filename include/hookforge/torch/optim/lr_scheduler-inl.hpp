// hookforge/torch/optim/lr_scheduler-inl.hpp — the scheduler base's definitions: included by
// lr_scheduler.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

HOOKFORGE_INLINE void lr_scheduler::step(double metric) {
  (void)metric;
  step();
}

HOOKFORGE_INLINE hookforge::state_map lr_scheduler::state_dict() const {
  return {{"last_epoch", last_epoch_}, {"base_lrs", base_lrs_}, {"last_lr", last_lr_}};
}

HOOKFORGE_INLINE void lr_scheduler::load_state_dict(const hookforge::state_map& state) {
  auto base = state_value<std::vector<double>>(state, "lr_scheduler", "base_lrs");
  auto last = state_value<std::vector<double>>(state, "lr_scheduler", "last_lr");
  if (base.size() != group_count() || last.size() != group_count()) {
    throw std::invalid_argument("hookforge: lr_scheduler state_dict is for " +
                                std::to_string(last.size()) + " param groups, the optimizer has " +
                                std::to_string(group_count()));
  }
  last_epoch_ = state_value<std::int64_t>(state, "lr_scheduler", "last_epoch");
  base_lrs_ = std::move(base);
  set_lrs(last);
}

HOOKFORGE_INLINE void lr_scheduler::set_interval(schedule_interval interval) {
  if (interval == schedule_interval::step && wants_metric())
    throw std::invalid_argument(
        "hookforge: a scheduler that steps on a validation score (ReduceLROnPlateau) steps "
        "per epoch, not per update");
  interval_ = interval;
}

HOOKFORGE_INLINE hookforge::state_map lr_scheduler::settings() const { return {}; }

HOOKFORGE_INLINE void lr_scheduler::apply_settings(const hookforge::state_map&) {}

HOOKFORGE_INLINE lr_scheduler::lr_scheduler(torch::optim::Optimizer& optimizer)
    : optimizer_(&optimizer) {
  base_lrs_ = current_lrs();
  last_lr_ = base_lrs_;
}

HOOKFORGE_INLINE std::vector<double> lr_scheduler::current_lrs() const {
  std::vector<double> lrs;
  for (const auto& group : optimizer_->param_groups()) lrs.push_back(group.options().get_lr());
  return lrs;
}

HOOKFORGE_INLINE void lr_scheduler::set_lrs(const std::vector<double>& lrs) {
  auto& groups = optimizer_->param_groups();
  if (lrs.size() != groups.size()) {
    throw std::logic_error(
        "hookforge: the optimizer's param groups changed after its lr_scheduler was built");
  }
  for (std::size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lrs[i]);
  last_lr_ = lrs;
}

namespace detail {

/// A setting's value as text: 3, 0.001, [30, 60].
inline std::string setting_text(const c10::IValue& v) {
  if (v.isInt()) return std::to_string(v.toInt());
  if (v.isDouble()) {
    std::ostringstream out;
    out << std::setprecision(17) << v.toDouble();
    return out.str();
  }
  if (v.isBool()) return v.toBool() ? "true" : "false";
  if (v.isString()) return v.toStringRef();
  if (v.isIntList()) {
    std::string out = "[";
    for (auto i : v.toIntVector()) out += (out.size() > 1 ? ", " : "") + std::to_string(i);
    return out + "]";
  }
  return v.tagKind();
}

}  // namespace detail

HOOKFORGE_INLINE std::vector<std::string> keep_configured_settings(
    lr_scheduler& scheduler, const hookforge::state_map& configured) {
  const auto loaded = scheduler.settings();
  std::vector<std::string> changes;
  for (const auto& [name, value] : configured) {
    const auto it = loaded.find(name);
    const std::string was = it == loaded.end() ? "none" : detail::setting_text(it->second);
    if (was != detail::setting_text(value))
      changes.push_back(name + " " + detail::setting_text(value) + " (the checkpoint's: " + was +
                        ")");
  }
  if (!changes.empty()) scheduler.apply_settings(configured);
  return changes;
}

namespace detail {

HOOKFORGE_INLINE void closed_form_scheduler::step() {
  ++last_epoch_;
  write_current();
}

HOOKFORGE_INLINE void closed_form_scheduler::write_current() {
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(lr_at(base, last_epoch_));
  set_lrs(lrs);
  set_extras(last_epoch_);
}

HOOKFORGE_INLINE hookforge::state_map closed_form_scheduler::state_dict() const {
  auto state = lr_scheduler::state_dict();
  for (auto& [name, value] : settings()) state[name] = value;
  return state;
}

HOOKFORGE_INLINE hookforge::state_map closed_form_scheduler::settings() const {
  hookforge::state_map state;
  // saved_parameters() is non-const only for load_state_dict; nothing is written here.
  const auto saved = const_cast<closed_form_scheduler*>(this)->saved_parameters();
  for (const auto& [name, member] : saved.parameters) {
    std::visit([&](const auto* value) { state[name] = *value; }, member);
  }
  return state;
}

HOOKFORGE_INLINE std::vector<std::function<void()>> closed_form_scheduler::read_settings(
    const hookforge::state_map& state) {
  const auto saved = saved_parameters();
  std::vector<std::function<void()>> assignments;
  for (const auto& [name, member] : saved.parameters) {
    std::visit(
        [&](auto* target) {
          auto value =
              state_value<std::remove_pointer_t<decltype(target)>>(state, saved.kind, name);
          assignments.emplace_back(
              [target, value = std::move(value)]() mutable { *target = std::move(value); });
        },
        member);
  }
  return assignments;
}

HOOKFORGE_INLINE void closed_form_scheduler::load_state_dict(const hookforge::state_map& state) {
  // Every read that can throw happens before the first assignment.
  auto assignments = read_settings(state);
  lr_scheduler::load_state_dict(state);
  for (auto& assign : assignments) assign();
}

HOOKFORGE_INLINE void closed_form_scheduler::apply_settings(const hookforge::state_map& settings) {
  for (auto& assign : read_settings(settings)) assign();
  write_current();
}

}  // namespace detail

}  // namespace hookforge
