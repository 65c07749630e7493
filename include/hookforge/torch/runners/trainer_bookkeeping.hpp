// hookforge/torch/runners/trainer_bookkeeping.hpp — the Trainer's bookkeeping: the context it
// starts an epoch with, the learning rates, the monitored score, the scheduler's step and the
// stop condition after a validation, the epoch's record, and the small templates the loop asks
// of its runners and loaders (updates taken, updates an epoch, the loader's state, what
// validation runs). What depends on none of the Trainer's template arguments is out of line
// (trainer_bookkeeping-inl.hpp), compiled once into hookforge::torch_compiled
// (core/build_mode.hpp). Included by trainer.hpp.
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/batches.hpp"
#include "hookforge/torch/data/scores.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/runners/epoch.hpp"
#include "hookforge/torch/runners/trainer_types.hpp"

namespace hookforge {

namespace detail {

/// The context at the start of a fit() or an epoch, before the epoch's own fields and
/// before `trainer`, which the Trainer sets to itself.
HOOKFORGE_INLINE TrainerContext trainer_context(const trainer_options& options,
                                                std::int64_t completed_epochs,
                                                std::int64_t global_step,
                                                const epoch_scores& last_val_scores);
/// The lr of each param group of each optimiser, in order (0 for a group without options).
HOOKFORGE_INLINE std::vector<double> learning_rates(const std::vector<named_optimizer>& optimizers);
/// The score `options.monitor` names; std::invalid_argument listing the scores when absent.
HOOKFORGE_INLINE double monitored_score(const trainer_options& options, const epoch_scores& scores);
/// The scheduler's step for the epoch just run, or after a validation between batches: a
/// metric-based one steps with the monitored score when ctx.validated, the others always.
HOOKFORGE_INLINE void step_scheduler(const trainer_options& options, const TrainerContext& ctx);
/// The optimiser updates `runner` has taken (its optimizer_steps(); else its global_step()):
/// what a scheduler with interval step counts.
template <class Runner>
std::int64_t updates_of(const Runner& runner) {
  if constexpr (requires { runner.optimizer_steps(); })
    return runner.optimizer_steps();
  else
    return runner.global_step();
}
/// The updates `runner` takes in an epoch of `loader` (one per gradient_accumulation_steps
/// batches, and one for the epoch's last); -1 when the loader cannot tell its batches.
template <class Runner, class Loader>
std::int64_t updates_per_epoch(const Runner& runner, Loader& loader) {
  const std::int64_t batches = batch_count(loader);
  if (batches < 0) return -1;
  if constexpr (requires { runner.options().gradient_accumulation_steps; }) {
    const std::int64_t k = runner.options().gradient_accumulation_steps;
    return (batches + k - 1) / k;
  } else {
    return batches;
  }
}
/// After a validation (ctx.validated), the stop condition asked with the monitored score: a
/// stop requested with the reason "stop condition" when it holds.
HOOKFORGE_INLINE void ask_stop_condition(const trainer_options& options, TrainerContext& ctx);
/// At an epoch's end: ask_stop_condition, a stop requested by a runner's hook (`runner_stop`),
/// by the stop token, then the step budget spent: each through ctx.request_stop, the first
/// reason kept.
HOOKFORGE_INLINE void check_stop(const trainer_options& options, TrainerContext& ctx,
                                 bool runner_stop, bool max_steps_reached);
/// Seconds of wall time since `started`.
HOOKFORGE_INLINE double seconds_since(std::chrono::steady_clock::time_point started);
/// Epoch `epoch`'s scores and record into `result`.
HOOKFORGE_INLINE void record_epoch(fit_result& result, const TrainerContext& ctx,
                                   std::int64_t epoch,
                                   std::chrono::steady_clock::time_point started);

/// Thrown from the training runner's step to end fit() between two batches: a stop was
/// requested and a hook saved a checkpoint at that batch.
struct stopped_between_batches {
  std::string reason;
};

/// The loader's state_dict as a function while fit() runs (empty when it has none).
template <class Loader>
std::function<state_map()> loader_state_function(Loader& loader) {
  if constexpr (requires {
                  { loader.state_dict() } -> std::convertible_to<state_map>;
                })
    return [&loader] { return loader.state_dict(); };
  else
    return {};
}

/// What the validation runner runs: the model's validation_model() (gan_models: the generator),
/// else the model.
template <class Model>
decltype(auto) validation_model(Model& model) {
  if constexpr (requires { model.validation_model(); })
    return model.validation_model();
  else
    return (model);
}

}  // namespace detail

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/runners/trainer_bookkeeping-inl.hpp"
#endif
