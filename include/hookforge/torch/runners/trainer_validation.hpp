// hookforge/torch/runners/trainer_validation.hpp — the Trainer's validations: at an epoch's end
// (every val_interval epochs) and between two batches (every val_interval_steps optimiser
// updates), and what follows one between batches: a metric-based scheduler's step, the stop
// condition and on_trainer_validation_finished, where a stop ends the epoch after that batch.
// A validation runs over one loader or over several named ones (validation_sets.hpp).
// Definitions of members trainer.hpp declares; include trainer.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hookforge/core/points.hpp"
#include "hookforge/torch/data/model.hpp"
#include "hookforge/torch/data/validation_sets.hpp"
#include "hookforge/torch/runners/epoch_progress.hpp"
#include "hookforge/torch/runners/trainer.hpp"
#include "hookforge/torch/runners/trainer_bookkeeping.hpp"

namespace hookforge {

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
template <class ValLoader, class ValC>
bool Trainer<Model, TrainRunner, ValRunner, Hooks...>::validate(Ctx& ctx, ValLoader& val_loader,
                                                                ValC& val_criterion) {
  const auto run = [&](auto& loader, std::string_view part) {
    return naming_memory_failure(part, ctx.epoch, options_.epochs, [&] {
      return val_->run_epoch(detail::validation_model(*model_), loader, ctx.epoch, val_criterion);
    });
  };
  bool stop = false;
  if constexpr (is_validation_sets<ValLoader>) {
    // Each set's epoch, its scores under its name; the hooks of a runner with set_dataset
    // (runner_base's) see it as ctx.dataset.
    const auto name_epochs = [runner = val_](std::string name) {
      if constexpr (requires { runner->set_dataset(std::move(name)); })
        runner->set_dataset(std::move(name));
    };
    struct unname_on_exit {
      decltype(name_epochs)& name;
      ~unname_on_exit() { name({}); }
    } unname{name_epochs};
    last_val_scores_.clear();
    for (const auto& set : val_loader) {
      name_epochs(set.name);
      const epoch_result validated = run(*set.loader, "the validation runner on " + set.name);
      for (const auto& [name, value] : validated.scores)
        last_val_scores_[set.name + "/" + name] = value;
      stop = validated.stop_training || stop;
    }
  } else {
    const epoch_result validated = run(val_loader, "the validation runner");
    last_val_scores_ = validated.scores;
    stop = validated.stop_training;
  }
  last_validated_update_ = detail::updates_of(*train_);
  ctx.validated = true;
  return stop;
}

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
bool Trainer<Model, TrainRunner, ValRunner, Hooks...>::validation_due(std::int64_t epoch) const {
  if (ended_at_validation_) return false;
  return (options_.val_interval > 0 && (epoch + 1) % options_.val_interval == 0) ||
         step_validation_due();
}

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
bool Trainer<Model, TrainRunner, ValRunner, Hooks...>::step_validation_due() const {
  const std::int64_t n = options_.val_interval_steps;
  return n > 0 && detail::updates_of(*train_) / n > last_validated_update_ / n;
}

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
template <class ValLoader, class ValC>
bool Trainer<Model, TrainRunner, ValRunner, Hooks...>::validate_between_batches(
    const epoch_progress& progress, ValLoader& val_loader, ValC& val_criterion) {
  Ctx ctx = step_ctx_;  // the epoch's context (its epoch, learning rates)
  ctx.global_step = global_step();
  ctx.batches_done = progress.batches();
  ctx.gradients_pending = progress.gradients_pending();
  ctx.stop_training = false;
  ctx.stop_reason.clear();
  const bool runner_stop = validate(ctx, val_loader, val_criterion);
  set_training_mode(*model_, true);
  ctx.val_scores = last_val_scores_;
  // As after an epoch's validation; a scheduler stepped by epochs or updates is not due here.
  if (options_.scheduler && options_.scheduler->wants_metric())
    detail::step_scheduler(options_, ctx);
  detail::ask_stop_condition(options_, ctx);
  if (runner_stop && !ctx.stop_training) ctx.request_stop("requested by a runner hook");
  naming_memory_failure("the trainer's hooks at on_trainer_validation_finished", ctx.epoch,
                        options_.epochs,
                        [&] { hooks_.template fire<points::on_trainer_validation_finished>(ctx); });
  if (!ctx.stop_training) return false;
  stop_at_epoch_end_ = ctx.stop_reason.empty() ? "requested by a trainer hook" : ctx.stop_reason;
  ended_at_validation_ = true;
  return true;
}

}  // namespace hookforge
