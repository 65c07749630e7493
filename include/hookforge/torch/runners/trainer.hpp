// hookforge/torch/runners/trainer.hpp — the epoch loop around a training and a validation runner.
//
// The Trainer drives any runner that meets hookforge::training_runner (and, for validation,
// hookforge::validation_runner): see runner_concepts.hpp. The built-in TrainingEpochRunner and
// GANTrainingRunner do, and so does a runner written with training_runner_base. The model is
// given to both runners; one with `validation_model()` (hookforge::gan_models: the generator)
// gives the validation runner that instead, and one with `checkpoint_modules()` saves those
// modules, each under its own section, instead of one section "model".
//
//   on_training_began
//   per epoch:  criterion.set_epoch(epoch), loaders' set_epoch(epoch)   (when they have one)
//               training runner epoch, with on_trainer_step_finished after each training
//                                                     batch but the epoch's last (when a hook
//                                                     binds it, or a stop request may come)
//                                                     (max_steps: the epoch ends after
//                                                     the batch whose update spends them)
//                 and, every val_interval_steps updates, between two batches:
//                 validation runner epoch, a metric-based scheduler's step, the stop
//                 condition, on_trainer_validation_finished (a stop asked there ends the
//                 epoch after this batch, as max_steps does)
//               validation runner epoch               (every val_interval epochs, or when
//                                                     the epoch's last update is due by
//                                                     val_interval_steps)
//               LR scheduler step                     (interval step: after each optimiser
//                                                     update instead; metric-based ones get
//                                                     the monitored val
//               score) stop condition                        (ctx.stop_training, ctx.stop_reason)
//               on_trainer_epoch_finished             (scores, learning rates, epoch_seconds)
//               hook stop requests, the epoch's record (fit_result::history)
//   on_training_finished
//
// The validation loader may be a validation_sets (data/validation_sets.hpp): each validation
// then runs the validation runner's epoch over every named set, the scores of set s being
// "s/<score>".
//
// A memory failure in the training runner, the validation runner or the epoch's trainer
// hooks is rethrown as hookforge::out_of_memory naming that part and the epoch
// (memory_failure.hpp).
//
// The epoch's bookkeeping is complete before on_trainer_epoch_finished fires, so a hook
// that saves there (ctx.save_checkpoint) writes a file that resumes exactly: loading it
// and calling fit() gives the same parameters, optimiser, scheduler and hook state as
// the run that did not stop.
//
// A checkpoint taken at on_trainer_step_finished resumes in the middle of the epoch: it also
// holds the training loader's position (its state_dict: epoch, batches yielded, seed), the
// training runner's epoch_progress (batches done, the epoch's partial scores, exactly) and
// the learning rates the epoch started with; fit() after loading it goes on with the next
// batch (the loader needs load_state_dict, the runner progress(): runner_base has it). With
// stop_mid_epoch, a stop request (stop_token) is seen after every batch, and the run stops
// there when a hook saved a checkpoint there (fit_result::mid_epoch).
//
// Checkpoints (save_checkpoint / load_checkpoint) hold the model, the training runner's
// optimisers (optimizers_of) with their param-group options, the scheduler, the runners'
// own state (counters, scalers), the RNG state and
// the state of every persistent hook of the trainer and both runners, saved through
// io/persistence.hpp. Loading one and calling fit() again continues exactly where the
// saved run stopped; a load that fails leaves every object as it was.
//
// This header is the loop (the Trainer class) and the one to include; it brings its
// pieces: trainer_types.hpp (trainer_options, TrainerContext, fit_result, ...),
// trainer_bookkeeping.hpp (the context, learning rates, scheduler step and stop condition
// shared by every validation and epoch's end), trainer_fields.hpp (the batch fields the hooks
// read, checked before training), trainer_plan.hpp (the planned epochs, the
// scheduler's length, fit()'s start and each epoch's), trainer_validation.hpp (validations
// at epochs' ends and between batches), trainer_checkpoint.hpp (the checkpoint's section
// table and what it gathers), trainer_save_load.hpp (writing and loading a checkpoint) and
// trainer_mid_epoch.hpp (between two batches: on_trainer_step_finished, and a checkpoint
// that resumes there).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/core/hook_pack.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/scores.hpp"
#include "hookforge/torch/data/validation_sets.hpp"
#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/io/persistence.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/runners/epoch.hpp"
#include "hookforge/torch/runners/epoch_progress.hpp"
#include "hookforge/torch/runners/inference_runner.hpp"
#include "hookforge/torch/runners/memory_failure.hpp"
#include "hookforge/torch/runners/runner_concepts.hpp"
#include "hookforge/torch/runners/trainer_bookkeeping.hpp"
#include "hookforge/torch/runners/trainer_checkpoint.hpp"
#include "hookforge/torch/runners/trainer_types.hpp"
#include "hookforge/torch/runners/training_epoch_runner.hpp"

namespace hookforge {

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
class Trainer : private detail::trainer_actions {
  static constexpr bool validates = !std::is_same_v<ValRunner, no_validation>;
  // The trainer refers to the model and runners it is given (they must outlive it);
  // `no_validation` is nothing to refer to, so it is taken by value (a temporary is fine).
  using validation_arg = std::conditional_t<validates, ValRunner&, no_validation>;
  // Both runners have what the trainer calls (else the constructor reports what they lack).
  static constexpr bool runners_ok =
      training_runner<TrainRunner> && (!validates || validation_runner<ValRunner>);
  // What the validation runner runs.
  using validation_model_t =
      std::remove_reference_t<decltype(detail::validation_model(std::declval<Model&>()))>;
  // The checkpoint's sections beside the modules and optimisers (trainer_checkpoint.hpp);
  // a friend, as each entry reaches the part of the trainer it saves.
  using checkpoint_sections = detail::trainer_sections<Trainer>;
  friend checkpoint_sections;

 public:
  using hook_points = trainer_points;
  using Ctx = TrainerContext;
  static constexpr std::string_view runner_name = "Trainer";

  Trainer(Model& model, TrainRunner& train, validation_arg validation, trainer_options options,
          Hooks... hooks)
      : model_(&model),
        train_(&train),
        val_(validation_pointer(validation)),
        options_(std::move(options)),
        hooks_(std::move(hooks)...) {
    // What the runners lack, named, from the line that constructs the trainer
    // (runner_concepts.hpp).
    check::trainer_runner_complete<TrainRunner, "training runner",
                                   detail::training_runner_lacks<TrainRunner>(),
                                   training_runner<TrainRunner>>();
    if constexpr (validates)
      check::trainer_runner_complete<ValRunner, "validation runner",
                                     detail::validation_runner_lacks<ValRunner>(),
                                     validation_runner<ValRunner>>();
    if (options_.epochs < 0) throw std::invalid_argument("Trainer: epochs must be >= 0");
    if (options_.val_interval < 0)
      throw std::invalid_argument("Trainer: val_interval must be >= 0");
    if (options_.val_interval_steps < 0)
      throw std::invalid_argument("Trainer: val_interval_steps must be >= 0");
    if (!validates && options_.val_interval_steps > 0)
      throw std::invalid_argument(
          "Trainer: val_interval_steps validates between batches, and this trainer has no "
          "validation runner");
    if (options_.max_steps < -1)
      throw std::invalid_argument("Trainer: max_steps must be -1 (no limit) or >= 0, got " +
                                  std::to_string(options_.max_steps));
    if constexpr (runners_ok) {
      check_sections();
      // A callable hides its module: it cannot be put in eval() mode, and a checkpoint
      // would lose its weights, which write_checkpoint refuses. Training still works (a
      // model without weights, or weights the user saves), so this warns rather than throws.
      if (detail::checkpoint_modules(model).empty())
        warn(
            "Trainer: the model is a callable without a torch::nn::Module (a lambda?): "
            "validation cannot put it in eval() mode, and save_checkpoint refuses (a checkpoint "
            "would hold none of its weights). Give the Trainer the module itself (its forward "
            "taking a const hookforge::Entry&)");
    }
  }

  /// Throws std::invalid_argument when the scheduler ends (OneCycleLR's total_steps) before
  /// the run stops stepping it: `epochs` steps, or epochs x updates per epoch of `loader` for
  /// one stepped per update. A loader that cannot tell its length is not checked. fit() calls
  /// it before the first epoch; hookforge-run when it builds the run.
  template <class Loader>
  void check_scheduler_length(Loader& loader);

  /// Train until `options.epochs` epochs are complete (counting epochs of a loaded checkpoint),
  /// the stop condition holds, or a hook asks to stop. Loaders and criterion may be
  /// temporaries (an inline lambda): they are used during the call, never kept. Both
  /// runners get `criterion`; the overload below gives validation its own.
  template <class TrainLoader, class ValLoader, class C>
  fit_result fit(TrainLoader&& train_loader, ValLoader&& val_loader, C&& criterion) {
    return fit(train_loader, val_loader, criterion, criterion);
  }

  /// fit() with a criterion for each runner: a GAN trains with gan_criteria{d, g} and
  /// validates its generator with a criterion on the batch.
  template <class TrainLoader, class ValLoader, class TrainC, class ValC>
  fit_result fit(TrainLoader&& train_loader, ValLoader&& val_loader, TrainC&& train_criterion,
                 ValC&& val_criterion) {
    // Does each runner take the model, its loader and its criterion? One message each, from
    // the user's line; none when the constructor already reported the runner incomplete.
    using TL = std::remove_reference_t<TrainLoader>;
    using TC = std::remove_reference_t<TrainC>;
    using VL = validation_loader_t<ValLoader>;  // each set's, for validation_sets
    using VC = std::remove_reference_t<ValC>;
    constexpr bool trains =
        !training_runner<TrainRunner> || runs_epoch_of<TrainRunner, Model, TL, TC>;
    check::trainer_runner_runs_epoch<TrainRunner, "training runner", Model, TL, TC, trains>();
    constexpr bool validates_ok = [] {
      if constexpr (validates)
        return !validation_runner<ValRunner> ||
               runs_epoch_of<ValRunner, validation_model_t, VL, VC>;
      else
        return true;
    }();
    if constexpr (validates)
      check::trainer_runner_runs_epoch<ValRunner, "validation runner", validation_model_t, VL, VC,
                                       validates_ok>();
    if constexpr (runners_ok && trains && validates_ok) {
      check_batch_fields(train_loader, val_loader);
      return run_fit(train_loader, val_loader, train_criterion, val_criterion);
    } else
      return {};
  }

  /// fit() for a trainer without a validation runner.
  template <class TrainLoader, class C>
    requires(!validates)
  fit_result fit(TrainLoader&& train_loader, C&& criterion) {
    return fit(train_loader, no_validation{}, criterion, criterion);
  }

 private:
  /// The epochs; an exception out of them fires on_training_failed (ctx.error: its what())
  /// before it goes on to fit()'s caller. A hook failing there is said, not thrown.
  template <class TrainLoader, class ValLoader, class TrainC, class ValC>
  fit_result run_fit(TrainLoader& train_loader, ValLoader& val_loader, TrainC& train_criterion,
                     ValC& val_criterion);

  /// Each runner's hooks read batch fields their batch has, where the loaders' datasets and
  /// the model say their fields; std::invalid_argument naming the first that does not
  /// (trainer_fields.hpp).
  template <class TrainLoader, class ValLoader>
  void check_batch_fields(const TrainLoader& train_loader, const ValLoader& val_loader);

  /// on_training_failed, with `error`.
  void training_failed(std::string error);

  /// fit()'s epochs, from the first (or the resumed one) to the last, then on_training_finished.
  template <class TrainLoader, class ValLoader, class TrainC, class ValC>
  fit_result run_epochs(TrainLoader& train_loader, ValLoader& val_loader, TrainC& train_criterion,
                        ValC& val_criterion);

  /// Before fit()'s first epoch: the planned epochs shown to every runner, a resumed epoch's
  /// position, what needs the training runner's progress() and the scheduler's length
  /// checked, and the watch over the training steps. The training runner's epoch_progress
  /// (null for a runner without one).
  template <class TrainLoader, class ValLoader, class ValC>
  epoch_progress* start_fit(TrainLoader& train_loader, ValLoader& val_loader, ValC& val_criterion);

  /// Epoch `epoch`'s context once the criteria and loaders are told the epoch (set_epoch),
  /// with the learning rates it starts with (`resumed`: those it started with before the
  /// checkpoint, as a warm-up changes them per batch). Also the context of the steps.
  template <class TrainLoader, class ValLoader, class TrainC, class ValC>
  Ctx begin_epoch(std::int64_t epoch, TrainLoader& train_loader, ValLoader& val_loader,
                  TrainC& train_criterion, ValC& val_criterion, bool resumed);

  /// Watches the training steps where something uses them: a hook at
  /// on_trainer_step_finished, a stop request to see between batches, a scheduler stepped
  /// per update, max_steps, which ends the epoch after the batch that spends it, or
  /// val_interval_steps, which validates between batches.
  template <class ValLoader, class ValC>
  void watch_steps(epoch_progress& progress, bool per_update, ValLoader& val_loader,
                   ValC& val_criterion);

  /// The validation runner's epoch ctx.epoch, its scores into ctx; whether it asks to stop.
  template <class ValLoader, class ValC>
  bool validate(Ctx& ctx, ValLoader& val_loader, ValC& val_criterion);

  /// Whether epoch `epoch`'s end validates: every val_interval epochs, or when its last update
  /// is due by val_interval_steps; not when a validation between batches ended it (the same
  /// weights, validated).
  bool validation_due(std::int64_t epoch) const;

  /// An update since the last validation reached a multiple of val_interval_steps.
  bool step_validation_due() const;

  /// A validation between two batches (val_interval_steps): the validation runner's epoch,
  /// the model back in training mode, a metric-based scheduler's step and the stop
  /// condition on its monitored score, then on_trainer_validation_finished. Whether a stop
  /// was asked there (the stop condition, a hook, a validation runner's hook), which ends the
  /// epoch after this batch and the run with it.
  template <class ValLoader, class ValC>
  bool validate_between_batches(const epoch_progress& progress, ValLoader& val_loader,
                                ValC& val_criterion);

  /// The end of epoch ctx.epoch once it trained and validated: its bookkeeping, complete
  /// before the hooks see the epoch (and may save it), the scheduler, the stop condition,
  /// then on_trainer_epoch_finished. Whether the run stops (`runner_stop`: a runner asked).
  bool end_epoch(Ctx& ctx, bool runner_stop, bool per_update,
                 std::chrono::steady_clock::time_point started) {
    const std::int64_t epoch = ctx.epoch;
    ctx.val_scores = last_val_scores_;
    completed_epochs_ = epoch + 1;
    ctx.completed_epochs = completed_epochs_;
    ctx.global_step = global_step();
    if (!per_update) detail::step_scheduler(options_, ctx);
    ctx.next_learning_rates = detail::learning_rates(optimizers_of(*train_));
    if (!stop_at_epoch_end_.empty()) ctx.request_stop(std::exchange(stop_at_epoch_end_, {}));
    detail::check_stop(options_, ctx, runner_stop, max_steps_reached());
    ctx.epoch_seconds = detail::seconds_since(started);
    naming_memory_failure("the trainer's hooks at on_trainer_epoch_finished", epoch,
                          options_.epochs,
                          [&] { hooks_.template fire<points::on_trainer_epoch_finished>(ctx); });
    if (ctx.stop_training && ctx.stop_reason.empty())
      ctx.stop_reason = "requested by a trainer hook";
    return runner_stop || ctx.stop_training;
  }

  /// The epochs the run plans, what every hook sees as ctx.total_epochs (a progress
  /// bar's "epoch 2/7", a timer's estimate): `epochs`, or fewer where max_steps ends the run
  /// first (counted from the loader's length; a loader that cannot tell it is not counted).
  template <class Loader>
  std::int64_t planned_epochs(Loader& loader) const;

  /// The updates max_steps allows are taken.
  bool max_steps_reached() const {
    return options_.max_steps >= 0 && detail::updates_of(*train_) >= options_.max_steps;
  }

  bool schedules_per_update() const {
    return options_.scheduler && options_.scheduler->interval() == schedule_interval::step;
  }

  /// A scheduler with interval step steps once for each optimiser update since its last step.
  void step_scheduler_per_update() {
    for (const std::int64_t now = detail::updates_of(*train_); scheduled_updates_ < now;
         ++scheduled_updates_)
      options_.scheduler->step();
  }

  /// After a training batch (not the epoch's last): on_trainer_step_finished, and the end of
  /// fit() there when a stop is requested and a hook saved a checkpoint at this batch.
  void step_finished(const epoch_progress& progress, bool stop, bool agreed);

  /// Before the first epoch of fit() after loading a checkpoint taken between two batches:
  /// the training loader goes back to its position, the runner to its batch and scores.
  template <class Loader>
  void resume_epoch(Loader& loader, epoch_progress* progress);

  /// A checkpoint the ranks took together holds each one's epoch in progress ("ranks.<r>.*",
  /// and "ranks" their number): this rank's. Otherwise `state` itself (one process).
  state_map own_progress(const state_map& state, const std::string& where) const;

  /// The section "epoch_in_progress" when saving between two batches ({} otherwise).
  state_map progress_state();

  /// The training runner's epoch_progress, or null for a runner without one.
  epoch_progress* train_progress() {
    if constexpr (requires { train_->progress(); })
      return &train_->progress();
    else
      return nullptr;
  }

 public:
  /// Write everything needed to resume to `path` (atomically). Between epochs, or from a
  /// hook through TrainerContext::save_checkpoint.
  void save_checkpoint(const std::filesystem::path& path,
                       checkpoint_content content = {}) override {
    if constexpr (runners_ok) write_checkpoint(path, content);
  }

  /// The model's modules by checkpoint section (TrainerContext::model_modules).
  detail::named_modules model_modules() override { return detail::checkpoint_modules(*model_); }

  /// Restore what save_checkpoint wrote; the next fit() continues from there.
  /// All or nothing: every section is read and checked first; if one cannot be applied,
  /// what was already applied is put back, and the error names the file and the section.
  void load_checkpoint(const std::filesystem::path& path)
    requires runners_ok;

  /// The trainer's own counters, as in its checkpoint section "trainer".
  state_map state_dict() const { return {{"completed_epochs", completed_epochs_}}; }
  void load_state_dict(const state_map& state) {
    completed_epochs_ = state.at("completed_epochs").toInt();
  }

  /// Every component's binding table: the trainer's, then each runner's.
  std::string format_bindings() const {
    std::string text = hooks_.format_table() + train_->hooks().format_table();
    if constexpr (validates) text += val_->hooks().format_table();
    return text;
  }

  std::int64_t completed_epochs() const { return completed_epochs_; }
  auto& hooks() { return hooks_; }
  const trainer_options& options() const { return options_; }

 private:
  /// The checkpoint's sections do not collide: module and optimiser names are distinct
  /// from each other and from the trainer's own sections.
  void check_sections() {
    detail::check_sections(detail::checkpoint_modules(*model_), optimizers_of(*train_),
                           checkpoint_sections::reserved());
  }

  void write_checkpoint(const std::filesystem::path& path, checkpoint_content content);

  static ValRunner* validation_pointer(validation_arg validation) {
    if constexpr (validates)
      return &validation;
    else
      return nullptr;
  }

  Ctx context() {
    Ctx ctx = detail::trainer_context(options_, completed_epochs_, global_step(), last_val_scores_);
    ctx.total_epochs = planned_epochs_;
    ctx.trainer = this;
    return ctx;
  }

  std::int64_t global_step() const { return train_->global_step(); }

  template <class A, class B>
  static bool same_object(const A& a, const B& b) {
    if constexpr (std::is_object_v<A> && std::is_object_v<B>)
      return static_cast<const void*>(std::addressof(a)) ==
             static_cast<const void*>(std::addressof(b));
    else
      return false;  // functions have no set_epoch
  }

  template <class Loader>
  static void set_loader_epoch(Loader& loader, std::int64_t epoch) {
    if constexpr (requires { loader.set_epoch(epoch); }) loader.set_epoch(epoch);
  }

  Model* model_;
  TrainRunner* train_;
  ValRunner* val_;
  trainer_options options_;
  hook_pack<Trainer, Hooks...> hooks_;
  std::int64_t completed_epochs_ = 0;
  std::int64_t planned_epochs_ = options_.epochs;  ///< planned_epochs() of the fit() running
  epoch_scores last_val_scores_;
  std::vector<double> epoch_learning_rates_;  ///< as the epoch in progress started with
  std::function<state_map()> loader_state_;   ///< the training loader's, while fit() runs
  state_map saving_progress_;  ///< "epoch_in_progress" of the checkpoint being written
  state_map resume_state_;     ///< "epoch_in_progress" of the checkpoint loaded ({}: none)
  /// Each rank's epoch in progress at a stop the ranks agreed on (rank_agreement::gather).
  std::vector<state_map> rank_progress_;
  std::int64_t checkpoints_written_ = 0;
  std::int64_t scheduled_updates_ = 0;      ///< updates a per-update scheduler has stepped for
  std::int64_t last_validated_update_ = 0;  ///< the updates at the last validation
  bool ended_at_validation_ = false;        ///< a stop asked at a validation between batches ended
                                            ///< the epoch in progress
  std::string stop_at_epoch_end_;           ///< that stop's reason, for the epoch's end
  Ctx step_ctx_;  ///< the context of on_trainer_step_finished, made at the epoch's start
};

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
Trainer(Model&, TrainRunner&, ValRunner&, trainer_options, Hooks...)
    -> Trainer<Model, TrainRunner, ValRunner, Hooks...>;
template <class Model, class TrainRunner, class... Hooks>
Trainer(Model&, TrainRunner&, no_validation, trainer_options, Hooks...)
    -> Trainer<Model, TrainRunner, no_validation, Hooks...>;

}  // namespace hookforge

// The members defined out of the class, by what they do.
#include "hookforge/torch/runners/trainer_fields.hpp"
#include "hookforge/torch/runners/trainer_fit.hpp"
#include "hookforge/torch/runners/trainer_mid_epoch.hpp"
#include "hookforge/torch/runners/trainer_plan.hpp"
#include "hookforge/torch/runners/trainer_validation.hpp"
#include "hookforge/torch/runners/trainer_save_load.hpp"
