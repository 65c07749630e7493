// hookforge/torch/runners/inference_runner.hpp — epochs without gradients: inference, validation,
// benchmarking.
//
// All three run the model in eval mode under torch::NoGradGuard and fire
//   on_epoch_start → per batch: forward, postprocessors, [loss], [metrics] → on_post_step →
//   on_epoch_end.
// They differ in the criterion:
//   InferenceRunner         none needed; scores only when one is given
//   ValidationEpochRunner   required — without one it is a compile error (or, for a
//                           type-erased criterion that is empty, std::invalid_argument)
//   BenchmarkRunner         optional
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/core/batch_stages.hpp"
#include "hookforge/core/hook_pack.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/torch/amp/autocast.hpp"
#include "hookforge/torch/data/batches.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/model.hpp"
#include "hookforge/torch/metrics/metric.hpp"
#include "hookforge/torch/profiling/range.hpp"
#include "hookforge/torch/runners/epoch.hpp"
#include "hookforge/torch/runners/training_epoch_runner.hpp"

namespace hookforge {

/// The context of InferenceRunner, ValidationEpochRunner and BenchmarkRunner.
struct InferenceContext : epoch_counters {
  Entry entry;
  torch::nn::Module* model = nullptr;
  torch::Device device = torch::kCPU;
  loss_terms losses;  ///< empty when the runner has no criterion
  torch::Tensor loss;
  std::map<std::string, torch::Tensor> batch_scores;
  score_accumulator running_scores;
  epoch_scores scores;  ///< at on_epoch_end
  bool stop_training = false;
};

/// Pass as the criterion to run an inference epoch without a loss.
struct no_criterion {};

struct inference_options {
  bool mixed_precision = false;
  torch::Device device = torch::kCPU;
  std::vector<postprocessor> postprocessors{};
  std::vector<metric>
      metrics{};  ///< computed on each batch (with or without a criterion), beside the loss
};

namespace detail {

enum class criterion_need { none, required, optional };

// The steps of an inference batch that depend on none of the loop's template arguments,
// out of line so that the library compiles them once (core/build_mode.hpp).

/// The batch, on the device, in a context whose per-batch fields are reset.
HOOKFORGE_INLINE void begin_inference_batch(InferenceContext& ctx, Entry&& input,
                                            torch::Device device);
/// The batch's scores: the loss terms and their total when `with_loss`, then `metrics`,
/// into ctx.batch_scores and, when there are any, the epoch's running scores (`runner`
/// names the runner in errors).
HOOKFORGE_INLINE void inference_scores(InferenceContext& ctx, bool with_loss,
                                       const std::vector<metric>& metrics, std::string_view runner);

/// The loop shared by the three inference runners. `Runner` is the concrete runner
/// (for hook checks and messages); it inherits `hook_points` and `Ctx` from here.
template <class Runner, criterion_need Need, class... Hooks>
class inference_loop : public runner_base<Runner, Hooks...> {
 public:
  using hook_points =
      point_list<points::on_epoch_start, points::on_post_step, points::on_epoch_end>;
  using batch_stages = hookforge::batch_stages<output_at<points::on_post_step>>;
  using Ctx = InferenceContext;

  explicit inference_loop(inference_options options, Hooks... hooks)
      : runner_base<Runner, Hooks...>(std::move(hooks)...), options_(std::move(options)) {
    check_metrics(options_.metrics, Runner::runner_name);
  }

  /// The loader and criterion are used during the call only (temporaries are fine).
  template <class Model, class Loader, class C = no_criterion>
  epoch_result run_epoch(Model& model, Loader&& loader, std::int64_t epoch, C&& criterion = {}) {
    constexpr bool has_criterion = !std::is_same_v<std::remove_cvref_t<C>, no_criterion>;
    if constexpr (Need == criterion_need::required) {
      static_assert(
          has_criterion,
          "ValidationEpochRunner::run_epoch needs a criterion: validation reports the loss "
          "(use InferenceRunner or BenchmarkRunner to run without one)");
      // An empty std::function or a null pointer; a function itself is never empty.
      if constexpr (!std::is_function_v<std::remove_cvref_t<C>> &&
                    requires { static_cast<bool>(criterion); })
        if (!static_cast<bool>(criterion))
          throw std::invalid_argument(
              "ValidationEpochRunner::run_epoch: the criterion is empty; "
              "validation needs a criterion to report the loss");
    }
    if constexpr (has_criterion)
      static_assert(
          hookforge::criterion<std::remove_cvref_t<C>>,
          "the criterion must be callable on a const Entry& and return a Tensor or loss_terms");

    torch::NoGradGuard no_grad;
    set_training_mode(model, false);
    Ctx ctx;
    ctx.model = module_of(model);
    ctx.device = options_.device;
    this->start_epoch(ctx, epoch, loader);
    auto batches = this->batches(ctx, loader, [&](Entry&& input, bool) {
      const detail::step_range step(range_kind::step, "eval");
      {
        const detail::step_range phase(range_kind::phase, "to device");
        detail::begin_inference_batch(ctx, std::move(input), options_.device);
      }
      {
        autocast_guard autocast(options_.device, options_.mixed_precision);
        const detail::step_range phase(range_kind::phase, "forward");
        forward_into(model, ctx.entry);
        for (auto& post : options_.postprocessors) post(ctx.entry);
        if constexpr (has_criterion) ctx.losses = evaluate_criterion(criterion, ctx.entry);
      }
      {
        const detail::step_range phase(range_kind::phase, "scores");
        detail::inference_scores(ctx, has_criterion, options_.metrics, Runner::runner_name);
      }
      detail::fire_in_range<points::on_post_step>(this->hooks_, ctx);
    });
    return this->finish_epoch(ctx, batches);
  }

  const inference_options& options() const { return options_; }

 private:
  inference_options options_;
};

}  // namespace detail

template <class... Hooks>
class InferenceRunner : public detail::inference_loop<InferenceRunner<Hooks...>,
                                                      detail::criterion_need::none, Hooks...> {
 public:
  static constexpr std::string_view runner_name = "InferenceRunner";
  // Each runner has its own constructor, not the loop's inherited one, so the attach
  // checks report from the user's line that constructs it.
  explicit InferenceRunner(inference_options options, Hooks... hooks)
      : detail::inference_loop<InferenceRunner, detail::criterion_need::none, Hooks...>(
            std::move(options), std::move(hooks)...) {}
  /// With the default options and no hooks: `InferenceRunner run;`.
  InferenceRunner()
    requires(sizeof...(Hooks) == 0)
      : InferenceRunner(inference_options{}) {}
};

template <class... Hooks>
class ValidationEpochRunner
    : public detail::inference_loop<ValidationEpochRunner<Hooks...>,
                                    detail::criterion_need::required, Hooks...> {
 public:
  static constexpr std::string_view runner_name = "ValidationEpochRunner";
  explicit ValidationEpochRunner(inference_options options, Hooks... hooks)
      : detail::inference_loop<ValidationEpochRunner, detail::criterion_need::required, Hooks...>(
            std::move(options), std::move(hooks)...) {}
  /// With the default options and no hooks: `ValidationEpochRunner run;`.
  ValidationEpochRunner()
    requires(sizeof...(Hooks) == 0)
      : ValidationEpochRunner(inference_options{}) {}
};

template <class... Hooks>
class BenchmarkRunner : public detail::inference_loop<BenchmarkRunner<Hooks...>,
                                                      detail::criterion_need::optional, Hooks...> {
 public:
  static constexpr std::string_view runner_name = "BenchmarkRunner";
  explicit BenchmarkRunner(inference_options options, Hooks... hooks)
      : detail::inference_loop<BenchmarkRunner, detail::criterion_need::optional, Hooks...>(
            std::move(options), std::move(hooks)...) {}
  /// With the default options and no hooks: `BenchmarkRunner run;`.
  BenchmarkRunner()
    requires(sizeof...(Hooks) == 0)
      : BenchmarkRunner(inference_options{}) {}
};

template <class... H>
InferenceRunner(inference_options, H...) -> InferenceRunner<H...>;
InferenceRunner() -> InferenceRunner<>;
template <class... H>
ValidationEpochRunner(inference_options, H...) -> ValidationEpochRunner<H...>;
ValidationEpochRunner() -> ValidationEpochRunner<>;
template <class... H>
BenchmarkRunner(inference_options, H...) -> BenchmarkRunner<H...>;
BenchmarkRunner() -> BenchmarkRunner<>;

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/runners/inference_runner-inl.hpp"
#endif
