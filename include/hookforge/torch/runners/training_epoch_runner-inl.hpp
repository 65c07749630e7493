// hookforge/torch/runners/training_epoch_runner-inl.hpp — the training batch's steps that depend
// on none of the runner's template arguments: included by training_epoch_runner.hpp header-only,
// compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/torch/runners/training_epoch_runner.hpp"

namespace hookforge {

HOOKFORGE_INLINE std::vector<torch::Tensor> TrainingContext::parameters() const {
  return optimizer ? optimizer_parameters(*optimizer) : std::vector<torch::Tensor>{};
}

namespace detail {

HOOKFORGE_INLINE void begin_training_batch(TrainingContext& ctx, Entry&& input,
                                           torch::Device device) {
  ctx.entry = on_device(std::move(input), device);
  ctx.skip_batch = false;
  ctx.extra_losses.clear();
  ctx.skip_optimizer_step = false;
  ctx.losses.clear();
  ctx.loss = torch::Tensor();
  ctx.optimizer_step_due = false;
  ctx.optimizer_stepped = false;
  ctx.batch_scores.clear();
}

HOOKFORGE_INLINE void training_loss(TrainingContext& ctx) {
  add_extra_losses(ctx.losses, ctx.extra_losses, "TrainingEpochRunner: ");
  ctx.loss = total_loss(ctx.losses);
}

HOOKFORGE_INLINE void training_backward(TrainingContext& ctx, GradScaler& scaler,
                                        torch::optim::Optimizer& optimizer,
                                        std::int64_t accumulation_steps, std::int64_t pending,
                                        bool last) {
  auto scaled =
      accumulation_steps == 1 ? ctx.loss : ctx.loss / static_cast<double>(accumulation_steps);
  scaler.scale(scaled).backward();
  ctx.optimizer_step_due = pending == accumulation_steps || last;
  if (ctx.optimizer_step_due) scaler.unscale_(optimizer);  // hooks edit true gradients
}

HOOKFORGE_INLINE void training_update(TrainingContext& ctx, GradScaler& scaler,
                                      torch::optim::Optimizer& optimizer,
                                      std::int64_t& optimizer_steps, bool unscaled) {
  if (!ctx.skip_optimizer_step) {
    ctx.optimizer_stepped = scaler.step(optimizer);
    scaler.update();
    if (ctx.optimizer_stepped) ctx.optimizer_steps = ++optimizer_steps;
  } else if (unscaled) {
    scaler.update();  // close the scaler's iteration: it holds this batch's inf check
  }
  optimizer.zero_grad();
}

HOOKFORGE_INLINE void training_scores(TrainingContext& ctx, const std::vector<metric>& metrics,
                                      std::string_view runner) {
  record_scores(ctx.losses, ctx.loss, ctx.batch_scores);
  record_metrics(metrics, ctx.entry, ctx.batch_scores, runner);
  ctx.running_scores.add(ctx.batch_scores, static_cast<std::int64_t>(ctx.entry.batch_size()));
}

HOOKFORGE_INLINE GradScaler training_scaler(grad_scaler_options scaler, bool mixed_precision,
                                            torch::Device device) {
  scaler.enabled = mixed_precision && device.is_cuda() && scaler.enabled;
  return GradScaler(scaler);
}

}  // namespace detail

}  // namespace hookforge
