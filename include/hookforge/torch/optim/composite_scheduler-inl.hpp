// hookforge/torch/optim/composite_scheduler-inl.hpp — the composites' shared definitions:
// included by composite_scheduler.hpp header-only, compiled into hookforge::torch_compiled
// otherwise (core/build_mode.hpp).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "hookforge/torch/optim/composite_scheduler.hpp"

namespace hookforge::detail {

/// Where schedule `i`'s settings sit in its composite's state_dict.
inline std::string schedule_prefix(std::size_t i) { return fmt::format("schedulers.{}.", i); }

HOOKFORGE_INLINE composite_scheduler::composite_scheduler(std::string_view kind,
                                                          torch::optim::Optimizer& optimizer,
                                                          const schedule_list& schedules)
    : closed_form_scheduler(optimizer) {
  if (schedules.empty())
    throw std::invalid_argument(fmt::format("hookforge: {} needs at least one scheduler", kind));
  for (std::size_t i = 0; i < schedules.size(); ++i) {
    const auto& s = schedules[i];
    auto why = [&](std::string_view what) {
      return std::invalid_argument(fmt::format("hookforge: {}'s schedulers[{}] {}", kind, i, what));
    };
    if (!s) throw why("is missing");
    if (&s->optimizer() != &optimizer) throw why("belongs to another optimizer");
    if (s->wants_metric())
      throw why(
          "steps on a validation score (ReduceLROnPlateau), which a composite cannot pass it");
    auto schedule = std::dynamic_pointer_cast<closed_form_scheduler>(s);
    if (!schedule || std::dynamic_pointer_cast<composite_scheduler>(s))
      throw why("is a composite itself; list its schedules in this one instead");
    schedules_.push_back(std::move(schedule));
  }
  base_lrs_ = schedules_.front()->base_lrs();
}

HOOKFORGE_INLINE hookforge::state_map composite_scheduler::settings() const {
  auto state = closed_form_scheduler::settings();
  for (std::size_t i = 0; i < schedules_.size(); ++i)
    for (auto& [name, value] : schedules_[i]->settings()) state[schedule_prefix(i) + name] = value;
  return state;
}

HOOKFORGE_INLINE std::vector<std::function<void()>> composite_scheduler::read_settings(
    const hookforge::state_map& state) {
  auto assignments = closed_form_scheduler::read_settings(state);
  for (std::size_t i = 0; i < schedules_.size(); ++i) {
    const std::string prefix = schedule_prefix(i);
    hookforge::state_map own;
    for (const auto& [name, value] : state)
      if (name.starts_with(prefix)) own[name.substr(prefix.size())] = value;
    for (auto& assign : settings_reads(*schedules_[i], own))
      assignments.push_back(std::move(assign));
  }
  return assignments;
}

}  // namespace hookforge::detail
