// hookforge/torch/runners/trainer_types.hpp — the Trainer's options, its context and what
// fit() returns: trainer_options, TrainerContext (with the points it is fired at,
// trainer_points), checkpoint_content, no_validation, epoch_record and fit_result. The
// Trainer itself is in trainer.hpp, the header to include.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include <torch/nn/module.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/torch/data/scores.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"
#include "hookforge/torch/optim/stop_condition.hpp"

namespace hookforge {

/// What a checkpoint holds besides the model, counters, RNG, scheduler and hook state.
struct checkpoint_content {
  bool optimizer = true;  ///< the optimiser's state (without it, a resume restarts the optimiser)
};

namespace detail {
/// What a trainer lets its hooks do to the run, through TrainerContext.
class trainer_actions {
 public:
  virtual void save_checkpoint(const std::filesystem::path& path, checkpoint_content content) = 0;
  /// The model's modules, by checkpoint section ("model"; a GAN's "generator", ...); none
  /// for a stand-in without a model.
  virtual std::vector<std::pair<std::string, torch::nn::Module*>> model_modules() { return {}; }

 protected:
  ~trainer_actions() = default;
};
}  // namespace detail

/// The Trainer's context.
struct TrainerContext {
  std::int64_t epoch = 0;  ///< the epoch just run (at on_trainer_epoch_finished), or in progress
                           ///< (at on_trainer_step_finished, on_trainer_validation_finished)
  std::int64_t completed_epochs = 0;  ///< epochs finished, this one included once it finished
  std::int64_t total_epochs = 0;      ///< epochs planned: `epochs`, or fewer where max_steps ends
                                      ///< the run first
  std::int64_t global_step = 0;       ///< training batches processed so far
  /// At on_trainer_step_finished and on_trainer_validation_finished: the epoch's training
  /// batches done so far; 0 elsewhere.
  std::int64_t batches_done = 0;
  /// At on_trainer_step_finished: gradients of this batch wait for an update (gradient
  /// accumulation); a checkpoint cannot be taken here (they are not saved).
  bool gradients_pending = false;
  epoch_scores train_scores;  ///< this epoch's training means
  epoch_scores val_scores;    ///< the last validation's means (empty before any)
  bool validated = false;     ///< validation ran this epoch (at on_trainer_epoch_finished: at
                              ///< its end; true at on_trainer_validation_finished)
  /// Per param group, as used this epoch: every optimiser of the training runner in the
  /// order of its named_optimizers() (GANTrainingRunner: D's groups, then G's).
  std::vector<double> learning_rates;
  std::vector<double> next_learning_rates;  ///< the same, for the next epoch (scheduler stepped)
  double epoch_seconds = 0;                 ///< wall time of this epoch's training and validation
  /// At on_trainer_epoch_finished: more figures of the epoch, which hooks add for the
  /// loggers to write (HookProfiler: "hook_ms/<hook>.<method>@<point>"); LossLogger puts
  /// them in metrics.jsonl, TensorBoardLogger in scalars of those names.
  std::map<std::string, double> epoch_figures;
  std::filesystem::path work_dir;  ///< trainer_options::work_dir: where hooks write their files
  std::string monitor;             ///< trainer_options::monitor: the score that judges the run
  bool stop_training = false;      ///< the run stops after this epoch (request_stop sets it); at
                                   ///< on_trainer_step_finished: it stops at this step if a hook
                                   ///< saves a checkpoint there (trainer_options::stop_mid_epoch);
                                   ///< at on_trainer_validation_finished: the epoch ends after
                                   ///< this batch, and the run with it
  std::string stop_reason;         ///< why (the stop condition's, or a hook's reason); at
                                   ///< on_training_finished, why the run ended ("epochs",
                                   ///< "max_steps", "stop requested" for a signal, ...)
  std::string error;  ///< at on_training_failed: the exception's what() (the run then rethrows)
  /// At on_before_save_checkpoint: extra entries hooks add to the checkpoint;
  /// at on_after_load_checkpoint: the entries read back.
  state_map* checkpoint_extra = nullptr;
  /// The trainer firing this context (set by the Trainer; null in a context made by hand).
  detail::trainer_actions* trainer = nullptr;

  /// Stop the run after this epoch, saying why (the reason ends up in fit_result::stop_reason).
  void request_stop(std::string reason);

  /// Write the trainer's checkpoint to `path` (atomically). At on_trainer_epoch_finished the
  /// file resumes exactly: the scheduler has stepped and the stop condition has been asked.
  /// At on_trainer_step_finished (and on_trainer_validation_finished) it resumes exactly in
  /// the middle of the epoch: the training
  /// loader's position, the epoch's partial scores and the learning rates it started with
  /// are saved too (section "epoch_in_progress").
  void save_checkpoint(const std::filesystem::path& path, checkpoint_content content = {}) const;

  /// The trainer's model as modules, each under its checkpoint section ("model"; a GAN's
  /// "generator" and "discriminator"); empty for a model that is a plain callable.
  std::vector<std::pair<std::string, torch::nn::Module*>> model_modules() const;
};

/// The points a Trainer fires (every Trainer type, and hookforge-run's Trainer entry).
using trainer_points =
    point_list<points::on_training_began, points::on_trainer_step_finished,
               points::on_trainer_validation_finished, points::on_trainer_epoch_finished,
               points::on_training_finished, points::on_training_failed,
               points::on_before_save_checkpoint, points::on_after_save_checkpoint,
               points::on_after_load_checkpoint>;

/// Pass as the validation runner to train without validation.
struct no_validation {};

/// How the ranks of a data-parallel run stop at the same batch and save it
/// (hookforge::distributed::agreement makes one; empty members: one process decides alone).
/// With stop_mid_epoch, after each training batch but an epoch's last, `stop` is called with
/// whether this process was asked to stop and answers whether the run stops at this batch,
/// the same on every rank; the run then stops there on every rank, rank 0 saving. Before the
/// save, `gather` (a collective) gives each rank's epoch in progress (its partial scores) to
/// every rank, and a checkpoint taken there holds them all: each rank goes on with its own.
struct rank_agreement {
  int rank = 0;
  int world_size = 1;
  std::function<bool(bool)> stop;
  std::function<std::vector<state_map>(const state_map&)> gather;
};

struct trainer_options {
  std::int64_t epochs = 1;
  std::int64_t val_interval = 1;  ///< validate at the end of every N epochs; 0 never
  /// Also validate after every N optimiser updates (0: not by updates), counted over the run
  /// as max_steps counts them: between two batches, where the Trainer fires
  /// on_trainer_validation_finished (its monitors and stop condition follow it, and the
  /// training epoch goes on), or as the epoch's own validation when that update was the
  /// epoch's last.
  std::int64_t val_interval_steps = 0;
  /// Stop after this many optimiser updates (-1: no limit), counted over the run as a
  /// scheduler with interval step counts them; reached within an epoch, that epoch ends
  /// there (its validation, scheduler step and hooks as at any epoch's end).
  std::int64_t max_steps = -1;
  lr_scheduler* scheduler = nullptr;     ///< stepped per its interval(); not owned
  stop_condition* stop = nullptr;        ///< asked after each validation; not owned
  std::string monitor = "loss";          ///< validation score for plateau schedulers and `stop`
                                         ///< (both follow every validation that runs)
  std::filesystem::path work_dir = ".";  ///< where hooks write files (ctx.work_dir)
  bool print_bindings = false;           ///< print every component's binding table at start
  /// Once stop is requested, the run stops after the current epoch, its hooks seeing
  /// stop_training with the reason "stop requested" (hookforge-run: SIGINT, SIGTERM).
  std::stop_token stop_token = {};
  /// With stop_token: the request is also seen after each training batch, at
  /// on_trainer_step_finished (ctx.stop_training); when a hook saves a checkpoint there
  /// (CheckpointSaver does), the run stops at that batch rather than at the epoch's end.
  /// Several ranks must stop at the same batch: give them an agreement, or turn this off.
  bool stop_mid_epoch = true;
  /// Several ranks: how they stop together in the middle of an epoch (see rank_agreement).
  rank_agreement agreement = {};
  /// fit() first sets glibc's malloc thresholds for training, process-wide (tune_malloc,
  /// malloc_tuning.hpp: without them a step's temporaries can cost page faults every step);
  /// false leaves the allocator as it is. GLIBC_TUNABLES' malloc settings win either way.
  bool tune_malloc = true;
};

/// One epoch of a fit() call, as fit_result::history keeps it.
struct epoch_record {
  std::int64_t epoch = 0;  ///< 0-based, counting epochs of a loaded checkpoint
  epoch_scores train_scores;
  epoch_scores val_scores;  ///< this epoch's validation (empty when it did not validate)
  bool validated = false;
  std::vector<double>
      learning_rates;  ///< per param group, as used this epoch (TrainerContext's order)
  double seconds = 0;  ///< wall time of the epoch: training, validation and hooks
};

/// What fit() returns.
struct fit_result {
  std::int64_t completed_epochs = 0;
  std::int64_t global_step = 0;  ///< training batches processed, over the run
  bool mid_epoch = false;        ///< it stopped between two batches of epoch `completed_epochs`
  epoch_scores train_scores;     ///< the last epoch's
  epoch_scores val_scores;       ///< the last validation's
  std::string stop_reason;       ///< "epochs" when all planned epochs ran, "max_steps" when
                                 ///< the updates did
  std::vector<epoch_record> history;  ///< every epoch this call ran, in order
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/runners/trainer_types-inl.hpp"
#endif
