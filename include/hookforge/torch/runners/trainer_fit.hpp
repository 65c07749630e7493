// hookforge/torch/runners/trainer_fit.hpp — what fit() runs once it has checked its
// arguments: the epochs, one after the other, and on_training_failed when an exception leaves
// them. Definitions of members trainer.hpp declares; include trainer.hpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>

#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/torch/runners/epoch_progress.hpp"
#include "hookforge/torch/runners/trainer.hpp"
#include "hookforge/torch/runners/trainer_bookkeeping.hpp"

namespace hookforge {

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
template <class TrainLoader, class ValLoader, class TrainC, class ValC>
fit_result Trainer<Model, TrainRunner, ValRunner, Hooks...>::run_fit(TrainLoader& train_loader,
                                                                     ValLoader& val_loader,
                                                                     TrainC& train_criterion,
                                                                     ValC& val_criterion) {
  try {
    return run_epochs(train_loader, val_loader, train_criterion, val_criterion);
  } catch (const std::exception& e) {
    training_failed(e.what());
    throw;
  } catch (...) {
    training_failed("an exception that is not a std::exception");
    throw;
  }
}

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
void Trainer<Model, TrainRunner, ValRunner, Hooks...>::training_failed(std::string error) {
  Ctx ctx = context();
  ctx.error = std::move(error);
  try {
    hooks_.template fire<points::on_training_failed>(ctx);
  } catch (const std::exception& e) {
    warn(std::string("a hook at on_training_failed failed too: ") + e.what());
  }
}

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
template <class TrainLoader, class ValLoader, class TrainC, class ValC>
fit_result Trainer<Model, TrainRunner, ValRunner, Hooks...>::run_epochs(TrainLoader& train_loader,
                                                                        ValLoader& val_loader,
                                                                        TrainC& train_criterion,
                                                                        ValC& val_criterion) {
  const bool resuming = !resume_state_.empty();
  epoch_progress* progress = start_fit(train_loader, val_loader, val_criterion);
  const bool per_update = schedules_per_update();
  loader_state_ = detail::loader_state_function(train_loader);
  struct unwatch {
    Trainer& t;
    epoch_progress* p;
    ~unwatch() {
      if (p) p->on_step({});
      t.loader_state_ = {};
    }
  } unwatch_on_exit{*this, progress};

  Ctx ctx = context();
  hooks_.template fire<points::on_training_began>(ctx);
  fit_result result;
  result.stop_reason = "epochs";
  bool resumed_epoch = resuming;
  while (completed_epochs_ < options_.epochs) {
    if (max_steps_reached()) {  // a run resumed with its budget spent
      result.stop_reason = "max_steps";
      break;
    }
    const auto started = std::chrono::steady_clock::now();
    const std::int64_t epoch = completed_epochs_;
    ctx = begin_epoch(epoch, train_loader, val_loader, train_criterion, val_criterion,
                      std::exchange(resumed_epoch, false));
    const std::int64_t epochs = options_.epochs;
    epoch_result trained;
    try {
      trained = naming_memory_failure("the training runner", epoch, epochs, [&] {
        return train_->run_epoch(*model_, train_loader, epoch, train_criterion);
      });
    } catch (const detail::stopped_between_batches& stopped) {
      result.stop_reason = stopped.reason;
      result.mid_epoch = true;
      break;
    }
    if (per_update) step_scheduler_per_update();  // the epoch's last batch
    ctx.train_scores = trained.scores;
    bool stop = trained.stop_training;
    if constexpr (validates)
      if (validation_due(epoch)) stop = validate(ctx, val_loader, val_criterion) || stop;
    ended_at_validation_ = false;
    stop = end_epoch(ctx, stop, per_update, started);
    detail::record_epoch(result, ctx, epoch, started);
    if (stop) {
      result.stop_reason = ctx.stop_reason;
      break;
    }
  }
  ctx.completed_epochs = completed_epochs_;
  ctx.global_step = global_step();
  ctx.stop_reason = result.stop_reason;
  hooks_.template fire<points::on_training_finished>(ctx);
  result.completed_epochs = completed_epochs_;
  result.global_step = global_step();
  return result;
}

}  // namespace hookforge
