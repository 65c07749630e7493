// hookforge/run/runners.hpp — the runner components of a config: a training runner and a
// validation runner, each with the hooks its entry lists.
//
//   training_runner:
//     _target: TrainingEpochRunner                 # or GANTrainingRunner
//     params:
//       optimizer: ${ref:optimizer}
//       gradient_accumulation_steps: 1
//       hooks: [${ref:hooks.progress}, {_target: GradientClip, params: {max_norm: 1.0}}]
//   validation_runner:
//     _target: ValidationEpochRunner
//     params:
//       metrics: [{_target: PSNR}, {_target: SSIM}]
//       hooks: [${ref:hooks.progress}]
//
// Each component holds a runner whose hooks are runtime hooks (core/runtime): the list of
// its entry, read as a config::hook_list — each item an any_hook of the runner's context,
// checked against its points when read — and attached when the component is built. The
// Trainer component (trainer.hpp) drives them; a training runner makes the Trainer over
// its concrete runner type (make_session), so the Trainer's loop, checkpoints and exact
// resume are the library's own. Batches go to settings().device; mixed_precision
// defaults to settings().mixed_precision.
//
// A training runner of yours with static hooks next to the runtime ones registers an
// `epoch_training_component<Static...>` through a factory (tests/run does).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/config/hooks.hpp"
#include "hookforge/config/register.hpp"
#include "hookforge/core/runtime/runtime_hooks.hpp"
#include "hookforge/run/distributed.hpp"
#include "hookforge/run/hooks.hpp"
#include "hookforge/run/loader.hpp"
#include "hookforge/run/loss.hpp"
#include "hookforge/run/metric.hpp"
#include "hookforge/run/model.hpp"
#include "hookforge/run/optimizer.hpp"
#include "hookforge/run/settings.hpp"
#include "hookforge/torch/runners/gan_runner.hpp"
#include "hookforge/torch/runners/inference_runner.hpp"
#include "hookforge/torch/runners/trainer.hpp"
#include "hookforge/torch/runners/training_epoch_runner.hpp"

namespace hookforge::run {

class session;
struct session_inputs;

using metric_list = std::vector<std::shared_ptr<hookforge::metric>>;

namespace detail {
inline std::vector<hookforge::metric> metrics_of(const metric_list& list) {
  std::vector<hookforge::metric> out;
  for (const auto& m : list) {
    if (!m) throw std::invalid_argument("metrics: an entry is null");
    out.push_back(*m);
  }
  return out;
}
template <class T>
std::shared_ptr<T> require(std::shared_ptr<T> p, const char* who, const char* what) {
  if (!p) throw std::invalid_argument(std::string(who) + ": " + what + " must be given");
  return p;
}
}  // namespace detail

/// What a training_runner entry builds: a component the Trainer drives.
class TrainingRunner {
 public:
  virtual ~TrainingRunner() = default;
  /// The registered name of the runner ("TrainingEpochRunner").
  virtual std::string_view name() const = 0;
  /// The Trainer over this runner (and `in.validation`), its hooks not attached yet.
  virtual std::unique_ptr<session> make_session(const session_inputs& in) = 0;
};

// --- ValidationEpochRunner ---------------------------------------------------------------------

using validation_runner_type = ValidationEpochRunner<runtime_hooks>;

struct validation_config {
  std::optional<bool> mixed_precision{};
  metric_list metrics{};
  config::hook_list<validation_runner_type> hooks{};
};

/// What a validation_runner entry builds: a ValidationEpochRunner with the entry's hooks.
class ValidationRunner {
 public:
  explicit ValidationRunner(validation_config c)
      : runner_(inference_options{.mixed_precision =
                                      c.mixed_precision.value_or(settings().mixed_precision),
                                  .device = settings().device,
                                  .metrics = detail::metrics_of(c.metrics)},
                runtime_hooks{}),
        metrics_(std::move(c.metrics)) {
    config::attach_all(runner_.hooks(), c.hooks);
    attach_data_parallel(runner_.hooks(), c.hooks, data_parallel_hooks().validation);
  }
  ValidationRunner(const ValidationRunner&) = delete;
  ValidationRunner& operator=(const ValidationRunner&) = delete;

  validation_runner_type& runner() { return runner_; }
  /// The names its metrics report (scores besides the loss and its terms).
  std::vector<std::string> metric_names() const {
    std::vector<std::string> names;
    for (const auto& m : metrics_) names.push_back(m->name);
    return names;
  }
  const metric_list& metrics() const { return metrics_; }

 private:
  validation_runner_type runner_;
  metric_list metrics_;
};

// --- TrainingEpochRunner -----------------------------------------------------------------------

using training_runner_type = TrainingEpochRunner<runtime_hooks>;

struct training_config {
  std::shared_ptr<torch::optim::Optimizer> optimizer{};
  std::int64_t gradient_accumulation_steps = 1;
  std::optional<bool> mixed_precision{};
  metric_list metrics{};
  config::hook_list<training_runner_type> hooks{};
};

/// A TrainingEpochRunner whose hooks are `Static...` (built by the component's maker)
/// and then the entry's runtime hooks. The Trainer's criterion is its `loss`.
template <class... Static>
class epoch_training_component final : public TrainingRunner {
 public:
  using runner_type = TrainingEpochRunner<Static..., runtime_hooks>;

  explicit epoch_training_component(training_config c, Static... statics)
      : optimizer_(detail::require(std::move(c.optimizer), "TrainingEpochRunner", "optimizer")),
        runner_(*optimizer_,
                training_options{
                    .gradient_accumulation_steps = c.gradient_accumulation_steps,
                    .mixed_precision = c.mixed_precision.value_or(settings().mixed_precision),
                    .device = settings().device,
                    .metrics = detail::metrics_of(c.metrics)},
                std::move(statics)..., runtime_hooks{}) {
    config::attach_all(runner_.hooks(), c.hooks);
    attach_data_parallel(runner_.hooks(), c.hooks, data_parallel_hooks().training);
  }

  std::string_view name() const override { return "TrainingEpochRunner"; }
  std::unique_ptr<session> make_session(const session_inputs& in) override;
  runner_type& runner() { return runner_; }

 private:
  std::shared_ptr<torch::optim::Optimizer> optimizer_;
  runner_type runner_;
};

// --- GANTrainingRunner -------------------------------------------------------------------------

using gan_runner_type = GANTrainingRunner<runtime_hooks>;

struct gan_config {
  std::shared_ptr<Model> discriminator{};
  std::shared_ptr<torch::optim::Optimizer> d_optimizer{};
  std::shared_ptr<torch::optim::Optimizer> g_optimizer{};
  std::shared_ptr<Loss> d_loss{};
  std::shared_ptr<Loss> g_loss{};
  std::int64_t step_ratio = 1;
  std::optional<bool> mixed_precision{};
  std::string real_field = "target";
  std::string fake_field = "output";
  std::vector<std::string> discriminator_fields{};
  bool d_real_for_g = false;
  metric_list metrics{};
  config::hook_list<gan_runner_type> hooks{};
};

/// A GANTrainingRunner: the Trainer's model is the generator, this entry's `discriminator`
/// the discriminator; the Trainer trains with gan_criteria{d_loss, g_loss} and validates
/// the generator with its `loss` (or `val_loss`).
class GANRunnerComponent final : public TrainingRunner {
 public:
  explicit GANRunnerComponent(gan_config c)
      : discriminator_(
            detail::require(std::move(c.discriminator), "GANTrainingRunner", "discriminator")),
        d_optimizer_(detail::require(std::move(c.d_optimizer), "GANTrainingRunner", "d_optimizer")),
        g_optimizer_(detail::require(std::move(c.g_optimizer), "GANTrainingRunner", "g_optimizer")),
        d_loss_(detail::require(std::move(c.d_loss), "GANTrainingRunner", "d_loss")),
        g_loss_(detail::require(std::move(c.g_loss), "GANTrainingRunner", "g_loss")),
        runner_(
            d_optimizer_.get(), g_optimizer_.get(),
            gan_options{.step_ratio = c.step_ratio,
                        .mixed_precision = c.mixed_precision.value_or(settings().mixed_precision),
                        .device = settings().device,
                        .real_field = c.real_field,
                        .fake_field = c.fake_field,
                        .discriminator_fields = c.discriminator_fields,
                        .d_real_for_g = c.d_real_for_g,
                        .metrics = detail::metrics_of(c.metrics)},
            runtime_hooks{}) {
    if (data_parallel_hooks().training)
      throw std::invalid_argument(
          "GANTrainingRunner: data-parallel runs (several ranks) are not supported yet: run it on "
          "one rank, "
          "or set distributed.data_parallel: false and list the hooks yourself");
    config::attach_all(runner_.hooks(), c.hooks);
  }

  std::string_view name() const override { return "GANTrainingRunner"; }
  std::unique_ptr<session> make_session(const session_inputs& in) override;
  gan_runner_type& runner() { return runner_; }
  const std::shared_ptr<Model>& discriminator() const { return discriminator_; }

 private:
  std::shared_ptr<Model> discriminator_;
  std::shared_ptr<torch::optim::Optimizer> d_optimizer_, g_optimizer_;
  std::shared_ptr<Loss> d_loss_, g_loss_;
  gan_runner_type runner_;
};

}  // namespace hookforge::run

HOOKFORGE_DECLARE_KIND(training_runner, hookforge::run::TrainingRunner);
HOOKFORGE_DECLARE_KIND(validation_runner, hookforge::run::ValidationRunner);
