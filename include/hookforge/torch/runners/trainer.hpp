// hookforge/torch/runners/trainer.hpp — the epoch loop around a training and a validation runner.
//
//   on_training_began
//   per epoch:  criterion.set_epoch(epoch)           (when the criterion has a schedule)
//               training runner epoch
//               validation runner epoch               (every val_interval epochs)
//               on_trainer_epoch_finished             (ctx.train_scores, ctx.val_scores)
//               LR scheduler step                     (metric-based ones get the monitored val score)
//               stop condition, hook requests         (ctx.stop_training)
//               the epoch's record                    (fit_result::history)
//   on_training_finished
//
// Checkpoints (save_checkpoint / load_checkpoint) hold the model, the optimiser with
// its param-group options, the scheduler, the scaler, every counter, the RNG state and
// the state of every persistent hook of the trainer and both runners, saved through
// io/persistence.hpp. Loading one and calling fit() again continues exactly where the
// saved run stopped; a load that fails leaves every object as it was.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <cstdio>

#include <ATen/core/ivalue.h>

#include "hookforge/core/config.hpp"
#include "hookforge/core/hook_pack.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/model.hpp"
#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/io/persistence.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"
#include "hookforge/torch/optim/stop_condition.hpp"
#include "hookforge/torch/runners/inference_runner.hpp"
#include "hookforge/torch/runners/training_runner.hpp"

namespace hookforge {

/// The Trainer's context.
struct TrainerContext {
  std::int64_t epoch = 0;             ///< the epoch just run (at on_trainer_epoch_finished)
  std::int64_t completed_epochs = 0;  ///< epochs finished, this one included once it finished
  std::int64_t total_epochs = 0;
  std::int64_t global_step = 0;       ///< training batches processed so far
  epoch_scores train_scores;          ///< this epoch's training means
  epoch_scores val_scores;            ///< the last validation's means (empty before any)
  bool validated = false;             ///< validation ran this epoch
  std::vector<double> learning_rates; ///< per param group, as used this epoch
  bool stop_training = false;         ///< hooks set: stop after this epoch
  std::string stop_reason;            ///< why training stopped (set by the trainer or a hook)
  /// At on_before_save_checkpoint: extra entries hooks add to the checkpoint;
  /// at on_after_load_checkpoint: the entries read back.
  state_map* checkpoint_extra = nullptr;
};

/// Pass as the validation runner to train without validation.
struct no_validation {};

struct trainer_options {
  std::int64_t epochs = 1;
  std::int64_t val_interval = 1;             ///< validate every N epochs; 0 never
  lr_scheduler* scheduler = nullptr;         ///< stepped once per epoch; not owned
  stop_condition* stop = nullptr;            ///< asked after each validation; not owned
  std::string monitor = "loss";              ///< validation score for plateau schedulers and `stop`
  bool print_bindings = false;               ///< print every component's binding table at start
};

/// One epoch of a fit() call, as fit_result::history keeps it.
struct epoch_record {
  std::int64_t epoch = 0;             ///< 0-based, counting epochs of a loaded checkpoint
  epoch_scores train_scores;
  epoch_scores val_scores;            ///< this epoch's validation (empty when it did not validate)
  bool validated = false;
  std::vector<double> learning_rates; ///< per param group, as used this epoch
  double seconds = 0;                 ///< wall time of the epoch: training, validation and hooks
};

/// What fit() returns.
struct fit_result {
  std::int64_t completed_epochs = 0;
  epoch_scores train_scores;          ///< the last epoch's
  epoch_scores val_scores;            ///< the last validation's
  std::string stop_reason;            ///< "epochs" when all planned epochs ran
  std::vector<epoch_record> history;  ///< every epoch this call ran, in order
};

namespace detail {

/// A module's parameters and buffers, copied (to the CPU, to spare the device's memory),
/// and put back: the undo of loading a module.
class module_snapshot {
 public:
  explicit module_snapshot(torch::nn::Module& module);
  void restore();

 private:
  void keep(const torch::Tensor& t);
  std::vector<std::pair<torch::Tensor, torch::Tensor>> saved_;
};

// The Trainer's bookkeeping that depends on none of its template arguments, out of line
// so that the library compiles it once (core/config.hpp).

/// The context at the start of a fit() or an epoch, before the epoch's own fields.
HOOKFORGE_INLINE TrainerContext trainer_context(const trainer_options& options,
                                                std::int64_t completed_epochs,
                                                std::int64_t global_step,
                                                const epoch_scores& last_val_scores);
/// The lr of each param group (0 for a group without options).
HOOKFORGE_INLINE std::vector<double> learning_rates(const torch::optim::Optimizer& optimizer);
/// The score `options.monitor` names; std::invalid_argument listing the scores when absent.
HOOKFORGE_INLINE double monitored_score(const trainer_options& options, const epoch_scores& scores);
/// The scheduler's step for the epoch just run (metric-based ones get the monitored score).
HOOKFORGE_INLINE void step_scheduler(const trainer_options& options, const TrainerContext& ctx);
/// The stop condition, then ctx.stop_reason for a stop requested by a runner's hook
/// (`runner_stop`) or a trainer hook.
HOOKFORGE_INLINE void check_stop(const trainer_options& options, TrainerContext& ctx,
                                 bool runner_stop);
/// Epoch `epoch`'s scores and record into `result`.
HOOKFORGE_INLINE void record_epoch(fit_result& result, const TrainerContext& ctx,
                                   std::int64_t epoch,
                                   std::chrono::steady_clock::time_point started);
/// Scores as a state section, and back.
HOOKFORGE_INLINE state_map scores_state(const epoch_scores& scores);
HOOKFORGE_INLINE epoch_scores scores_of_state(const state_map& state);

}  // namespace detail

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
class Trainer {
  static constexpr bool validates = !std::is_same_v<ValRunner, no_validation>;
  // The trainer refers to the model and runners it is given (they must outlive it);
  // `no_validation` is nothing to refer to, so it is taken by value (a temporary is fine).
  using validation_arg = std::conditional_t<validates, ValRunner&, no_validation>;

 public:
  using hook_points = point_list<points::on_training_began, points::on_trainer_epoch_finished,
                                 points::on_training_finished, points::on_before_save_checkpoint,
                                 points::on_after_load_checkpoint>;
  using Ctx = TrainerContext;
  static constexpr std::string_view runner_name = "Trainer";

  Trainer(Model& model, TrainRunner& train, validation_arg validation, trainer_options options, Hooks... hooks)
      : model_(&model), train_(&train), val_(validation_pointer(validation)), options_(std::move(options)),
        hooks_(std::move(hooks)...) {
    if (options_.epochs < 0) throw std::invalid_argument("Trainer: epochs must be >= 0");
    if (options_.val_interval < 0) throw std::invalid_argument("Trainer: val_interval must be >= 0");
  }

  /// Train until `options.epochs` epochs are complete (counting epochs of a loaded checkpoint),
  /// the stop condition holds, or a hook asks to stop. Loaders and criterion may be
  /// temporaries (an inline lambda): they are used during the call, never kept.
  template <class TrainLoader, class ValLoader, class C>
  fit_result fit(TrainLoader&& train_loader, ValLoader&& val_loader, C&& criterion) {
    static_assert(hookforge::criterion<C>,
                  "Trainer::fit: the criterion must be callable on a const Entry& and return a Tensor "
                  "or loss_terms");
    train_->set_total_epochs(options_.epochs);
    if constexpr (validates) val_->set_total_epochs(options_.epochs);
    if (options_.print_bindings) std::fputs(format_bindings().c_str(), stdout);

    Ctx ctx = context();
    hooks_.template fire<points::on_training_began>(ctx);
    fit_result result;
    result.stop_reason = "epochs";
    while (completed_epochs_ < options_.epochs) {
      const auto started = std::chrono::steady_clock::now();
      const std::int64_t epoch = completed_epochs_;
      update_criterion_schedule(criterion, epoch);
      ctx = context();
      ctx.epoch = epoch;
      ctx.learning_rates = detail::learning_rates(train_->optimizer());
      auto trained = train_->run_epoch(*model_, train_loader, epoch, criterion);
      ctx.train_scores = trained.scores;
      bool stop = trained.stop_training;
      if constexpr (validates) {
        if (options_.val_interval > 0 && (epoch + 1) % options_.val_interval == 0) {
          auto validated = val_->run_epoch(*model_, val_loader, epoch, criterion);
          last_val_scores_ = validated.scores;
          ctx.validated = true;
          stop = stop || validated.stop_training;
        }
      }
      ctx.val_scores = last_val_scores_;
      completed_epochs_ = epoch + 1;
      ctx.completed_epochs = completed_epochs_;
      ctx.global_step = global_step();
      hooks_.template fire<points::on_trainer_epoch_finished>(ctx);
      detail::step_scheduler(options_, ctx);
      detail::check_stop(options_, ctx, stop);
      detail::record_epoch(result, ctx, epoch, started);
      if (stop || ctx.stop_training) {
        result.stop_reason = ctx.stop_reason;
        break;
      }
    }
    ctx.completed_epochs = completed_epochs_;
    hooks_.template fire<points::on_training_finished>(ctx);
    result.completed_epochs = completed_epochs_;
    return result;
  }

  /// fit() for a trainer without a validation runner.
  template <class TrainLoader, class C>
    requires(!validates)
  fit_result fit(TrainLoader&& train_loader, C&& criterion) {
    return fit(train_loader, no_validation{}, criterion);
  }

  /// Write everything needed to resume to `path` (atomically).
  void save_checkpoint(const std::filesystem::path& path) {
    state_map extra;
    Ctx ctx = context();
    ctx.checkpoint_extra = &extra;
    hooks_.template fire<points::on_before_save_checkpoint>(ctx);

    checkpoint_writer out;
    if (auto* module = module_of(*model_)) out.add_module("model", *module);
    out.add_optimizer("optimizer", train_->optimizer());
    out.add_state("trainer", state_dict());
    if (!last_val_scores_.empty()) out.add_state("last_val_scores", val_scores_state());
    if (options_.scheduler) out.add_state("scheduler", options_.scheduler->state_dict());
    if (options_.stop) out.add_state("stop_condition", options_.stop->state_dict());
    save_hooks(out, "trainer", hooks_);
    save_component(out, "training_runner", *train_);
    if constexpr (validates) save_component(out, "validation_runner", *val_);
    out.add_state("extra", extra);
    out.add_rng();
    out.save(path);
  }

  /// Restore what save_checkpoint wrote; the next fit() continues from there.
  /// All or nothing: every section is read and checked first; if one cannot be applied,
  /// what was already applied is put back, and the error names the file and the section.
  void load_checkpoint(const std::filesystem::path& path) {
    checkpoint_reader in(path);
    load_plan plan(in);
    // Read and check: nothing changes until plan.apply().
    plan.add_state("trainer", plan.read("trainer", {"completed_epochs"}), [this] { return state_dict(); },
                   [this](const state_map& s) { load_state_dict(s); });
    plan.add_state("last_val_scores", in.contains("last_val_scores") ? plan.read("last_val_scores") : state_map{},
                   [this] { return val_scores_state(); }, [this](const state_map& s) { load_val_scores(s); });
    if (options_.scheduler) plan.add_component_state("scheduler", *options_.scheduler);
    if (options_.stop) plan.add_component_state("stop_condition", *options_.stop);
    plan.add_hooks(hooks_, "trainer");
    plan_component(plan, "training_runner", *train_);
    if constexpr (validates) plan_component(plan, "validation_runner", *val_);
    state_map extra = plan.read("extra");
    auto require = [&](const std::string& section, std::string_view kind) {
      if (in.kind(section) != kind)
        plan.fail(section, "is not of kind '" + std::string(kind) + "'");
    };  // kind() names the file and the sections it has when one is missing
    if (module_of(*model_)) require("model", "module");
    require("optimizer", "optimizer");
    require("rng", "rng");

    // The reader checks a module and an optimizer before it copies anything. The optimizer
    // cannot be put back, so it goes last of what a valid file can fail on (a wrong type,
    // other shapes); after it, only the RNG, whose section was checked above.
    if (auto* module = module_of(*model_)) {
      auto before = std::make_shared<detail::module_snapshot>(*module);
      plan.add_step("model", [&in, module] { in.load_module("model", *module); }, [before] { before->restore(); });
    }
    plan.add_step("optimizer", [&] { in.load_optimizer("optimizer", train_->optimizer()); });
    plan.add_step("rng", [&] { in.load_rng(); });
    plan.apply();

    Ctx ctx = context();
    ctx.checkpoint_extra = &extra;
    hooks_.template fire<points::on_after_load_checkpoint>(ctx);
  }

  /// The trainer's own counters, as in its checkpoint section "trainer".
  state_map state_dict() const { return {{"completed_epochs", completed_epochs_}}; }
  void load_state_dict(const state_map& state) { completed_epochs_ = state.at("completed_epochs").toInt(); }

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
  static ValRunner* validation_pointer(validation_arg validation) {
    if constexpr (validates)
      return &validation;
    else
      return nullptr;
  }

  state_map val_scores_state() const { return detail::scores_state(last_val_scores_); }
  void load_val_scores(const state_map& state) {
    last_val_scores_ = detail::scores_of_state(state);
  }

  Ctx context() const {
    return detail::trainer_context(options_, completed_epochs_, global_step(), last_val_scores_);
  }

  std::int64_t global_step() const { return train_->global_step(); }

  Model* model_;
  TrainRunner* train_;
  ValRunner* val_;
  trainer_options options_;
  hook_pack<Trainer, Hooks...> hooks_;
  std::int64_t completed_epochs_ = 0;
  epoch_scores last_val_scores_;
};

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
Trainer(Model&, TrainRunner&, ValRunner&, trainer_options, Hooks...) -> Trainer<Model, TrainRunner, ValRunner, Hooks...>;
template <class Model, class TrainRunner, class... Hooks>
Trainer(Model&, TrainRunner&, no_validation, trainer_options, Hooks...)
    -> Trainer<Model, TrainRunner, no_validation, Hooks...>;

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/runners/trainer-inl.hpp"
#endif
