// hookforge/run/trainer_session.hpp — the Trainer of a config behind one interface: a
// run::session holds a hookforge::Trainer over the configured training runner's concrete type
// (TrainingEpochRunner or GANTrainingRunner, made by TrainingRunner::make_session) and the
// validation runner, fits it over the configured loaders (one, or several by name through
// hookforge::validation_sets), saves and loads its checkpoints, and scores a test loader.
// TrainerComponent (trainer.hpp) builds one from the config's Trainer entry.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hookforge/config/hooks.hpp"
#include "hookforge/core/batch_stages.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/runtime/runtime_hooks.hpp"
#include "hookforge/hooks/hook_profiler.hpp"
#include "hookforge/run/distributed.hpp"
#include "hookforge/run/loader.hpp"
#include "hookforge/run/loss.hpp"
#include "hookforge/run/model.hpp"
#include "hookforge/run/runners.hpp"
#include "hookforge/torch/data/validation_sets.hpp"
#include "hookforge/torch/runners/trainer.hpp"

namespace hookforge::run {

/// The Trainer's points and context, for the hook list of its entry (the same for every
/// hookforge::Trainer type).
struct trainer_shape {
  using hook_points = trainer_points;
  using Ctx = TrainerContext;
  static constexpr std::string_view runner_name = "Trainer";
};

using trainer_hook_list = config::hook_list<trainer_shape>;

/// What the Trainer component gives a training runner to make its session from.
struct session_inputs {
  std::shared_ptr<Model> model;
  ValidationRunner* validation = nullptr;  ///< null: no validation
  std::shared_ptr<Loader> train_loader, val_loader;
  /// Several validation loaders by name (in place of val_loader; empty: one).
  std::map<std::string, std::shared_ptr<Loader>> val_loaders;
  std::shared_ptr<Loss>
      loss;  ///< the training criterion (TrainingEpochRunner); may be null for a GAN
  std::shared_ptr<Loss> val_loss;  ///< validation's criterion (loss unless given)
  trainer_options options;
};

/// A hookforge::Trainer over concrete runner types, behind one interface.
class session {
 public:
  virtual ~session() = default;
  virtual void attach(const trainer_hook_list& hooks) = 0;
  virtual fit_result fit() = 0;
  virtual void load_checkpoint(const std::filesystem::path& path) = 0;
  virtual void save_checkpoint(const std::filesystem::path& path) = 0;
  /// Every component's binding table: the trainer's, then each runner's.
  virtual std::string format_bindings() const = 0;
  virtual std::int64_t completed_epochs() const = 0;
  /// The validation runner over `loader` with the validation criterion, on the model as it
  /// is: the test stage's scores (a session without validation is never asked).
  virtual epoch_scores test(Loader& loader) = 0;
  /// The scheduler lasts the run (Trainer::check_scheduler_length), checked as the run is built.
  virtual void check_scheduler_length() = 0;
  /// What the training (else the validation) runner's batch holds at each of its points
  /// (core/batch_stages.hpp; empty where the runner does not say).
  virtual std::span<const point_batch> batch_stages(bool training) const = 0;
  /// Time the config-loaded hooks of `component` ("trainer", "training_runner",
  /// "validation_runner": absent ones are skipped) with `timer` (HookProfiler).
  virtual void time_hooks(handler_timer& timer, std::string_view component) = 0;
};

/// The model as a session keeps it: `get()` is what the Trainer and training runner take.
struct single_model {
  std::shared_ptr<Model> model;
  Model& get() { return *model; }
};
struct gan_model_pair {
  std::shared_ptr<Model> generator, discriminator;
  gan_models<Model, Model> models{*generator, *discriminator};
  gan_models<Model, Model>& get() { return models; }
};

template <class Holder, class TrainRunner, class ValRunner, class TrainCriterion>
class trainer_session final : public session {
  static constexpr bool validates = !std::is_same_v<ValRunner, no_validation>;
  using model_type = std::remove_reference_t<decltype(std::declval<Holder&>().get())>;
  using trainer_type = hookforge::Trainer<model_type, TrainRunner, ValRunner, runtime_hooks>;
  static_assert(std::is_same_v<typename trainer_type::hook_points, trainer_shape::hook_points>,
                "hookforge::run::trainer_shape must list the Trainer's points");

 public:
  trainer_session(Holder holder, TrainRunner& train, ValRunner* validation,
                  const session_inputs& in, TrainCriterion criterion)
      : holder_(std::move(holder)),
        in_(in),
        train_criterion_(std::move(criterion)),
        val_criterion_{in.val_loss},
        train_(train),
        validation_(validation),
        trainer_(holder_.get(), train, validation_arg(validation), in.options, runtime_hooks{}) {}

  void attach(const trainer_hook_list& hooks) override {
    config::attach_all(trainer_.hooks(), hooks);
    attach_data_parallel(trainer_.hooks(), hooks, data_parallel_hooks().trainer);
  }

  fit_result fit() override {
    auto& train_loader = in_.train_loader->loader();
    if constexpr (validates) {
      if (in_.val_loaders.empty())
        return trainer_.fit(train_loader, in_.val_loader->loader(), train_criterion_,
                            val_criterion_);
      std::vector<named_loader<run_data_loader>> sets;
      for (const auto& [name, loader] : in_.val_loaders) sets.emplace_back(name, loader->loader());
      return trainer_.fit(train_loader, validation_sets(std::move(sets)), train_criterion_,
                          val_criterion_);
    } else
      return trainer_.fit(train_loader, no_validation{}, train_criterion_, train_criterion_);
  }
  void load_checkpoint(const std::filesystem::path& path) override {
    trainer_.load_checkpoint(path);
  }
  void check_scheduler_length() override {
    trainer_.check_scheduler_length(in_.train_loader->loader());
  }
  void save_checkpoint(const std::filesystem::path& path) override {
    trainer_.save_checkpoint(path);
  }
  std::string format_bindings() const override { return trainer_.format_bindings(); }
  std::int64_t completed_epochs() const override { return trainer_.completed_epochs(); }
  epoch_scores test(Loader& loader) override {
    if constexpr (validates)
      return validation_
          ->run_epoch(hookforge::detail::validation_model(holder_.get()), loader.loader(),
                      trainer_.completed_epochs(), val_criterion_)
          .scores;
    else
      throw std::logic_error("hookforge-run: a test needs the trainer's validation_runner");
  }
  std::span<const point_batch> batch_stages(bool training) const override {
    if (training) return batch_stages_of<TrainRunner>;
    if constexpr (validates) return batch_stages_of<ValRunner>;
    return {};
  }
  void time_hooks(handler_timer& timer, std::string_view component) override {
    if (component == "trainer") time_pack(timer, trainer_.hooks());
    if (component == "training_runner") time_pack(timer, train_.hooks());
    if constexpr (validates)
      if (component == "validation_runner") time_pack(timer, validation_->hooks());
  }

 private:
  template <class Pack>
  static void time_pack(handler_timer& timer, Pack& pack) {
    if constexpr (Pack::takes_runtime_hooks)
      pack.runtime().time_with(timer, points_of<typename Pack::runner_type>::names,
                               runner_name<typename Pack::runner_type>());
  }

  static auto validation_arg(ValRunner* validation)
      -> std::conditional_t<validates, ValRunner&, no_validation> {
    if constexpr (validates)
      return *validation;
    else
      return no_validation{};
  }

  Holder holder_;
  session_inputs in_;
  TrainCriterion train_criterion_;
  loss_fn val_criterion_;
  TrainRunner& train_;
  ValRunner* validation_;
  trainer_type trainer_;
};

/// The session for a training runner `train` of a concrete type: with the validation
/// runner of `in` or without one.
template <class Holder, class TrainRunner, class TrainCriterion>
std::unique_ptr<session> make_trainer_session(Holder holder, TrainRunner& train,
                                              const session_inputs& in, TrainCriterion criterion) {
  if (in.validation != nullptr)
    return std::make_unique<
        trainer_session<Holder, TrainRunner, validation_runner_type, TrainCriterion>>(
        std::move(holder), train, &in.validation->runner(), in, std::move(criterion));
  return std::make_unique<trainer_session<Holder, TrainRunner, no_validation, TrainCriterion>>(
      std::move(holder), train, nullptr, in, std::move(criterion));
}

template <class... Static>
std::unique_ptr<session> epoch_training_component<Static...>::make_session(
    const session_inputs& in) {
  if (!in.loss)
    throw std::invalid_argument(
        "Trainer: loss must be given (the criterion TrainingEpochRunner trains with)");
  return make_trainer_session(single_model{in.model}, runner_, in, loss_fn{in.loss});
}

inline std::unique_ptr<session> GANRunnerComponent::make_session(const session_inputs& in) {
  if (in.model == discriminator_)
    throw std::invalid_argument(
        "Trainer: the model (the generator) and GANTrainingRunner's discriminator are the same "
        "object");
  return make_trainer_session(gan_model_pair{in.model, discriminator_}, runner_, in,
                              gan_criteria<loss_fn, loss_fn>{loss_fn{d_loss_}, loss_fn{g_loss_}});
}

}  // namespace hookforge::run
