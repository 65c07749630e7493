// hookforge/torch/runners/trainer_mid_epoch.hpp — the Trainer between two training batches:
// the watch over the steps (watch_steps), on_trainer_step_finished and a stop there, the checkpoint
// section "epoch_in_progress" (the epoch's batches, partial scores, loader position and learning
// rates; each rank's after a stop the ranks agreed on), and the fit() that goes on from it.
// Definitions of members trainer.hpp declares; include trainer.hpp.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "hookforge/core/points.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/runners/epoch_progress.hpp"
#include "hookforge/torch/runners/trainer.hpp"

namespace hookforge {

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
void Trainer<Model, TrainRunner, ValRunner, Hooks...>::step_finished(const epoch_progress& progress,
                                                                     bool stop, bool agreed) {
  Ctx& ctx = step_ctx_;  // the epoch's context, made once: no allocation per batch
  ctx.global_step = global_step();
  ctx.batches_done = progress.batches();
  ctx.gradients_pending = progress.gradients_pending();
  ctx.stop_training = false;
  ctx.stop_reason.clear();
  if (stop) ctx.request_stop("stop requested");
  if (stop && agreed && options_.agreement.gather)  // every rank, before rank 0 saves
    rank_progress_ = options_.agreement.gather(progress.state());
  const std::int64_t saved_before = checkpoints_written_;
  hooks_.template fire<points::on_trainer_step_finished>(ctx);
  // A stop the ranks agreed on ends the epoch on every rank, saved or not (rank 0 saves).
  if (stop && (agreed || checkpoints_written_ != saved_before))
    throw detail::stopped_between_batches{ctx.stop_reason};
}

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
template <class Loader>
void Trainer<Model, TrainRunner, ValRunner, Hooks...>::resume_epoch(Loader& loader,
                                                                    epoch_progress* progress) {
  // Kept until the resume succeeds: a fit() refused here (another loader) and called again
  // still goes on from the checkpoint's batch, never from the epoch's start.
  const state_map& state = resume_state_;
  const auto epoch = state_value<std::int64_t>(state, "epoch_in_progress", "epoch");
  const auto batches = state_value<std::int64_t>(state, "epoch_in_progress", "batches");
  const std::string where = "the checkpoint was taken in the middle of epoch " +
                            std::to_string(epoch + 1) + " (after batch " + std::to_string(batches) +
                            ")";
  if (epoch != completed_epochs_)
    throw std::invalid_argument("Trainer: " + where + ", but " + std::to_string(completed_epochs_) +
                                " epochs are complete");
  if (!progress)
    throw std::invalid_argument(
        "Trainer: " + where +
        "; this training runner cannot go on from there (it has no progress(): write it on "
        "runner_base or training_runner_base)");
  if constexpr (requires { loader.load_state_dict(state); })
    loader.load_state_dict(nested_state(state, "loader"));
  else
    throw std::invalid_argument("Trainer: " + where +
                                "; the training loader has no load_state_dict() to go on from "
                                "there (hookforge::DataLoader has)");
  epoch_learning_rates_ =
      state_value<std::vector<double>>(state, "epoch_in_progress", "learning_rates");
  progress->resume(own_progress(state, where));
  resume_state_.clear();
}

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
state_map Trainer<Model, TrainRunner, ValRunner, Hooks...>::own_progress(
    const state_map& state, const std::string& where) const {
  if (!state.count("ranks")) return state;
  const auto ranks = state_value<std::int64_t>(state, "epoch_in_progress", "ranks");
  const auto& agreement = options_.agreement;
  if (ranks != agreement.world_size)
    throw std::invalid_argument("Trainer: " + where + " by " + std::to_string(ranks) +
                                " ranks; this run has " + std::to_string(agreement.world_size) +
                                ": go on with " + std::to_string(ranks));
  return nested_state(state, "ranks." + std::to_string(agreement.rank));
}

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
state_map Trainer<Model, TrainRunner, ValRunner, Hooks...>::progress_state() {
  epoch_progress* progress = train_progress();
  if (!progress || !progress->in_epoch()) return {};
  const std::string where = "Trainer: a checkpoint after batch " +
                            std::to_string(progress->batches()) + " of epoch " +
                            std::to_string(progress->epoch() + 1);
  if (progress->gradients_pending())
    throw std::logic_error(where +
                           " would lose the gradients that wait for an update (gradient "
                           "accumulation): save after a batch that updates");
  if (!loader_state_)
    throw std::logic_error(where +
                           " needs the training loader's position, and this loader has no "
                           "state_dict() (hookforge::DataLoader has)");
  state_map state = progress->state();
  if (!rank_progress_.empty()) {
    state["ranks"] = static_cast<std::int64_t>(rank_progress_.size());
    for (std::size_t r = 0; r < rank_progress_.size(); ++r)
      nest_state(state, "ranks." + std::to_string(r), rank_progress_[r]);
  }
  nest_state(state, "loader", loader_state_());
  state["learning_rates"] = c10::List<double>(epoch_learning_rates_);
  return state;
}

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
template <class ValLoader, class ValC>
void Trainer<Model, TrainRunner, ValRunner, Hooks...>::watch_steps(epoch_progress& progress,
                                                                   bool per_update,
                                                                   ValLoader& val_loader,
                                                                   ValC& val_criterion) {
  const bool step_hooks = hooks_.template binds<points::on_trainer_step_finished>();
  const bool step_stops = options_.stop_mid_epoch && options_.stop_token.stop_possible();
  const bool budget = options_.max_steps >= 0;
  const bool step_validation = options_.val_interval_steps > 0;
  if (!step_hooks && !step_stops && !per_update && !budget && !step_validation) return;
  // The loader and criterion by a default capture: a trainer without validation uses neither
  // (an explicit capture would be an unused one, a warning under Clang).
  progress.on_step([&, this, step_hooks, step_stops, per_update] {
    // The budget spent, this batch ends the epoch: what follows is the epoch's end.
    if (max_steps_reached()) return progress.end_epoch();
    if (per_update) step_scheduler_per_update();  // before the hooks, which may save
    if constexpr (validates)
      if (step_validation_due() && validate_between_batches(progress, val_loader, val_criterion))
        return progress.end_epoch();  // a stop was asked there: the epoch ends with this batch
    bool stop = step_stops && options_.stop_token.stop_requested();
    const bool agreed = step_stops && options_.agreement.stop;
    if (agreed) stop = options_.agreement.stop(stop);
    if (step_hooks || stop) step_finished(progress, stop, agreed);
  });
}

}  // namespace hookforge
