// hookforge/torch/runners/trainer.hpp — the epoch loop around a training and a validation runner.
//
//   on_training_began
//   per epoch:  criterion.set_epoch(epoch)           (when the criterion has a schedule)
//               training runner epoch
//               validation runner epoch               (every val_interval epochs)
//               on_trainer_epoch_finished             (ctx.train_scores, ctx.val_scores)
//               LR scheduler step                     (metric-based ones get the monitored val score)
//               stop condition, hook requests         (ctx.stop_training)
//   on_training_finished
//
// Checkpoints (save_checkpoint / load_checkpoint) hold the model, the optimiser with
// its param-group options, the scheduler, the scaler, every counter, the RNG state and
// the state of every stateful hook of the trainer and both runners, keyed by
// component and the hook's state key. Loading one and calling fit() again continues
// exactly where the saved run stopped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <ATen/core/ivalue.h>

#include "hookforge/core/hook_pack.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/model.hpp"
#include "hookforge/torch/io/checkpoint.hpp"
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

/// What fit() returns.
struct fit_result {
  std::int64_t completed_epochs = 0;
  epoch_scores train_scores;   ///< the last epoch's
  epoch_scores val_scores;     ///< the last validation's
  std::string stop_reason;     ///< "epochs" when all planned epochs ran
};

namespace detail {

inline std::string counts_section(std::string_view component, std::string_view key) {
  return fmt::format("events.{}.{}", component, key);
}

/// Save every stateful hook of a pack, static and runtime, as "hooks.<component>.<key>"
/// sections, and every event filter's counts as "events.<component>.<key>".
template <class Pack>
void save_hook_states(Pack& pack, std::string_view component, checkpoint_writer& out) {
  pack.for_each_counted([&](std::string_view key, auto& hook) {
    out.add_state(counts_section(component, key), {{"counts", c10::IValue(hook.event_counts())}});
  });
  pack.for_each_stateful([&](std::string_view key, auto& hook) {
    using state_type = std::remove_cvref_t<decltype(hook.state_dict())>;
    static_assert(std::is_same_v<state_type, hookforge::state_map>,
                  "hookforge: a stateful hook used with the Trainer must return hookforge::state_dict "
                  "from state_dict(), so that its state can go into checkpoints");
    out.add_state(fmt::format("hooks.{}.{}", component, key), hook.state_dict());
  });
  if constexpr (requires { pack.runtime(); }) {
    for (const auto& s : pack.runtime().states()) {
      auto any = s.save(s.object);
      const auto* state = std::any_cast<hookforge::state_map>(&any);
      if (!state)
        throw std::invalid_argument(fmt::format(
            "hookforge: runtime hook '{}' on {} returns a state that is not hookforge::state_dict",
            s.key, component));
      out.add_state(fmt::format("hooks.{}.{}", component, s.key), *state);
    }
    for (const auto& c : pack.runtime().counted())
      out.add_state(counts_section(component, c.key), {{"counts", c10::IValue(c.save(c.object))}});
  }
}

template <class Pack>
void load_hook_states(Pack& pack, std::string_view component, const checkpoint_reader& in) {
  pack.for_each_counted([&](std::string_view key, auto& hook) {
    hook.set_event_counts(in.load_state(counts_section(component, key)).at("counts").toIntVector());
  });
  pack.for_each_stateful([&](std::string_view key, auto& hook) {
    hook.load_state_dict(in.load_state(fmt::format("hooks.{}.{}", component, key)));
  });
  if constexpr (requires { pack.runtime(); }) {
    for (const auto& s : pack.runtime().states())
      s.load(s.object, std::any(in.load_state(fmt::format("hooks.{}.{}", component, s.key))));
    for (const auto& c : pack.runtime().counted())
      c.load(c.object, in.load_state(counts_section(component, c.key)).at("counts").toIntVector());
  }
}

}  // namespace detail

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
class Trainer {
  static constexpr bool validates = !std::is_same_v<ValRunner, no_validation>;

 public:
  using hook_points = point_list<points::on_training_began, points::on_trainer_epoch_finished,
                                 points::on_training_finished, points::on_before_save_checkpoint,
                                 points::on_after_load_checkpoint>;
  using Ctx = TrainerContext;
  static constexpr std::string_view runner_name = "Trainer";

  Trainer(Model& model, TrainRunner& train, ValRunner& validation, trainer_options options, Hooks... hooks)
      : model_(&model), train_(&train), val_(&validation), options_(std::move(options)),
        hooks_(std::move(hooks)...) {
    if (options_.epochs < 0) throw std::invalid_argument("Trainer: epochs must be >= 0");
    if (options_.val_interval < 0) throw std::invalid_argument("Trainer: val_interval must be >= 0");
  }

  /// Train until `options.epochs` epochs are complete (counting epochs of a loaded checkpoint),
  /// the stop condition holds, or a hook asks to stop.
  template <class TrainLoader, class ValLoader, class C>
  fit_result fit(TrainLoader& train_loader, ValLoader& val_loader, C& criterion) {
    static_assert(hookforge::criterion<C>,
                  "Trainer::fit: the criterion must be callable on a const Entry& and return a Tensor "
                  "or loss_terms");
    train_->set_total_epochs(options_.epochs);
    if constexpr (validates) val_->set_total_epochs(options_.epochs);
    if (options_.print_bindings) fmt::print("{}", format_bindings());

    Ctx ctx = context();
    hooks_.template fire<points::on_training_began>(ctx);
    fit_result result;
    result.stop_reason = "epochs";
    while (completed_epochs_ < options_.epochs) {
      const std::int64_t epoch = completed_epochs_;
      update_criterion_schedule(criterion, epoch);
      ctx = context();
      ctx.epoch = epoch;
      ctx.learning_rates = learning_rates();
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
      step_scheduler(ctx);
      if (ctx.validated && options_.stop && options_.stop->should_stop(monitored(ctx.val_scores))) {
        ctx.stop_training = true;
        ctx.stop_reason = "stop condition";
      }
      if (stop && ctx.stop_reason.empty()) ctx.stop_reason = "requested by a runner hook";
      if (ctx.stop_training && ctx.stop_reason.empty()) ctx.stop_reason = "requested by a trainer hook";
      result.train_scores = ctx.train_scores;
      result.val_scores = ctx.val_scores;
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
  fit_result fit(TrainLoader& train_loader, C& criterion) {
    no_validation none;
    return fit(train_loader, none, criterion);
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
    out.add_state("training_runner", train_->state_dict());
    out.add_state("trainer", state_map{{"completed_epochs", completed_epochs_}});
    if (!last_val_scores_.empty()) {
      state_map val;
      for (const auto& [name, value] : last_val_scores_) val[name] = value;
      out.add_state("last_val_scores", val);
    }
    if (options_.scheduler) out.add_state("scheduler", options_.scheduler->state_dict());
    if (options_.stop) out.add_state("stop_condition", options_.stop->state_dict());
    detail::save_hook_states(hooks_, "trainer", out);
    detail::save_hook_states(train_->hooks(), "training_runner", out);
    if constexpr (validates) detail::save_hook_states(val_->hooks(), "validation_runner", out);
    out.add_state("extra", extra);
    out.add_rng();
    out.save(path);
  }

  /// Restore what save_checkpoint wrote; the next fit() continues from there.
  void load_checkpoint(const std::filesystem::path& path) {
    checkpoint_reader in(path);
    if (auto* module = module_of(*model_)) in.load_module("model", *module);
    in.load_optimizer("optimizer", train_->optimizer());
    train_->load_state_dict(in.load_state("training_runner"));
    completed_epochs_ = in.load_state("trainer").at("completed_epochs").toInt();
    last_val_scores_.clear();
    if (in.contains("last_val_scores"))
      for (const auto& [name, value] : in.load_state("last_val_scores")) last_val_scores_[name] = value.toDouble();
    if (options_.scheduler) options_.scheduler->load_state_dict(in.load_state("scheduler"));
    if (options_.stop) options_.stop->load_state_dict(in.load_state("stop_condition"));
    detail::load_hook_states(hooks_, "trainer", in);
    detail::load_hook_states(train_->hooks(), "training_runner", in);
    if constexpr (validates) detail::load_hook_states(val_->hooks(), "validation_runner", in);
    in.load_rng();

    state_map extra = in.load_state("extra");
    Ctx ctx = context();
    ctx.checkpoint_extra = &extra;
    hooks_.template fire<points::on_after_load_checkpoint>(ctx);
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
  Ctx context() const {
    Ctx ctx;
    ctx.epoch = completed_epochs_;
    ctx.completed_epochs = completed_epochs_;
    ctx.total_epochs = options_.epochs;
    ctx.global_step = global_step();
    ctx.val_scores = last_val_scores_;
    return ctx;
  }

  std::int64_t global_step() const { return train_->global_step(); }

  std::vector<double> learning_rates() const {
    std::vector<double> lrs;
    for (const auto& group : train_->optimizer().param_groups())
      lrs.push_back(group.has_options() ? group.options().get_lr() : 0.0);
    return lrs;
  }

  double monitored(const epoch_scores& scores) const {
    auto it = scores.find(options_.monitor);
    if (it == scores.end())
      throw std::invalid_argument(fmt::format("Trainer: monitor '{}' is not a validation score (scores: {})",
                                              options_.monitor, fmt::join(score_names(scores), ", ")));
    return it->second;
  }

  static std::vector<std::string> score_names(const epoch_scores& scores) {
    std::vector<std::string> names;
    for (const auto& [name, value] : scores) names.push_back(name);
    return names;
  }

  void step_scheduler(const Ctx& ctx) {
    if (!options_.scheduler) return;
    if (!options_.scheduler->wants_metric())
      options_.scheduler->step();
    else if (ctx.validated)
      options_.scheduler->step(monitored(ctx.val_scores));
  }

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

}  // namespace hookforge
