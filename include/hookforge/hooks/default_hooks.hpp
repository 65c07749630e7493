// hookforge/hooks/default_hooks.hpp — the usual console output and files in one object.
//
//   hookforge::default_hooks defaults;   // or default_hooks({.checkpoint = {.max_keep_ckpts = 3}})
//   hookforge::TrainingEpochRunner train(optimizer, {}, defaults.training());
//   hookforge::ValidationEpochRunner validate({}, defaults.validation());
//   hookforge::Trainer trainer(model, train, validate, {.epochs = 10, .work_dir = "runs/demo"},
//                              defaults.trainer());
//
// It owns an IterTimer, a ProgressBar (showing the timer's figures), a LossLogger, a
// CheckpointSaver and a ModelSummary (printed as training begins; `.summary = std::nullopt`
// leaves it out), and hands each component its share as a hook_set of references
// (MMEngine's default_hooks: timer, logger, checkpoint; Lightning's model summary). With
// `.tensorboard` set it also writes TensorBoard event files (a TensorBoardLogger; without it, that
// hook is attached switched off: it writes nothing); with `.mlflow` set, an MLflowLogger
// too (the same way). The object must outlive the components it was
// given to; it is neither copied nor moved, so the references stay valid.
#pragma once

#include <optional>

#include "hookforge/core/hook_set.hpp"
#include "hookforge/core/wrappers/gate.hpp"
#include "hookforge/core/wrappers/ref.hpp"
#include "hookforge/hooks/checkpoint_saver.hpp"
#include "hookforge/hooks/iter_timer.hpp"
#include "hookforge/hooks/loss_logger.hpp"
#include "hookforge/hooks/mlflow_logger.hpp"
#include "hookforge/hooks/model_summary.hpp"
#include "hookforge/hooks/progress_bar.hpp"
#include "hookforge/hooks/tensorboard_logger.hpp"

namespace hookforge {

struct default_hooks_options {
  progress_bar_options progress = {};  ///< its `timer` is set to the bundle's timer
  loss_logger_options logger = {};     ///< files in the trainer's work_dir unless out_dir is set
  checkpoint_saver_options checkpoint = {};
  /// Set: TensorBoard event files too (`.tensorboard = {}` for the defaults).
  std::optional<tensorboard_logger_options> tensorboard = {};
  /// Set: the run in an MLflow tracking server too (`.mlflow = {}`: $MLFLOW_TRACKING_URI).
  std::optional<mlflow_logger_options> mlflow = {};
  /// Set (the default): the model summary as training begins; std::nullopt: none.
  std::optional<model_summary_options> summary = model_summary_options{};
};

class default_hooks {
 public:
  explicit default_hooks(default_hooks_options options = {})
      : progress(with_timer(std::move(options.progress), timer)),
        logger(std::move(options.logger)),
        checkpoint(std::move(options.checkpoint)),
        tensorboard(options.tensorboard.value_or(tensorboard_logger_options{})),
        mlflow(options.mlflow ? MLflowLogger(*options.mlflow) : MLflowLogger::switched_off()),
        summary(options.summary.value_or(model_summary_options{})),
        tensorboard_on_(options.tensorboard.has_value()),
        mlflow_on_(options.mlflow.has_value()),
        summary_on_(options.summary.has_value()) {}
  default_hooks(const default_hooks&) = delete;
  default_hooks& operator=(const default_hooks&) = delete;

  IterTimer timer;
  ProgressBar progress;
  LossLogger logger;
  CheckpointSaver checkpoint;
  TensorBoardLogger tensorboard;
  MLflowLogger mlflow;
  ModelSummary summary;

  /// The TensorBoardLogger, switched on by the options' `tensorboard`.
  auto board() { return enabled_if(ref(tensorboard), tensorboard_on_); }
  /// The MLflowLogger, switched on by the options' `mlflow`.
  auto tracker() { return enabled_if(ref(mlflow), mlflow_on_); }
  /// For a training runner: timer, progress bar, and the loggers' per-step rows.
  auto training() { return hook_set(ref(timer), ref(progress), ref(logger), board(), tracker()); }
  /// For a validation or inference runner: timer, progress bar, and TensorBoard's images.
  auto validation() { return hook_set(ref(timer), ref(progress), board()); }
  /// For the Trainer: the model summary, the loggers' epoch rows and the checkpoints.
  auto trainer() {
    return hook_set(enabled_if(ref(summary), summary_on_), ref(logger), board(), tracker(),
                    ref(checkpoint));
  }

 private:
  static progress_bar_options with_timer(progress_bar_options options, const IterTimer& timer) {
    options.timer = &timer;
    return options;
  }

  bool tensorboard_on_;
  bool mlflow_on_;
  bool summary_on_;
};

}  // namespace hookforge
