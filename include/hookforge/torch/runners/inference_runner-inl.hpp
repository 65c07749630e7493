// hookforge/torch/runners/inference_runner-inl.hpp — the inference batch's steps that depend
// on none of the loop's template arguments: included by inference_runner.hpp header-only,
// compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/torch/runners/inference_runner.hpp"

namespace hookforge::detail {

HOOKFORGE_INLINE void begin_inference_batch(InferenceContext& ctx, Entry&& input,
                                            torch::Device device) {
  ctx.entry = on_device(std::move(input), device);
  ctx.losses.clear();
  ctx.loss = torch::Tensor();
  ctx.batch_scores.clear();
}

HOOKFORGE_INLINE void inference_scores(InferenceContext& ctx, bool with_loss,
                                       const std::vector<metric>& metrics,
                                       std::string_view runner) {
  if (with_loss) {
    ctx.loss = total_loss(ctx.losses);
    record_scores(ctx.losses, ctx.loss, ctx.batch_scores);
  }
  record_metrics(metrics, ctx.entry, ctx.batch_scores, runner);
  if (!ctx.batch_scores.empty())
    ctx.running_scores.add(ctx.batch_scores, static_cast<std::int64_t>(ctx.entry.batch_size()));
}

}  // namespace hookforge::detail
