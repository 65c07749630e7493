// hookforge/torch/runners/trainer_bookkeeping-inl.hpp — the Trainer's bookkeeping that depends
// on none of its template arguments (the context, learning rates, the scheduler's step, the
// stop condition, the epoch's record): included by trainer_bookkeeping.hpp header-only,
// compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "hookforge/torch/optim/lr_scheduler.hpp"
#include "hookforge/torch/optim/stop_condition.hpp"
#include "hookforge/torch/runners/trainer_bookkeeping.hpp"  // and what it declares with

namespace hookforge {

namespace detail {

HOOKFORGE_INLINE TrainerContext trainer_context(const trainer_options& options,
                                                std::int64_t completed_epochs,
                                                std::int64_t global_step,
                                                const epoch_scores& last_val_scores) {
  TrainerContext ctx;
  ctx.work_dir = options.work_dir;
  ctx.monitor = options.monitor;
  ctx.epoch = completed_epochs;
  ctx.completed_epochs = completed_epochs;
  ctx.total_epochs = options.epochs;
  ctx.global_step = global_step;
  ctx.val_scores = last_val_scores;
  return ctx;
}

HOOKFORGE_INLINE std::vector<double> learning_rates(
    const std::vector<named_optimizer>& optimizers) {
  std::vector<double> lrs;
  for (const auto& o : optimizers)
    for (const auto& group : o.optimizer->param_groups())
      lrs.push_back(group.has_options() ? group.options().get_lr() : 0.0);
  return lrs;
}

HOOKFORGE_INLINE double monitored_score(const trainer_options& options,
                                        const epoch_scores& scores) {
  auto it = scores.find(options.monitor);
  if (it == scores.end()) {
    std::string names;
    for (const auto& [name, value] : scores) names += (names.empty() ? "" : ", ") + name;
    throw std::invalid_argument("Trainer: monitor '" + options.monitor +
                                "' is not a validation score (scores: " + names + ")");
  }
  return it->second;
}

HOOKFORGE_INLINE void step_scheduler(const trainer_options& options, const TrainerContext& ctx) {
  if (!options.scheduler) return;
  if (!options.scheduler->wants_metric())
    options.scheduler->step();
  else if (ctx.validated)
    options.scheduler->step(monitored_score(options, ctx.val_scores));
}

HOOKFORGE_INLINE void ask_stop_condition(const trainer_options& options, TrainerContext& ctx) {
  if (ctx.validated && options.stop &&
      options.stop->should_stop(monitored_score(options, ctx.val_scores)))
    ctx.request_stop("stop condition");
}

HOOKFORGE_INLINE void check_stop(const trainer_options& options, TrainerContext& ctx,
                                 bool runner_stop, bool max_steps_reached) {
  ask_stop_condition(options, ctx);
  if (runner_stop && ctx.stop_reason.empty()) ctx.request_stop("requested by a runner hook");
  if (options.stop_token.stop_requested() && ctx.stop_reason.empty())
    ctx.request_stop("stop requested");
  if (max_steps_reached && ctx.stop_reason.empty()) ctx.request_stop("max_steps");
}

HOOKFORGE_INLINE double seconds_since(std::chrono::steady_clock::time_point started) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

HOOKFORGE_INLINE void record_epoch(fit_result& result, const TrainerContext& ctx,
                                   std::int64_t epoch,
                                   std::chrono::steady_clock::time_point started) {
  result.train_scores = ctx.train_scores;
  result.val_scores = ctx.val_scores;
  result.history.push_back({epoch, ctx.train_scores,
                            ctx.validated ? ctx.val_scores : epoch_scores{}, ctx.validated,
                            ctx.learning_rates, seconds_since(started)});
}

}  // namespace detail

}  // namespace hookforge
