// hookforge/torch/runners/step_graph.hpp — one training step recorded in a CUDA graph and
// replayed: the machinery of CudaGraphTrainingRunner (cuda_graph_runner.hpp).
//
// A CUDA graph records the kernels a piece of host code launches, once, and replays them
// with one launch; the host code does not run again. So everything the replays need is
// fixed at the recording: the addresses of the tensors read and written (the batch is
// copied into the recorded input tensors, the outputs are overwritten in place) and every
// value the host passed to a kernel (the learning rate, the momentum). step_graph keeps
// those and says when a batch or the optimiser no longer matches them:
//   - a batch with other fields, shapes or dtypes than the recorded one (an epoch's
//     smaller last batch) is for an eager step;
//   - an optimiser whose hyper-parameters changed (a scheduler) is for a new recording.
// Against a LibTorch without CUDA (HOOKFORGE_HAS_CUDA, torch/compat.hpp) there is nothing
// to record with: check() refuses, and the rest is never reached.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>

#include "hookforge/torch/amp/grad_scaler.hpp"
#include "hookforge/torch/amp/supports_amp_scaling.hpp"
#include "hookforge/torch/compat.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/optim/fused_adam.hpp"
#include "hookforge/torch/runners/training_epoch_runner.hpp"

#if HOOKFORGE_HAS_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/core/Event.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace hookforge {

/// CudaGraphTrainingRunner's own options.
struct cuda_graph_options {
  /// Eager steps on a side stream before the step is recorded: they make what the first
  /// steps create lazily (the optimiser's state, cuDNN's algorithm choice, the gradient
  /// scaler's scale) exist before the recording fixes the addresses. PyTorch's
  /// documentation warms up with 3.
  std::int64_t warmup_steps = 3;
};

namespace detail {

/// The optimiser's hyper-parameters that a recorded step holds as constants: lr, and the
/// momentum or betas a schedule may move (OneCycleLR). Empty for an unknown optimiser.
inline std::vector<double> recorded_settings(const torch::optim::Optimizer& optimizer) {
  std::vector<double> settings;
  for (const auto& group : optimizer.param_groups()) {
    const auto& options = group.options();
    settings.push_back(options.get_lr());
    if (const auto* sgd = dynamic_cast<const torch::optim::SGDOptions*>(&options)) {
      settings.push_back(sgd->momentum());
    } else if (const auto* adam = dynamic_cast<const torch::optim::AdamOptions*>(&options)) {
      settings.push_back(std::get<0>(adam->betas()));
      settings.push_back(std::get<1>(adam->betas()));
    } else if (const auto* adamw = dynamic_cast<const torch::optim::AdamWOptions*>(&options)) {
      settings.push_back(std::get<0>(adamw->betas()));
      settings.push_back(std::get<1>(adamw->betas()));
    }
  }
  return settings;
}

/// Whether `optimizer`'s step can be recorded: its state lives on the device, so a replay
/// updates it as an eager step would. LibTorch's Adam and AdamW count their steps on the
/// host (the bias correction would stay the first step's); hookforge's FusedAdam and
/// FusedAdamW count them on the device; SGD has no count.
inline bool recordable_optimizer(const torch::optim::Optimizer& optimizer) {
  return dynamic_cast<const FusedAdam*>(&optimizer) ||
         dynamic_cast<const FusedAdamW*>(&optimizer) ||
         dynamic_cast<const torch::optim::SGD*>(&optimizer);
}

class step_graph {
 public:
  /// The refusals, at the runner's construction: a LibTorch without CUDA, a device that is
  /// not CUDA, gradient accumulation (the step would differ from batch to batch), an
  /// optimiser whose state is on the host, and loss scaling with an optimiser that cannot
  /// skip an inf step on the device (GradScaler would read the inf check on the host).
  static void check(const torch::optim::Optimizer& optimizer, torch::Device device,
                    std::int64_t accumulation_steps, const GradScaler& scaler,
                    const cuda_graph_options& options, std::string_view runner) {
    if (!HOOKFORGE_HAS_CUDA)
      throw std::invalid_argument(fmt::format(
          "{}: this LibTorch was built without CUDA, and a CUDA graph needs it; train with "
          "TrainingEpochRunner",
          runner));
    if (!device.is_cuda())
      throw std::invalid_argument(fmt::format(
          "{}: the device is {}, and a CUDA graph records the step on a CUDA device; set "
          "training_options::device to cuda, or train with TrainingEpochRunner",
          runner, device.str()));
    if (accumulation_steps != 1)
      throw std::invalid_argument(fmt::format(
          "{}: gradient_accumulation_steps is {}, and a recorded step updates at every batch; "
          "use 1, or train with TrainingEpochRunner",
          runner, accumulation_steps));
    if (!recordable_optimizer(optimizer))
      throw std::invalid_argument(fmt::format(
          "{}: the optimiser keeps its state on the host (LibTorch's Adam counts its steps "
          "there), so a replayed step would repeat the recorded one's; use hookforge::FusedAdam, "
          "FusedAdamW or torch::optim::SGD",
          runner));
    if (scaler.is_enabled() && !dynamic_cast<const supports_amp_scaling*>(&optimizer))
      throw std::invalid_argument(fmt::format(
          "{}: with loss scaling (float16 on CUDA), the GradScaler reads its inf check on the "
          "host unless the optimiser skips an inf step itself; use hookforge::FusedAdam or "
          "FusedAdamW",
          runner));
    if (options.warmup_steps < 0)
      throw std::invalid_argument(
          fmt::format("{}: warmup_steps must be >= 0, got {}", runner, options.warmup_steps));
  }

  explicit step_graph(cuda_graph_options options) : options_(options) {}

  /// The next step is a warm-up step (run it with warm_up()).
  bool warming_up() const { return warmed_up_ < options_.warmup_steps; }

  /// Runs one eager `step` on a side stream, ordered after the work before it and before
  /// the work after it.
  template <class Step>
  void warm_up(torch::Device device, Step&& step) {
    on_side_stream(device, step);
    ++warmed_up_;
  }

  /// Whether the recorded step can take `batch` (its fields, shapes, dtypes and devices are
  /// the recorded batch's) with `optimizer` as it is now (the recorded hyper-parameters).
  /// false with nothing recorded.
  bool replays(const Entry& batch, const torch::optim::Optimizer& optimizer) const {
    return recorded_ && same_layout(batch, inputs_) && recorded_settings(optimizer) == settings_;
  }

  /// Whether `batch` has the recorded batch's layout, so that only the optimiser's
  /// hyper-parameters stand in the way: record again. true with nothing recorded.
  bool can_record(const Entry& batch) const { return !recorded_ || same_layout(batch, inputs_); }

  /// Records `step` on ctx's batch (its tensors become the recorded inputs, what `step`
  /// writes into ctx the recorded outputs), then replays it once: a recording runs nothing.
  /// A failure to record (a host read or synchronisation inside `step`) is an error naming
  /// `runner`.
  template <class Step>
  void record(TrainingContext& ctx, const torch::optim::Optimizer& optimizer, Step&& step,
              std::string_view runner);

  /// Copies ctx's batch into the recorded inputs, replays, and gives ctx the recorded
  /// outputs: the batch with the model's output, and the losses (copies: they outlive the
  /// next replay).
  void replay(TrainingContext& ctx);

  /// Steps replayed, recordings made, and steps run eagerly after the warm-up (batches
  /// whose layout differs from the recorded one).
  std::int64_t replayed() const { return replayed_; }
  std::int64_t recordings() const { return recordings_; }
  std::int64_t eager_steps() const { return eager_; }
  void count_eager_step() { ++eager_; }

 private:
  static bool same_layout(const Entry& batch, const Entry& recorded) {
    if (batch.size() != recorded.size()) return false;
    for (const auto& [name, tensor] : recorded) {
      auto it = batch.find(name);
      if (it == batch.end() || !it->second.defined() || !tensor.defined() ||
          it->second.sizes() != tensor.sizes() ||
          it->second.scalar_type() != tensor.scalar_type() ||
          it->second.device() != tensor.device())
        return false;
    }
    return true;
  }

  template <class F>
  static void on_side_stream(torch::Device device, F&& f);

  cuda_graph_options options_;
  std::int64_t warmed_up_ = 0;
  bool recorded_ = false;
  Entry inputs_;   ///< the recorded step's input tensors (the batch is copied into them)
  Entry outputs_;  ///< the batch after the recorded step: inputs and the model's output
  loss_terms losses_;
  torch::Tensor loss_;
  std::vector<double> settings_;
#if HOOKFORGE_HAS_CUDA
  std::unique_ptr<at::cuda::CUDAGraph> graph_;
#endif
  std::int64_t replayed_ = 0, recordings_ = 0, eager_ = 0;
};

#if HOOKFORGE_HAS_CUDA

/// `waiter` waits (on the device) for what `done` has queued so far.
inline void stream_waits_for(const c10::Stream& waiter, const c10::Stream& done) {
  c10::Event event(done.device_type());
  event.record(done);
  event.block(waiter);
}

template <class F>
void step_graph::on_side_stream(torch::Device device, F&& f) {
  const c10::Stream current = c10::cuda::getCurrentCUDAStream(device.index());
  const c10::Stream side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index());
  stream_waits_for(side, current);
  {
    const c10::cuda::CUDAStreamGuard guard(side);
    f();
  }
  stream_waits_for(current, side);
}

template <class Step>
void step_graph::record(TrainingContext& ctx, const torch::optim::Optimizer& optimizer, Step&& step,
                        std::string_view runner) {
  graph_.reset();  // a new recording: give back the old one's memory first
  recorded_ = false;
  inputs_ = ctx.entry;
  auto graph = std::make_unique<at::cuda::CUDAGraph>();
  on_side_stream(ctx.device, [&] {
    // Thread-local capture mode: the loader's worker threads may pin memory meanwhile,
    // which the global mode would count as an error of this recording.
    graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    try {
      step();
    } catch (const std::exception& e) {
      try {
        graph->capture_end();  // an invalidated capture ends in an error of its own
      } catch (...) {
      }
      throw std::runtime_error(fmt::format(
          "{}: the training step could not be recorded in a CUDA graph: {}\nThe model, the "
          "criterion, a hook at on_post_forward or on_post_backward, or the optimiser step "
          "read a device value on the host or synchronised; SyncAudit names which (on any "
          "machine: hookforge-run --audit-syncs), or train with TrainingEpochRunner",
          runner, e.what()));
    }
    graph->capture_end();
  });
  graph->replay();
  graph_ = std::move(graph);
  outputs_ = ctx.entry;
  losses_ = ctx.losses;
  loss_ = ctx.loss;
  settings_ = recorded_settings(optimizer);
  recorded_ = true;
  ++recordings_;
  ctx.loss = loss_.detach().clone();
  for (auto& [name, term] : ctx.losses) term = term.detach().clone();
}

inline void step_graph::replay(TrainingContext& ctx) {
  for (auto& [name, input] : inputs_) input.copy_(ctx.entry.at(name), /*non_blocking=*/true);
  graph_->replay();
  ++replayed_;
  ctx.entry = outputs_;
  ctx.losses = losses_;
  for (auto& [name, term] : ctx.losses) term = term.detach().clone();
  ctx.loss = loss_.detach().clone();
}

#else  // a LibTorch without CUDA: check() refused the runner, so none of these runs

template <class F>
void step_graph::on_side_stream(torch::Device, F&&) {
  throw std::logic_error("step_graph: this LibTorch has no CUDA");
}
template <class Step>
void step_graph::record(TrainingContext&, const torch::optim::Optimizer&, Step&&,
                        std::string_view) {
  throw std::logic_error("step_graph: this LibTorch has no CUDA");
}
inline void step_graph::replay(TrainingContext&) {
  throw std::logic_error("step_graph: this LibTorch has no CUDA");
}

#endif

}  // namespace detail

}  // namespace hookforge
