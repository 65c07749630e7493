// hookforge/torch/runners/trainer_validation.hpp — the Trainer's validations: at an epoch's end
// (every val_interval epochs) and between two batches (every val_interval_steps optimiser
// updates), and what follows one between batches: a metric-based scheduler's step, the stop
// condition and on_trainer_validation_finished, where a stop ends the epoch after that batch.
// Definitions of members trainer.hpp declares; include trainer.hpp.
#pragma once

#include <cstdint>

#include "hookforge/core/points.hpp"
#include "hookforge/torch/data/model.hpp"
#include "hookforge/torch/runners/epoch_progress.hpp"
#include "hookforge/torch/runners/trainer.hpp"

namespace hookforge {

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
template <class ValLoader, class ValC>
bool Trainer<Model, TrainRunner, ValRunner, Hooks...>::validate(Ctx& ctx, ValLoader& val_loader,
                                                                ValC& val_criterion) {
  epoch_result validated =
      naming_memory_failure("the validation runner", ctx.epoch, options_.epochs, [&] {
        return val_->run_epoch(detail::validation_model(*model_), val_loader, ctx.epoch,
                               val_criterion);
      });
  last_val_scores_ = validated.scores;
  last_validated_update_ = detail::updates_of(*train_);
  ctx.validated = true;
  return validated.stop_training;
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
  const auto* scheduler = options_.scheduler;
  if ((scheduler && scheduler->wants_metric()) || options_.stop) {
    const double score = detail::monitored_score(options_, ctx.val_scores);
    if (scheduler && scheduler->wants_metric()) options_.scheduler->step(score);
    if (options_.stop && options_.stop->should_stop(score)) ctx.request_stop("stop condition");
  }
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
