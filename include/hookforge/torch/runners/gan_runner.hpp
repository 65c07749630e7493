// hookforge/torch/runners/gan_runner.hpp — one adversarial training epoch: a discriminator (D) and
// a generator (G), each with its own optimiser and gradient scaler. See docs/gan.md.
//
// With the Trainer: the model is hookforge::gan_models{generator, discriminator}, the
// criterion hookforge::gan_criteria{d_criterion, g_criterion}; a validation runner runs the
// generator; checkpoints hold both networks ("generator", "discriminator"), both optimisers
// ("d_optimizer", "g_optimizer") and, in the runner's section, both scalers.
//
// Per batch (each phase's forward, its post-forward point and its loss share one autocast
// region when mixed precision is on, so extra losses added there train like the criterion's):
//   on_pre_step          hooks may edit ctx.entry; ctx.run_d (true) and ctx.run_g (G due by
//                        step_ratio) say which networks are updated, and hooks may clear them
//   D phase, when run_d:
//     on_pre_d_forward
//     forward            G(entry) merged into entry, its fake copied to "fake"; D on the real  ┐
//                        sample -> "d_real", D on fake.detach() -> "d_fake"                    │
//                        autocast
//     on_post_d_forward  hooks may add ctx.d_extra_losses (an R1 penalty, …)                   │
//     loss               d_criterion(entry) + extra losses                                     ┘
//     backward           (scaled), then unscaled
//     on_post_d_backward D's gradients visible and editable; hooks may clear ctx.run_d to skip the
//     step D step             ctx.d_stepped
//   G phase, when run_g (D's parameters have requires_grad off from before on_pre_g_forward
//   to after on_post_g_backward, so neither G's loss nor a hook leaks gradient into D):
//     on_pre_g_forward
//     forward            G(entry) unless the D phase already made a fake with a graph;         ┐
//                        D(fake) -> "d_fake_for_g" (no detach)                                 │
//                        autocast
//     on_post_g_forward  hooks may add ctx.g_extra_losses                                      │
//     loss               g_criterion(entry) + extra losses                                     ┘
//     backward           (scaled), then unscaled
//     on_post_g_backward G's gradients visible and editable; hooks may clear ctx.run_g to skip the
//     step G step             ctx.g_stepped
//   metrics              options.metrics on G's output ("output") and the real sample ("target")
//   on_post_step
// around them: train mode for both, on_epoch_start … on_epoch_end (ctx.scores holds the means).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/core/batch_stages.hpp"
#include "hookforge/core/hook_pack.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/torch/amp/autocast.hpp"
#include "hookforge/torch/amp/grad_scaler.hpp"
#include "hookforge/torch/data/batches.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/data/model.hpp"
#include "hookforge/torch/data/scores.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/metrics/metric.hpp"
#include "hookforge/torch/profiling/range.hpp"
#include "hookforge/torch/runners/epoch.hpp"
#include "hookforge/torch/runners/training_epoch_runner.hpp"

namespace hookforge {

struct gan_options {
  /// D is updated on every batch, G on every step_ratio-th batch of the run: G is due
  /// when (global_step + 1) % step_ratio == 0 (1: every batch; 2: batches 1, 3, 5, … 0-based).
  std::int64_t step_ratio = 1;
  bool mixed_precision = false;        ///< autocast (fp16 on CUDA, bf16 on CPU) + gradient scalers
  torch::Device device = torch::kCPU;  ///< where batches are moved before forward
  grad_scaler_options d_scaler = {};   ///< D's scaler (enabled only with mixed precision on CUDA)
  grad_scaler_options g_scaler = {};   ///< G's scaler (same rule)
  std::string real_field = "target";   ///< the batch field holding the real sample
  std::string fake_field = "output";   ///< the generator's output field holding the fake sample
  /// Batch fields also given to the discriminator, next to "input" (conditional GANs).
  std::vector<std::string> discriminator_fields = {};
  /// In the G phase, also score the real sample with the (updated) D, detached, as
  /// "d_real_for_g" (relativistic losses such as ESRGAN's).
  bool d_real_for_g = false;
  /// Computed on each batch where G ran (in either phase), on the batch with "output" the
  /// generator's output (fake_field) and "target" the real sample (real_field).
  std::vector<metric> metrics{};
};

/// The Trainer's model for a GAN: the two networks, by reference (they must outlive it).
///   hookforge::gan_models models{generator, discriminator};
/// A validation or inference runner driven by the Trainer runs the generator
/// (validation_model()); a trainer checkpoint saves each network that is a torch module
/// under its own section, "generator" and "discriminator" (checkpoint_modules()).
template <class Generator, class Discriminator>
struct gan_models {
  Generator& generator;
  Discriminator& discriminator;

  Generator& validation_model() const { return generator; }
  std::vector<std::pair<std::string, torch::nn::Module*>> checkpoint_modules() const {
    std::vector<std::pair<std::string, torch::nn::Module*>> modules;
    if (auto* g = module_of(generator)) modules.emplace_back("generator", g);
    if (auto* d = module_of(discriminator)) modules.emplace_back("discriminator", d);
    return modules;
  }
};
template <class Generator, class Discriminator>
gan_models(Generator&, Discriminator&) -> gan_models<Generator, Discriminator>;

/// The Trainer's criterion for a GAN: D's and G's criteria (copies; a module holder or a
/// std::ref shares its object). set_epoch reaches each that has one (loss schedules).
///   trainer.fit(loader, val_loader, hookforge::gan_criteria{d_criterion, g_criterion},
///   val_criterion);
template <class DCriterion, class GCriterion>
struct gan_criteria {
  DCriterion d;
  GCriterion g;

  void set_epoch(std::int64_t epoch) {
    update_criterion_schedule(d, epoch);
    update_criterion_schedule(g, epoch);
  }
};
template <class DCriterion, class GCriterion>
gan_criteria(DCriterion, GCriterion) -> gan_criteria<DCriterion, GCriterion>;

namespace detail {
template <class T>
inline constexpr bool is_gan_criteria = false;
template <class D, class G>
inline constexpr bool is_gan_criteria<gan_criteria<D, G>> = true;
}  // namespace detail

/// Which network the batch is working on; set by the runner.
enum class gan_phase { none, discriminator, generator };

/// Epoch means of the D and G scores, each averaged over the samples of the batches where
/// that phase ran (G runs on fewer batches than D when step_ratio > 1).
class gan_score_accumulator {
 public:
  score_accumulator d;        ///< "d_loss" (the total) and "d.<term>"
  score_accumulator g;        ///< "g_loss" (the total) and "g.<term>"
  score_accumulator metrics;  ///< gan_options::metrics, over the batches where G ran

  /// Both accumulators' means, in one map (their names do not overlap).
  epoch_scores means() const;
  void reset();
};

/// GANTrainingRunner's context. Fields marked "hooks set" are requests the runner honours.
struct GANContext : epoch_counters {
  Entry entry;  ///< the batch; G's output, "fake", "d_real", "d_fake", "d_fake_for_g" are added
  torch::nn::Module* generator = nullptr;  ///< when the generator is a torch module (else null)
  torch::nn::Module* discriminator =
      nullptr;  ///< when the discriminator is a torch module (else null)
  torch::optim::Optimizer* d_optimizer = nullptr;
  torch::optim::Optimizer* g_optimizer = nullptr;
  GradScaler* d_scaler = nullptr;  ///< disabled without mixed precision on CUDA
  GradScaler* g_scaler = nullptr;
  torch::Device device = torch::kCPU;
  std::int64_t step_ratio = 1;
  std::string real_field =
      "target";  ///< gan_options::real_field: the batch field holding the real sample
  /// D's score ("output") on `sample`, called as the runner calls it (an Entry with "input" =
  /// sample plus the batch's discriminator_fields), for hooks that run D themselves, e.g.
  /// R1GradientPenalty on a real sample that requires grad. Valid during run_epoch.
  std::function<torch::Tensor(const torch::Tensor& sample)> discriminate;
  std::int64_t d_steps = 0;  ///< D updates taken so far (whole run)
  std::int64_t g_steps = 0;  ///< G updates taken so far (whole run)
  gan_phase phase = gan_phase::none;

  // hooks set
  bool run_d = true;   ///< at on_pre_step: run the D phase; up to on_post_d_backward: take D's step
  bool run_g = false;  ///< at on_pre_step (preset from step_ratio): run the G phase; up to
                       ///< on_post_g_backward: take G's step
  loss_terms d_extra_losses;   ///< at on_post_d_forward: added to the D loss
  loss_terms g_extra_losses;   ///< at on_post_g_forward: added to the G loss
  bool stop_training = false;  ///< anywhere: the trainer stops after this epoch

  // the runner sets
  loss_terms d_losses;   ///< D criterion terms plus extra losses
  loss_terms g_losses;   ///< G criterion terms plus extra losses
  torch::Tensor d_loss;  ///< their sums (undefined when the phase did not run)
  torch::Tensor g_loss;
  bool d_stepped = false;  ///< D's optimiser stepped on this batch (seen from the D step on)
  bool g_stepped = false;  ///< G's optimiser stepped on this batch
  std::map<std::string, torch::Tensor> batch_scores;  ///< this batch's scores (detached, on device)
  gan_score_accumulator running_scores;               ///< the epoch's scores so far
  epoch_scores scores;                                ///< at on_epoch_end: the epoch's mean scores

  std::vector<torch::Tensor> d_parameters() const;
  std::vector<torch::Tensor> g_parameters() const;
  /// The parameters of the network in the current phase (D's in the D phase, G's in the G
  /// phase), so hooks written for one network (gradient clipping, norms) work on either;
  /// outside a phase, D's then G's.
  std::vector<torch::Tensor> parameters() const;
};

namespace detail {

/// Turns requires_grad off for `params` for a scope, then restores each one's flag.
class requires_grad_off {
 public:
  explicit requires_grad_off(std::vector<torch::Tensor> params);
  ~requires_grad_off();
  requires_grad_off(const requires_grad_off&) = delete;
  requires_grad_off& operator=(const requires_grad_off&) = delete;

 private:
  std::vector<std::pair<torch::Tensor, bool>> saved_;
};

/// Both optimisers, checked: std::invalid_argument naming each one that is null.
HOOKFORGE_INLINE std::pair<torch::optim::Optimizer*, torch::optim::Optimizer*>
require_gan_optimizers(torch::optim::Optimizer* d_optimizer, torch::optim::Optimizer* g_optimizer);

// The steps of a GAN batch that depend on none of the runner's template arguments, out of
// line so that the library compiles them once (core/build_mode.hpp).

/// The batch (index `index` of the epoch, on the device) in a context whose per-batch
/// fields are reset; G is due when (global_step + 1) % step_ratio == 0.
HOOKFORGE_INLINE void begin_gan_batch(GANContext& ctx, std::int64_t index, Entry&& input,
                                      std::int64_t global_step, const gan_options& options);
/// Backward on one network's loss (scaled), its gradients cleared first and unscaled after,
/// so that hooks see and edit true gradients.
HOOKFORGE_INLINE void gan_backward(const torch::Tensor& loss, GradScaler& scaler,
                                   torch::optim::Optimizer& optimizer);
/// One network's step unless `take` is false (a hook vetoed it), then the scaler's update,
/// which also closes its iteration. Returns whether the optimiser stepped (counted in `steps`).
HOOKFORGE_INLINE bool gan_update(bool take, GradScaler& scaler, torch::optim::Optimizer& optimizer,
                                 std::int64_t& steps);
/// One network's scores: "<network>_loss" for the total and "<network>.<term>" for every
/// other term, detached, into ctx.batch_scores and `running`; no host sync. As in the other
/// runners, "loss" always names the total: a tensor criterion's term (named "loss") has no
/// score of its own, so one value never appears under two names.
HOOKFORGE_INLINE void record_gan_scores(GANContext& ctx, const loss_terms& losses,
                                        const torch::Tensor& total, const std::string& network,
                                        score_accumulator& running);
/// options.metrics on G's output against the real sample, seen under "output" and "target"
/// (`runner` names the runner in errors).
HOOKFORGE_INLINE void record_gan_metrics(GANContext& ctx, const gan_options& options,
                                         std::string_view runner);

}  // namespace detail

template <class... Hooks>
class GANTrainingRunner {
 public:
  using hook_points =
      point_list<points::on_epoch_start, points::on_pre_step, points::on_pre_d_forward,
                 points::on_post_d_forward, points::on_post_d_backward, points::on_pre_g_forward,
                 points::on_post_g_forward, points::on_post_g_backward, points::on_post_step,
                 points::on_epoch_end>;
  // Before a phase's forward the batch is as loaded (the D phase may have run G already, but
  // a step need not run it); each phase's forward adds what its losses read.
  using batch_stages = hookforge::batch_stages<
      loaded_at<points::on_pre_step, points::on_pre_d_forward, points::on_pre_g_forward>,
      adds_at<points::on_post_d_forward, "fake", "d_real", "d_fake">,
      adds_at<points::on_post_d_backward, "fake", "d_real", "d_fake">,
      adds_at<points::on_post_g_forward, "fake", "d_fake_for_g">,
      adds_at<points::on_post_g_backward, "fake", "d_fake_for_g">, output_at<points::on_post_step>>;
  using Ctx = GANContext;
  static constexpr std::string_view runner_name = "GANTrainingRunner";

  GANTrainingRunner(torch::optim::Optimizer& d_optimizer, torch::optim::Optimizer& g_optimizer,
                    gan_options options, Hooks... hooks)
      : GANTrainingRunner(detail::require_gan_optimizers(&d_optimizer, &g_optimizer),
                          std::move(options), std::move(hooks)...) {}

  /// For optimisers built from a config: throws std::invalid_argument naming the one that is null.
  GANTrainingRunner(torch::optim::Optimizer* d_optimizer, torch::optim::Optimizer* g_optimizer,
                    gan_options options, Hooks... hooks)
      : GANTrainingRunner(detail::require_gan_optimizers(d_optimizer, g_optimizer),
                          std::move(options), std::move(hooks)...) {}

  /// Train both networks for one epoch over `loader`; the loader and criteria are used
  /// during the call, never stored (temporaries are fine).
  template <entry_model Generator, entry_model Discriminator, class Loader, criterion DC,
            criterion GC>
  epoch_result run_epoch(Generator& generator, Discriminator& discriminator, Loader&& loader,
                         std::int64_t epoch, DC&& d_criterion, GC&& g_criterion) {
    set_training_mode(generator, true);
    set_training_mode(discriminator, true);
    Ctx ctx;
    static_cast<epoch_counters&>(ctx) = epoch_counters::starting(epoch, total_epochs_, loader);
    ctx.generator = module_of(generator);
    ctx.discriminator = module_of(discriminator);
    ctx.d_optimizer = d_optimizer_;
    ctx.g_optimizer = g_optimizer_;
    ctx.d_scaler = &d_scaler_;
    ctx.g_scaler = &g_scaler_;
    ctx.device = options_.device;
    ctx.step_ratio = options_.step_ratio;
    ctx.real_field = options_.real_field;
    ctx.discriminate = [this, &discriminator, &ctx](const torch::Tensor& sample) {
      return discriminate(discriminator, ctx, sample);
    };
    ctx.d_steps = d_steps_;
    ctx.g_steps = g_steps_;

    hooks_.template fire<points::on_epoch_start>(ctx);
    d_optimizer_->zero_grad();
    g_optimizer_->zero_grad();
    std::int64_t batch = 0;
    for_each_batch(loader, [&](Entry&& input, bool) {
      const detail::step_range step(range_kind::step, "train");
      detail::begin_gan_batch(ctx, batch++, std::move(input), global_step_, options_);
      detail::fire_in_range<points::on_pre_step>(hooks_, ctx);
      bool fake_has_graph = false;  // the entry's "fake" can carry G's gradient
      const bool generated = ctx.run_d || ctx.run_g;
      if (ctx.run_d) {
        const detail::step_range phase(range_kind::phase, "discriminator");
        discriminator_phase(generator, discriminator, d_criterion, ctx, fake_has_graph);
      }
      if (ctx.run_g) {
        const detail::step_range phase(range_kind::phase, "generator");
        generator_phase(generator, discriminator, g_criterion, ctx, fake_has_graph);
      }
      if (generated) detail::record_gan_metrics(ctx, options_, runner_name);
      ctx.phase = gan_phase::none;
      detail::fire_in_range<points::on_post_step>(hooks_, ctx);
      ++global_step_;
      return true;
    });
    return detail::finish_epoch(hooks_, ctx, batch);
  }

  /// The same, in the Trainer's shape: run_epoch(model, loader, epoch, criterion) with the
  /// model a gan_models{generator, discriminator} and the criterion a gan_criteria{d, g}.
  template <class Generator, class Discriminator, class Loader, class Criteria>
    requires detail::is_gan_criteria<std::remove_cvref_t<Criteria>>
  epoch_result run_epoch(const gan_models<Generator, Discriminator>& models, Loader&& loader,
                         std::int64_t epoch, Criteria&& criteria) {
    return run_epoch(models.generator, models.discriminator, loader, epoch, criteria.d, criteria.g);
  }

  /// The planned number of epochs, shown to hooks as ctx.total_epochs.
  void set_total_epochs(std::int64_t epochs) { total_epochs_ = epochs; }

  auto& hooks() { return hooks_; }
  const auto& hooks() const { return hooks_; }
  torch::optim::Optimizer& d_optimizer() { return *d_optimizer_; }
  torch::optim::Optimizer& g_optimizer() { return *g_optimizer_; }
  /// For the Trainer: both optimisers, D's first, as their checkpoint sections (and the
  /// order of TrainerContext::learning_rates: D's groups, then G's).
  std::vector<named_optimizer> named_optimizers() {
    return {{"d_optimizer", d_optimizer_}, {"g_optimizer", g_optimizer_}};
  }
  GradScaler& d_scaler() { return d_scaler_; }
  GradScaler& g_scaler() { return g_scaler_; }
  const gan_options& options() const { return options_; }
  std::int64_t global_step() const { return global_step_; }
  std::int64_t d_steps() const { return d_steps_; }
  std::int64_t g_steps() const { return g_steps_; }

  /// Counters and both scalers, for checkpoints (the optimisers are saved by their owner).
  hookforge::state_map state_dict() const {
    hookforge::state_map state{
        {"global_step", global_step_}, {"d_steps", d_steps_}, {"g_steps", g_steps_}};
    nest_state(state, "d_scaler", d_scaler_.state_dict());
    nest_state(state, "g_scaler", g_scaler_.state_dict());
    return state;
  }
  void load_state_dict(const hookforge::state_map& state) {
    global_step_ = state.at("global_step").toInt();
    d_steps_ = state.at("d_steps").toInt();
    g_steps_ = state.at("g_steps").toInt();
    d_scaler_.load_state_dict(nested_state(state, "d_scaler"));
    g_scaler_.load_state_dict(nested_state(state, "g_scaler"));
  }

 private:
  GANTrainingRunner(std::pair<torch::optim::Optimizer*, torch::optim::Optimizer*> optimizers,
                    gan_options options, Hooks... hooks)
      : d_optimizer_(optimizers.first),
        g_optimizer_(optimizers.second),
        options_(std::move(options)),
        // As TrainingEpochRunner: loss scaling is for float16 on CUDA only.
        d_scaler_(
            detail::training_scaler(options_.d_scaler, options_.mixed_precision, options_.device)),
        g_scaler_(
            detail::training_scaler(options_.g_scaler, options_.mixed_precision, options_.device)),
        hooks_(std::move(hooks)...) {
    if (options_.step_ratio < 1)
      throw std::invalid_argument("GANTrainingRunner: step_ratio must be >= 1, got " +
                                  std::to_string(options_.step_ratio));
    check_metrics(options_.metrics, runner_name, {"d_loss", "g_loss"}, {"d.", "g."});
  }

  /// G(entry) merged into the entry; its fake sample copied to "fake" (in the caller's autocast
  /// region).
  template <class Generator>
  void generate(Generator& generator, Ctx& ctx, bool with_graph) {
    std::optional<torch::NoGradGuard> no_grad;
    if (!with_graph) no_grad.emplace();
    forward_into(generator, ctx.entry);
    if (options_.fake_field != "fake") ctx.entry.set("fake", ctx.entry.at(options_.fake_field));
  }

  /// D's "output" on an Entry whose "input" is `sample` (plus the discriminator_fields).
  template <class Discriminator>
  torch::Tensor discriminate(Discriminator& discriminator, const Ctx& ctx,
                             const torch::Tensor& sample) {
    Entry in{{"input", sample}};
    for (const auto& field : options_.discriminator_fields) in.set(field, ctx.entry.at(field));
    return call_model(discriminator, in).at("output");
  }

  template <class Generator, class Discriminator, class C>
  void discriminator_phase(Generator& generator, Discriminator& discriminator, C& criterion,
                           Ctx& ctx, bool& fake_has_graph) {
    ctx.phase = gan_phase::discriminator;
    detail::fire_in_range<points::on_pre_d_forward>(hooks_, ctx);
    {
      // Forward, the hooks that add extra losses and the loss in one autocast region.
      autocast_guard autocast(options_.device, options_.mixed_precision);
      // The fake keeps G's graph only when the G phase will reuse it.
      fake_has_graph = ctx.run_g;
      generate(generator, ctx, fake_has_graph);
      ctx.entry.set("d_real", discriminate(discriminator, ctx, ctx.entry.at(options_.real_field)));
      ctx.entry.set("d_fake", discriminate(discriminator, ctx, ctx.entry.at("fake").detach()));
      detail::fire_in_range<points::on_post_d_forward>(hooks_, ctx);
      ctx.d_losses = evaluate_criterion(criterion, ctx.entry);
      detail::add_extra_losses(ctx.d_losses, ctx.d_extra_losses, "GANTrainingRunner: D ");
      ctx.d_loss = total_loss(ctx.d_losses);
    }

    detail::gan_backward(ctx.d_loss, d_scaler_, *d_optimizer_);
    // The graphs through D are spent; the G criterion may still read the scores as constants.
    ctx.entry.set("d_real", ctx.entry.at("d_real").detach());
    ctx.entry.set("d_fake", ctx.entry.at("d_fake").detach());
    detail::fire_in_range<points::on_post_d_backward>(hooks_, ctx);
    ctx.d_stepped = detail::gan_update(ctx.run_d, d_scaler_, *d_optimizer_, d_steps_);
    if (ctx.d_stepped) ctx.d_steps = d_steps_;
    detail::record_gan_scores(ctx, ctx.d_losses, ctx.d_loss, "d", ctx.running_scores.d);
  }

  template <class Generator, class Discriminator, class C>
  void generator_phase(Generator& generator, Discriminator& discriminator, C& criterion, Ctx& ctx,
                       bool fake_has_graph) {
    ctx.phase = gan_phase::generator;
    {
      // D is only a fixed judge here: its parameters collect no gradient from G's loss, nor
      // from a hook of the phase that runs D (on_pre_g_forward to on_post_g_backward).
      detail::requires_grad_off frozen(optimizer_parameters(*d_optimizer_));
      detail::fire_in_range<points::on_pre_g_forward>(hooks_, ctx);
      {
        autocast_guard autocast(options_.device, options_.mixed_precision);
        if (!fake_has_graph) generate(generator, ctx, /*with_graph=*/true);
        ctx.entry.set("d_fake_for_g", discriminate(discriminator, ctx, ctx.entry.at("fake")));
        if (options_.d_real_for_g) {
          torch::NoGradGuard no_grad;
          ctx.entry.set(
              "d_real_for_g",
              discriminate(discriminator, ctx, ctx.entry.at(options_.real_field)).detach());
        }
        detail::fire_in_range<points::on_post_g_forward>(hooks_, ctx);
        ctx.g_losses = evaluate_criterion(criterion, ctx.entry);
        detail::add_extra_losses(ctx.g_losses, ctx.g_extra_losses, "GANTrainingRunner: G ");
        ctx.g_loss = total_loss(ctx.g_losses);
      }

      detail::gan_backward(ctx.g_loss, g_scaler_, *g_optimizer_);
      detail::fire_in_range<points::on_post_g_backward>(hooks_, ctx);
    }
    ctx.g_stepped = detail::gan_update(ctx.run_g, g_scaler_, *g_optimizer_, g_steps_);
    if (ctx.g_stepped) ctx.g_steps = g_steps_;
    detail::record_gan_scores(ctx, ctx.g_losses, ctx.g_loss, "g", ctx.running_scores.g);
  }

  torch::optim::Optimizer* d_optimizer_;
  torch::optim::Optimizer* g_optimizer_;
  gan_options options_;
  GradScaler d_scaler_;
  GradScaler g_scaler_;
  hook_pack<GANTrainingRunner, Hooks...> hooks_;
  std::int64_t total_epochs_ = 0;
  std::int64_t global_step_ = 0;
  std::int64_t d_steps_ = 0;
  std::int64_t g_steps_ = 0;
};

template <class... Hooks>
GANTrainingRunner(torch::optim::Optimizer&, torch::optim::Optimizer&, gan_options, Hooks...)
    -> GANTrainingRunner<Hooks...>;
template <class... Hooks>
GANTrainingRunner(torch::optim::Optimizer*, torch::optim::Optimizer*, gan_options, Hooks...)
    -> GANTrainingRunner<Hooks...>;

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/runners/gan_runner-inl.hpp"
#endif
