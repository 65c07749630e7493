// hookforge/torch/runners/cuda_graph_runner.hpp — CudaGraphTrainingRunner: TrainingEpochRunner's
// step recorded once in a CUDA graph and replayed for every later batch.
//
//   hookforge::FusedAdam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
//   hookforge::CudaGraphTrainingRunner train(adam, {.device = torch::kCUDA}, {},
//                                            hookforge::GradientClip({.max_norm = 1}));
//
// A small model's GPU step is bounded by the host: each kernel is a launch of a few
// microseconds. A replayed graph launches the whole step at once. Per batch:
//   on_pre_step        eager, as in TrainingEpochRunner (hooks may edit ctx.entry)
//   ┌ recorded ──────────────────────────────────────────────────────────────────────┐
//   │ forward, on_post_forward, loss, backward, on_post_backward, the optimiser step │
//   └────────────────────────────────────────────────────────────────────────────────┘
//   scores, on_post_step eager, on the replay's outputs
// The first `warmup_steps` batches train eagerly on a side stream; the next one is recorded
// (and replayed once: a recording runs nothing); every later batch is copied into the
// recorded inputs and replayed. Hooks at the recorded points must be capture-safe
// (docs/concepts.md): checked when they are attached, a compile error for static hooks.
// A batch whose fields, shapes or dtypes differ from the recorded one (an epoch's smaller
// last batch), or whose update a hook vetoed at on_pre_step, trains eagerly. A changed
// learning rate or momentum (a scheduler) makes the next batch record the step again.
//
// Refused at construction (step_graph::check): a device that is not CUDA, gradient
// accumulation, an optimiser whose state is on the host (LibTorch's Adam: use FusedAdam),
// and loss scaling with an optimiser that cannot skip an inf step on the device. What a
// recording cannot check beforehand (a host read in the model or a hook's options, such
// as GradientClip's nonfinite checks) fails the recording with an error that says so.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include <torch/optim/optimizer.h>

#include "hookforge/core/batch_stages.hpp"
#include "hookforge/core/hook_pack.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/torch/amp/grad_scaler.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/data/model.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/metrics/metric.hpp"
#include "hookforge/torch/profiling/range.hpp"
#include "hookforge/torch/runners/epoch.hpp"
#include "hookforge/torch/runners/step_graph.hpp"
#include "hookforge/torch/runners/training_epoch_runner.hpp"

namespace hookforge {

template <class... Hooks>
class CudaGraphTrainingRunner
    : public detail::training_epoch_base<CudaGraphTrainingRunner<Hooks...>, Hooks...> {
  using base = detail::training_epoch_base<CudaGraphTrainingRunner, Hooks...>;

 public:
  using hook_points =
      point_list<points::on_epoch_start, points::on_pre_step, points::on_post_forward,
                 points::on_post_backward, points::on_post_step, points::on_epoch_end>;
  using batch_stages = hookforge::batch_stages<
      loaded_at<points::on_pre_step>,
      output_at<points::on_post_forward, points::on_post_backward, points::on_post_step>>;
  using captured_points = point_list<points::on_post_forward, points::on_post_backward>;
  using Ctx = TrainingContext;
  static constexpr std::string_view runner_name = "CudaGraphTrainingRunner";

  CudaGraphTrainingRunner(torch::optim::Optimizer& optimizer, training_options options,
                          cuda_graph_options graph, Hooks... hooks)
      : base(optimizer, std::move(options), std::move(hooks)...), graph_(graph) {
    detail::step_graph::check(optimizer, this->options_.device,
                              this->options_.gradient_accumulation_steps, this->scaler_, graph,
                              runner_name);
  }

  /// Train `model` for one epoch over `loader` and return the epoch's mean scores, as
  /// TrainingEpochRunner::run_epoch.
  template <class Model, class Loader, class C>
  epoch_result run_epoch(Model& model, Loader&& loader, std::int64_t epoch, C&& criterion) {
    static_assert(
        hookforge::criterion<std::remove_cvref_t<C>>,
        "CudaGraphTrainingRunner::run_epoch: the criterion must be callable on a const Entry& "
        "and return a Tensor or loss_terms");
    Ctx ctx = this->start_context(model);
    this->start_epoch(ctx, epoch, loader);
    this->optimizer_->zero_grad();
    auto batches = this->training_batches(ctx, loader, [&](Entry&& input, bool) {
      const detail::step_range step(range_kind::step, "train");
      {
        const detail::step_range phase(range_kind::phase, "to device");
        detail::begin_training_batch(ctx, std::move(input), this->options_.device);
      }
      detail::fire_in_range<points::on_pre_step>(this->hooks_, ctx);
      if (!ctx.skip_batch) train_batch(model, criterion, ctx);
      detail::fire_in_range<points::on_post_step>(this->hooks_, ctx);
    });
    return this->finish_epoch(ctx, batches);
  }

  /// Steps replayed from the graph, recordings made, and steps trained eagerly after the
  /// warm-up (batches of another layout, or vetoed updates).
  std::int64_t replayed_steps() const { return graph_.replayed(); }
  std::int64_t recordings() const { return graph_.recordings(); }
  std::int64_t eager_steps() const { return graph_.eager_steps(); }

 private:
  template <class Model, class C>
  void train_batch(Model& model, C& criterion, Ctx& ctx) {
    auto step = [&] {
      detail::forward_to_update(this->hooks_, model, criterion, ctx, this->options_, this->scaler_,
                                *this->optimizer_, this->optimizer_steps_, /*pending=*/1,
                                /*last=*/true);
    };
    if (graph_.warming_up()) {
      graph_.warm_up(this->options_.device, step);
    } else if (graph_.replays(ctx.entry, *this->optimizer_) && !ctx.skip_optimizer_step) {
      graph_.replay(ctx);  // the host's part of the update, as the recording did it:
      ctx.optimizer_step_due = true;
      ctx.optimizer_stepped = true;  // a skipped inf step is skipped on the device
      ctx.optimizer_steps = ++this->optimizer_steps_;
    } else if (graph_.can_record(ctx.entry) && !ctx.skip_optimizer_step) {
      graph_.record(ctx, *this->optimizer_, step, runner_name);
    } else {
      step();
      graph_.count_eager_step();
    }
    const detail::step_range phase(range_kind::phase, "scores");
    detail::training_scores(ctx, this->options_.metrics, runner_name);
  }

  detail::step_graph graph_;
};

template <class... Hooks>
CudaGraphTrainingRunner(torch::optim::Optimizer&, training_options, cuda_graph_options, Hooks...)
    -> CudaGraphTrainingRunner<Hooks...>;

}  // namespace hookforge
