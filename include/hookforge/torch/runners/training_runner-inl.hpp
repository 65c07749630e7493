// hookforge/torch/runners/training_runner-inl.hpp — the training batch's steps that depend
// on none of the runner's template arguments: included by training_runner.hpp header-only,
// compiled into hookforge::torch_compiled otherwise (core/config.hpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "hookforge/torch/runners/training_runner.hpp"

namespace hookforge::detail {

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

HOOKFORGE_INLINE void training_backward(TrainingContext& ctx, GradScaler& scaler,
                                        torch::optim::Optimizer& optimizer,
                                        std::int64_t accumulation_steps, std::int64_t pending,
                                        bool last) {
  for (auto& [name, value] : ctx.extra_losses) {
    if (!ctx.losses.emplace(name, value).second)
      throw std::invalid_argument("TrainingEpochRunner: extra loss '" + name +
                                  "' has the name of a criterion term");
  }
  ctx.loss = total_loss(ctx.losses);

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

HOOKFORGE_INLINE GradScaler training_scaler(const training_options& options) {
  auto scaler = options.scaler;
  // As in PyTorch, loss scaling is for float16 on CUDA; CPU autocast uses bfloat16,
  // whose range needs none.
  scaler.enabled = options.mixed_precision && options.device.is_cuda() && scaler.enabled;
  return GradScaler(scaler);
}

}  // namespace hookforge::detail
