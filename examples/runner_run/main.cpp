// A training runner of your own, named in configs, with the built-in hooks on it: the whole
// path from a runner class to hookforge-run's command line (docs/config.md, "A runner of
// your own in a config").
//
//   hookforge_example_runner_run configs/custom_runner.yaml            # trains
//   hookforge_example_runner_run configs/custom_runner.yaml --check    # its place in the tables
//
// 1. the runner and its context (docs/runners.md, "Writing a runner");
// 2. a hook for it;
// 3. its component: reads the entry's parameters and hooks, makes the Trainer's session;
// 4. registrations: the component, the hook, and the built-in hooks for its context;
// 5. hookforge::run::main.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <hookforge/run.hpp>

namespace cfg = hookforge::config;
namespace pts = hookforge::points;

// ---- 1. The runner ------------------------------------------------------------------------

/// What its hooks see. The epoch counters, `loss`, `optimizer` and the scores are what the
/// built-in runner hooks read (ProgressBar, IterTimer, LossLogger's step rows).
struct NoisyContext : hookforge::epoch_counters {
  hookforge::Entry entry;
  double noise = 0.0;  ///< hooks set it at on_pre_step: the input's added noise
  torch::Tensor loss;
  torch::optim::Optimizer* optimizer = nullptr;
  hookforge::score_accumulator running_scores;
  hookforge::epoch_scores scores;
  bool stop_training = false;
};

/// Trains on inputs with Gaussian noise of a strength its hooks choose per batch. Written
/// with training_runner_base: the Trainer's needs, the global step in checkpoints, and
/// checkpoints in the middle of an epoch.
template <class... Hooks>
class NoisyInputRunner
    : public hookforge::training_runner_base<NoisyInputRunner<Hooks...>, Hooks...> {
  using base = hookforge::training_runner_base<NoisyInputRunner, Hooks...>;

 public:
  using hook_points = hookforge::point_list<pts::on_epoch_start, pts::on_pre_step,
                                            pts::on_post_step, pts::on_epoch_end>;
  // What its batch holds where, for the field checks before training (docs/concepts.md):
  // at on_pre_step as loaded, at on_post_step with the model's output.
  using batch_stages = hookforge::batch_stages<hookforge::loaded_at<pts::on_pre_step>,
                                               hookforge::output_at<pts::on_post_step>>;
  using Ctx = NoisyContext;
  static constexpr std::string_view runner_name = "NoisyInputRunner";

  NoisyInputRunner(torch::optim::Optimizer& optimizer, torch::Device device, Hooks... hooks)
      : base(optimizer, std::move(hooks)...), device_(device) {}

  template <class Model, class Loader, class Criterion>
  hookforge::epoch_result run_epoch(Model& model, Loader&& loader, std::int64_t epoch,
                                    Criterion&& criterion) {
    hookforge::set_training_mode(model, true);
    Ctx ctx;
    ctx.optimizer = this->optimizer_;
    this->start_epoch(ctx, epoch, loader);
    auto batches = this->training_batches(ctx, loader, [&](hookforge::Entry&& batch, bool) {
      ctx.entry = hookforge::on_device(std::move(batch), device_);
      ctx.noise = 0.0;
      this->hooks_.template fire<pts::on_pre_step>(ctx);
      const auto input = ctx.entry.at("input");
      ctx.entry.set("input", input + ctx.noise * torch::randn_like(input));
      hookforge::forward_into(model, ctx.entry);
      ctx.loss = hookforge::total_loss(hookforge::evaluate_criterion(criterion, ctx.entry));
      this->optimizer_->zero_grad();
      ctx.loss.backward();
      this->optimizer_->step();
      ctx.loss = ctx.loss.detach();
      ctx.running_scores.add({{"loss", ctx.loss}}, static_cast<std::int64_t>(input.size(0)));
      this->hooks_.template fire<pts::on_post_step>(ctx);
    });
    return this->finish_epoch(ctx, batches);
  }

 private:
  torch::Device device_;
};

// ---- 2. A hook for it ---------------------------------------------------------------------

/// Noise that fades from `start` to 0 over the run.
struct FadingNoise {
  double start = 0.1;
  explicit FadingNoise(double start_) : start(start_) {
    if (start < 0) throw std::invalid_argument("FadingNoise: start must be >= 0");
  }
  void set(NoisyContext& ctx) {
    const auto epochs = static_cast<double>(std::max<std::int64_t>(ctx.total_epochs, 1));
    ctx.noise = start * (1.0 - static_cast<double>(ctx.epoch) / epochs);
  }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(set, pts::on_pre_step));
};

// ---- 3. Its component ---------------------------------------------------------------------

using noisy_runner = NoisyInputRunner<hookforge::runtime_hooks>;  // hooks from the config

struct noisy_config {
  std::shared_ptr<torch::optim::Optimizer> optimizer;
  cfg::hook_list<noisy_runner> hooks;
};

/// What a `training_runner: {_target: NoisyInputRunner, ...}` entry builds.
class NoisyRunnerComponent final : public hookforge::run::TrainingRunner {
 public:
  explicit NoisyRunnerComponent(noisy_config c)
      : optimizer_(std::move(c.optimizer)),
        runner_(*optimizer_, hookforge::run::settings().device, hookforge::runtime_hooks{}) {
    cfg::attach_all(runner_.hooks(), c.hooks);  // checked when the config was read
  }
  std::string_view name() const override { return "NoisyInputRunner"; }
  /// The Trainer over this runner, with the config's model, loaders and loss.
  std::unique_ptr<hookforge::run::session> make_session(
      const hookforge::run::session_inputs& in) override {
    if (!in.loss) throw std::invalid_argument("Trainer: loss must be given");
    return hookforge::run::make_trainer_session(hookforge::run::single_model{in.model}, runner_, in,
                                                hookforge::run::loss_fn{in.loss});
  }

 private:
  std::shared_ptr<torch::optim::Optimizer> optimizer_;
  noisy_runner runner_;
};

// ---- 4. Registrations ---------------------------------------------------------------------

namespace hookforge::config::kinds {
using noisy_hook = hook_kind<NoisyContext>;  // hooks for NoisyInputRunner only
}

HOOKFORGE_REGISTER_AS(training_runner, "NoisyInputRunner", NoisyRunnerComponent,
                      cfg::options<noisy_config>(cfg::field("optimizer", &noisy_config::optimizer,
                                                            cfg::required),
                                                 cfg::field("hooks", &noisy_config::hooks)));
HOOKFORGE_REGISTER(noisy_hook, FadingNoise, cfg::arg<double>("start", 0.1));
HOOKFORGE_BUILTIN_HOOKS_FOR(NoisyContext);  // ProgressBar, IterTimer, LossLogger, ... on it

// ---- 5. The command line ------------------------------------------------------------------

int main(int argc, char** argv) { return hookforge::run::main(argc, argv); }
