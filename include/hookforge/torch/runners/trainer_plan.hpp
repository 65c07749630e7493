// hookforge/torch/runners/trainer_plan.hpp — the run the Trainer plans: the epochs it shows
// its hooks (max_steps may end it first), the scheduler's length checked against them, what
// fit() sets up before its first epoch, and each epoch's start. Definitions of members
// trainer.hpp declares; include trainer.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include "hookforge/torch/data/validation_sets.hpp"
#include "hookforge/torch/runners/epoch_progress.hpp"
#include "hookforge/torch/runners/malloc_tuning.hpp"
#include "hookforge/torch/runners/trainer.hpp"
#include "hookforge/torch/runners/trainer_bookkeeping.hpp"

namespace hookforge {

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
template <class Loader>
std::int64_t Trainer<Model, TrainRunner, ValRunner, Hooks...>::planned_epochs(
    Loader& loader) const {
  if (options_.max_steps < 0) return options_.epochs;
  const std::int64_t updates = detail::updates_per_epoch(*train_, loader);
  if (updates <= 0) return options_.epochs;
  return std::min(options_.epochs, (options_.max_steps + updates - 1) / updates);
}

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
template <class Loader>
void Trainer<Model, TrainRunner, ValRunner, Hooks...>::check_scheduler_length(Loader& loader) {
  const auto limit = options_.scheduler ? options_.scheduler->step_limit() : std::nullopt;
  if (!limit) return;
  const bool per_update = schedules_per_update();
  const std::int64_t per_epoch = per_update ? detail::updates_per_epoch(*train_, loader) : 1;
  if (per_epoch < 0) return;
  std::int64_t planned = options_.epochs * per_epoch;
  std::string why = std::to_string(options_.epochs) + " epochs x " + std::to_string(per_epoch) +
                    (per_update ? " updates" : "");
  if (const std::int64_t budget = options_.max_steps; budget >= 0) {
    // max_steps ends the run first: per update, at its updates; per epoch, at the epoch
    // in which they are reached.
    const std::int64_t updates =
        per_update ? per_epoch : detail::updates_per_epoch(*train_, loader);
    const std::int64_t steps = per_update    ? budget
                               : updates > 0 ? (budget + updates - 1) / updates
                                             : planned;
    if (steps < planned) {
      planned = steps;
      why = "max_steps " + std::to_string(budget) +
            (per_update ? "" : ", " + std::to_string(updates) + " updates an epoch");
    }
  }
  if (planned > *limit)
    throw std::invalid_argument("hookforge::Trainer: the scheduler ends after " +
                                std::to_string(*limit) + " steps, but the run steps it " +
                                std::to_string(planned) + " times (" + why +
                                "): give it total_steps " + std::to_string(planned) +
                                " (OneCycleLR: or epochs and steps_per_epoch)");
}

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
template <class TrainLoader, class ValLoader, class ValC>
epoch_progress* Trainer<Model, TrainRunner, ValRunner, Hooks...>::start_fit(
    TrainLoader& train_loader, ValLoader& val_loader, ValC& val_criterion) {
  if (options_.tune_malloc) hookforge::tune_malloc();
  const std::int64_t planned = planned_epochs(train_loader);
  planned_epochs_ = planned;
  train_->set_total_epochs(planned);
  if constexpr (validates) val_->set_total_epochs(planned);
  if (options_.print_bindings) std::fputs(format_bindings().c_str(), stdout);
  epoch_progress* progress = train_progress();
  if (!resume_state_.empty()) resume_epoch(train_loader, progress);
  const bool per_update = schedules_per_update();
  if ((per_update || options_.max_steps >= 0 || options_.val_interval_steps > 0) && !progress)
    throw std::invalid_argument(std::string("hookforge::Trainer: ") +
                                (per_update                ? "a scheduler stepped per update"
                                 : options_.max_steps >= 0 ? "max_steps"
                                                           : "val_interval_steps") +
                                " needs a training runner with progress() (runner_base has it)");
  check_scheduler_length(train_loader);
  scheduled_updates_ = detail::updates_of(*train_);
  // A checkpoint taken between batches was taken after that batch's validation, if any.
  last_validated_update_ = scheduled_updates_;
  ended_at_validation_ = false;
  if (progress) watch_steps(*progress, per_update, val_loader, val_criterion);
  return progress;
}

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
template <class TrainLoader, class ValLoader, class TrainC, class ValC>
auto Trainer<Model, TrainRunner, ValRunner, Hooks...>::begin_epoch(
    std::int64_t epoch, TrainLoader& train_loader, ValLoader& val_loader, TrainC& train_criterion,
    ValC& val_criterion, bool resumed) -> Ctx {
  update_criterion_schedule(train_criterion, epoch);
  if (!same_object(train_criterion, val_criterion)) update_criterion_schedule(val_criterion, epoch);
  set_loader_epoch(train_loader, epoch);
  if constexpr (is_validation_sets<ValLoader>)
    for (const auto& set : val_loader) set_loader_epoch(*set.loader, epoch);
  else
    set_loader_epoch(val_loader, epoch);
  Ctx ctx = context();
  ctx.epoch = epoch;
  // A resumed epoch keeps the rates it started with (a warm-up changes them per batch).
  if (!resumed) epoch_learning_rates_ = detail::learning_rates(optimizers_of(*train_));
  ctx.learning_rates = epoch_learning_rates_;
  step_ctx_ = ctx;
  return ctx;
}

}  // namespace hookforge
