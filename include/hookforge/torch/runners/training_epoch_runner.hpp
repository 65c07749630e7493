// hookforge/torch/runners/training_epoch_runner.hpp — TrainingEpochRunner: one training epoch,
// with hook points at each stage.
//
// Per batch (SR-Forge's lifecycle):
//   on_pre_step       hooks may edit ctx.entry, or set ctx.skip_batch
//   ┌ autocast (when mixed precision), as PyTorch's `with torch.autocast(...)` block:
//   │ forward         model(entry) merged into entry, then postprocessors
//   │ on_post_forward hooks may add ctx.extra_losses (computed under autocast, like the loss)
//   └ loss            criterion terms + extra losses
//   backward          on loss / gradient_accumulation_steps (scaled when mixed precision)
//   on_post_backward  gradients visible and editable (unscaled on batches that update);
//                     hooks may set ctx.skip_optimizer_step
//   update            every gradient_accumulation_steps batches and on the last batch
//   scores            the loss terms and options.metrics into ctx.batch_scores (on the device)
//   on_post_step      ctx.optimizer_stepped says whether the update happened
// around them: train mode, on_epoch_start … on_epoch_end (ctx.scores holds the epoch's means).
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/types.h>

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
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/metrics/metric.hpp"
#include "hookforge/torch/profiling/range.hpp"
#include "hookforge/torch/runners/epoch.hpp"

namespace hookforge {

/// TrainingEpochRunner's context. Fields marked "hooks set" are requests the runner honours.
struct TrainingContext : epoch_counters {
  Entry entry;                         ///< the batch; the model's output is merged in after forward
  torch::nn::Module* model = nullptr;  ///< the model, when it is a torch module (else null)
  torch::optim::Optimizer* optimizer = nullptr;
  GradScaler* scaler = nullptr;  ///< the gradient scaler (disabled without mixed precision)
  torch::Device device = torch::kCPU;
  std::int64_t gradient_accumulation_steps = 1;
  std::int64_t optimizer_steps = 0;  ///< optimiser updates taken so far (whole run)

  // hooks set
  bool skip_batch = false;  ///< at on_pre_step: no forward, backward or update for this batch
  loss_terms extra_losses;  ///< at on_post_forward: added to the loss before backward
  bool skip_optimizer_step = false;  ///< up to on_post_backward: do not apply this batch's update
  bool stop_training = false;        ///< anywhere: the trainer stops after this epoch

  // the runner sets
  loss_terms losses;   ///< criterion terms plus extra losses (from after on_post_forward)
  torch::Tensor loss;  ///< their sum, before division by the accumulation steps
  bool optimizer_step_due = false;  ///< an update follows this batch's backward (unless vetoed)
  bool optimizer_stepped = false;   ///< an update was applied (seen at on_post_step); with a
                                    ///< scaler and a supports_amp_scaling optimizer: handed to
                                    ///< it, which skips an inf/NaN step on the device
  std::map<std::string, torch::Tensor> batch_scores;  ///< this batch's scores (detached, on device)
  score_accumulator running_scores;                   ///< the epoch's scores so far
  epoch_scores scores;                                ///< at on_epoch_end: the epoch's mean scores

  /// The optimiser's parameters (none without an optimiser).
  std::vector<torch::Tensor> parameters() const;
};

struct training_options {
  std::int64_t gradient_accumulation_steps = 1;
  bool mixed_precision = false;        ///< autocast (fp16 on CUDA, bf16 on CPU) + gradient scaler
  torch::Device device = torch::kCPU;  ///< where batches are moved before forward
  grad_scaler_options scaler = {};     ///< used when mixed_precision is on
  std::vector<postprocessor> postprocessors{};
  std::vector<metric> metrics{};  ///< computed on each trained batch, recorded beside the loss
};

namespace detail {

// The steps of a training batch that depend on none of the runner's template arguments,
// out of line so that the library compiles them once (core/build_mode.hpp).

/// The batch, on the device, in a context whose per-batch fields are reset.
HOOKFORGE_INLINE void begin_training_batch(TrainingContext& ctx, Entry&& input,
                                           torch::Device device);
/// The criterion's terms joined by the extra losses, and their total (ctx.losses, ctx.loss).
HOOKFORGE_INLINE void training_loss(TrainingContext& ctx);
/// Backward on the loss (scaled; divided by the accumulation steps); unscales the
/// gradients when an update follows (ctx.optimizer_step_due).
HOOKFORGE_INLINE void training_backward(TrainingContext& ctx, GradScaler& scaler,
                                        torch::optim::Optimizer& optimizer,
                                        std::int64_t accumulation_steps, std::int64_t pending,
                                        bool last);
/// Apply the accumulated gradients (unless a hook vetoed it) and clear them.
HOOKFORGE_INLINE void training_update(TrainingContext& ctx, GradScaler& scaler,
                                      torch::optim::Optimizer& optimizer,
                                      std::int64_t& optimizer_steps, bool unscaled);
/// The batch's loss terms and `metrics` into ctx.batch_scores, and into the epoch's running
/// scores (`runner` names the runner in errors).
HOOKFORGE_INLINE void training_scores(TrainingContext& ctx, const std::vector<metric>& metrics,
                                      std::string_view runner);
/// A training runner's gradient scaler: as in PyTorch, loss scaling is for float16 on CUDA
/// only (CPU autocast uses bfloat16, whose range needs none).
HOOKFORGE_INLINE GradScaler training_scaler(grad_scaler_options scaler, bool mixed_precision,
                                            torch::Device device);

/// One training batch from forward to the update (when one is due): the step a CUDA graph
/// records (cuda_graph_runner.hpp). Fires on_post_forward and on_post_backward of `hooks`.
template <class Pack, class Model, class C>
void forward_to_update(Pack& hooks, Model& model, C& criterion, TrainingContext& ctx,
                       const training_options& options, GradScaler& scaler,
                       torch::optim::Optimizer& optimizer, std::int64_t& optimizer_steps,
                       std::int64_t pending, bool last) {
  {
    // One autocast region for forward, the hooks that add extra losses and the loss, as
    // in PyTorch: an extra term computed on the (lower-precision) output trains as the
    // criterion's own terms do. Backward runs outside it.
    autocast_guard autocast(options.device, options.mixed_precision);
    {
      const detail::step_range phase(range_kind::phase, "forward");
      forward_into(model, ctx.entry);
      for (auto& post : options.postprocessors) post(ctx.entry);
    }
    detail::fire_in_range<points::on_post_forward>(hooks, ctx);
    const detail::step_range phase(range_kind::phase, "loss");
    ctx.losses = evaluate_criterion(criterion, ctx.entry);
    detail::training_loss(ctx);
  }
  {
    const detail::step_range phase(range_kind::phase, "backward");
    detail::training_backward(ctx, scaler, optimizer, options.gradient_accumulation_steps, pending,
                              last);
  }
  detail::fire_in_range<points::on_post_backward>(hooks, ctx);
  if (ctx.optimizer_step_due) {
    const detail::step_range phase(range_kind::phase, "optimizer step");
    detail::training_update(ctx, scaler, optimizer, optimizer_steps, /*unscaled=*/true);
  }
}

/// What TrainingEpochRunner and CudaGraphTrainingRunner share around their step: the
/// options, the gradient scaler, the update count and their checkpoint state, and the
/// context an epoch starts with. `Derived::runner_name` names the runner in errors.
template <class Derived, class... Hooks>
class training_epoch_base : public training_runner_base<Derived, Hooks...> {
  using base = training_runner_base<Derived, Hooks...>;

 public:
  training_epoch_base(torch::optim::Optimizer& optimizer, training_options options, Hooks... hooks)
      : base(optimizer, std::move(hooks)...),
        options_(std::move(options)),
        scaler_(training_scaler(options_.scaler, options_.mixed_precision, options_.device)) {
    if (options_.gradient_accumulation_steps < 1)
      throw std::invalid_argument(std::string(Derived::runner_name) +
                                  ": gradient_accumulation_steps must be >= 1, got " +
                                  std::to_string(options_.gradient_accumulation_steps));
    check_metrics(options_.metrics, Derived::runner_name);
  }

  GradScaler& scaler() { return scaler_; }
  const training_options& options() const { return options_; }
  /// Optimiser updates taken so far (whole run; skipped ones not counted): what the Trainer
  /// steps a per-update scheduler by.
  std::int64_t optimizer_steps() const { return optimizer_steps_; }

  /// Counters and scaler, for checkpoints (the optimiser is saved by the trainer).
  state_map state_dict() const {
    state_map state = base::state_dict();
    state.emplace("optimizer_steps", optimizer_steps_);
    nest_state(state, "scaler", scaler_.state_dict());
    return state;
  }
  void load_state_dict(const state_map& state) {
    base::load_state_dict(state);
    optimizer_steps_ = state.at("optimizer_steps").toInt();
    scaler_.load_state_dict(nested_state(state, "scaler"));
  }

 protected:
  /// `model` in train mode, and the context its epoch starts with.
  template <class Model>
  TrainingContext start_context(Model& model) {
    set_training_mode(model, true);
    TrainingContext ctx;
    ctx.model = module_of(model);
    ctx.optimizer = this->optimizer_;
    ctx.scaler = &scaler_;
    ctx.device = options_.device;
    ctx.gradient_accumulation_steps = options_.gradient_accumulation_steps;
    ctx.optimizer_steps = optimizer_steps_;
    return ctx;
  }

  training_options options_;
  GradScaler scaler_;
  std::int64_t optimizer_steps_ = 0;
};

}  // namespace detail

template <class... Hooks>
class TrainingEpochRunner
    : public detail::training_epoch_base<TrainingEpochRunner<Hooks...>, Hooks...> {
  using base = detail::training_epoch_base<TrainingEpochRunner, Hooks...>;

 public:
  using hook_points =
      point_list<points::on_epoch_start, points::on_pre_step, points::on_post_forward,
                 points::on_post_backward, points::on_post_step, points::on_epoch_end>;
  using batch_stages = hookforge::batch_stages<
      loaded_at<points::on_pre_step>,
      output_at<points::on_post_forward, points::on_post_backward, points::on_post_step>>;
  using Ctx = TrainingContext;
  static constexpr std::string_view runner_name = "TrainingEpochRunner";

  TrainingEpochRunner(torch::optim::Optimizer& optimizer, training_options options, Hooks... hooks)
      : base(optimizer, std::move(options), std::move(hooks)...) {}
  /// With the default options and no hooks: `TrainingEpochRunner train(optimizer);`.
  explicit TrainingEpochRunner(torch::optim::Optimizer& optimizer)
    requires(sizeof...(Hooks) == 0)
      : TrainingEpochRunner(optimizer, training_options{}) {}

  /// Train `model` for one epoch over `loader` and return the epoch's mean scores.
  /// The loader and criterion are used during the call only (temporaries are fine).
  template <class Model, class Loader, class C>
  epoch_result run_epoch(Model& model, Loader&& loader, std::int64_t epoch, C&& criterion) {
    static_assert(
        hookforge::criterion<std::remove_cvref_t<C>>,
        "TrainingEpochRunner::run_epoch: the criterion must be callable on a const Entry& and "
        "return a Tensor or loss_terms");
    Ctx ctx = this->start_context(model);
    this->start_epoch(ctx, epoch, loader);
    this->optimizer_->zero_grad();
    std::int64_t pending = 0;  // batches whose gradients wait for an update
    auto batches = this->training_batches(ctx, loader, [&](Entry&& input, bool last) {
      const detail::step_range step(range_kind::step, "train");
      {
        const detail::step_range phase(range_kind::phase, "to device");
        detail::begin_training_batch(ctx, std::move(input), this->options_.device);
      }
      detail::fire_in_range<points::on_pre_step>(this->hooks_, ctx);
      if (!ctx.skip_batch) {
        train_batch(model, criterion, ctx, ++pending, last);
        if (ctx.optimizer_step_due) pending = 0;
      } else if (last && pending > 0) {
        // the last update, for batches before the skipped one
        const detail::step_range phase(range_kind::phase, "optimizer step");
        detail::training_update(ctx, this->scaler_, *this->optimizer_, this->optimizer_steps_,
                                /*unscaled=*/false);
        pending = 0;
      }
      this->progress_.set_gradients_pending(pending > 0);
      detail::fire_in_range<points::on_post_step>(this->hooks_, ctx);
    });
    return this->finish_epoch(ctx, batches);
  }

 private:
  template <class Model, class C>
  void train_batch(Model& model, C& criterion, Ctx& ctx, std::int64_t pending, bool last) {
    detail::forward_to_update(this->hooks_, model, criterion, ctx, this->options_, this->scaler_,
                              *this->optimizer_, this->optimizer_steps_, pending, last);
    const detail::step_range phase(range_kind::phase, "scores");
    detail::training_scores(ctx, this->options_.metrics, runner_name);
  }
};

template <class... Hooks>
TrainingEpochRunner(torch::optim::Optimizer&, training_options, Hooks...)
    -> TrainingEpochRunner<Hooks...>;
TrainingEpochRunner(torch::optim::Optimizer&) -> TrainingEpochRunner<>;

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/runners/training_epoch_runner-inl.hpp"
#endif
