// hookforge/torch/optim/lr_scheduler-inl.hpp — the scheduler base's definitions: included by
// lr_scheduler.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <functional>
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

HOOKFORGE_INLINE void closed_form_scheduler::step() {
  ++last_epoch_;
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(lr_at(base, last_epoch_));
  set_lrs(lrs);
}

HOOKFORGE_INLINE hookforge::state_map closed_form_scheduler::state_dict() const {
  auto state = lr_scheduler::state_dict();
  // saved_parameters() is non-const only for load_state_dict; nothing is written here.
  const auto saved = const_cast<closed_form_scheduler*>(this)->saved_parameters();
  for (const auto& [name, member] : saved.parameters) {
    std::visit([&](const auto* value) { state[name] = *value; }, member);
  }
  return state;
}

HOOKFORGE_INLINE void closed_form_scheduler::load_state_dict(const hookforge::state_map& state) {
  const auto saved = saved_parameters();
  // Every read that can throw happens before the first assignment.
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
  lr_scheduler::load_state_dict(state);
  for (auto& assign : assignments) assign();
}

}  // namespace detail

}  // namespace hookforge
