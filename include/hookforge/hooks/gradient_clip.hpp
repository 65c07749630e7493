// hookforge/hooks/gradient_clip.hpp — GradientClip: clip gradients by their norm or by value.
//
//   TrainingEpochRunner train{optimizer, {}, hookforge::GradientClip{1.0}};  // 2-norm <= 1
//   hookforge::GradientClip{{.max_norm = 5, .norm_type = INFINITY}}          // max |g| <= 5
//   hookforge::GradientClip{{.clip_value = 0.5}}                             // each |g| <= 0.5
//   hookforge::GradientClip{{.max_norm = 1, .nonfinite = hookforge::nonfinite_grads::error}}
//   // a GAN: clip D's gradients (GANContext::parameters() are the current phase's)
//   hookforge::rebind<"clip_all_grads", points::on_post_d_backward>(hookforge::GradientClip{1.0})
//
// Semantics of torch.nn.utils.clip_grad_norm_ / clip_grad_value_: the total norm is the
// norm_type-norm of the per-tensor norms of every gradient of the context's parameters()
// (the optimiser's; on a GAN the current phase's network), and each gradient is scaled by
// min(1, max_norm / (total + 1e-6)). The scaling factor stays on the device: clipping reads
// nothing on the host, so the step stays free of synchronisation.
//
// At on_post_backward the gradients are already unscaled under mixed precision (the
// runner unscales before that point on the batches that update). With gradient
// accumulation the hook clips only on the batch whose update follows
// (ctx.optimizer_step_due), i.e. the accumulated gradient, as Lightning does: clipping
// each micro-batch's partial sum would change the result.
//
// Non-finite gradients (`nonfinite`):
//   ignore     (default) no check; a NaN/inf norm makes the clipped gradients NaN, as in PyTorch
//   error      throw std::runtime_error naming the epoch and batch (error_if_nonfinite=True);
//              the update is not applied, the parameters stay as they were
//   skip_step  skip this update (ctx.skip_optimizer_step; on a GAN the phase's step) and go on
// Either check reads the total norm on the host once per update (hookforge::host_read).
// Under an enabled gradient scaler (fp16 on CUDA) non-finite gradients are expected while
// the scale settles; the scaler skips those steps itself, so the check leaves them to it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"
#include "hookforge/torch/data/host_read.hpp"

namespace hookforge {

/// What GradientClip does when the gradients' norm is NaN or infinite.
enum class nonfinite_grads { ignore, error, skip_step };

struct gradient_clip_options {
  double max_norm = 0;     ///< > 0: clip by norm, to this total norm
  double norm_type = 2.0;  ///< p of the p-norm (> 0); INFINITY for the largest |element|
  double clip_value = 0;   ///< > 0: clip by value, each element to [-clip_value, clip_value]
  nonfinite_grads nonfinite = nonfinite_grads::ignore;
};

class GradientClip {
 public:
  static constexpr int priority = priority::NORMAL;
  /// The clipping stays on the device (docs/hooks.md, "Capture safety": the host-reading
  /// `nonfinite` checks are for a capturing runner to refuse).
  static constexpr bool capture_safe = true;

  explicit GradientClip(gradient_clip_options options) : options_(options) {
    const bool by_norm = options_.max_norm > 0, by_value = options_.clip_value > 0;
    if (by_norm == by_value)
      throw std::invalid_argument(
          fmt::format("GradientClip: exactly one of max_norm and clip_value must be > 0, got "
                      "max_norm {} and clip_value {}",
                      options_.max_norm, options_.clip_value));
    if (options_.max_norm < 0 || std::isnan(options_.max_norm))
      throw std::invalid_argument(
          fmt::format("GradientClip: max_norm must be > 0, got {}", options_.max_norm));
    if (options_.clip_value < 0 || std::isnan(options_.clip_value))
      throw std::invalid_argument(
          fmt::format("GradientClip: clip_value must be > 0, got {}", options_.clip_value));
    if (!(options_.norm_type > 0))
      throw std::invalid_argument(fmt::format(
          "GradientClip: norm_type must be > 0 (or INFINITY), got {}", options_.norm_type));
  }

  /// Clip by norm: the total norm_type-norm of the gradients to at most `max_norm`.
  explicit GradientClip(double max_norm, double norm_type = 2.0)
      : GradientClip(gradient_clip_options{.max_norm = max_norm, .norm_type = norm_type}) {}

  /// What clip_all_grads reads from a context: the first field it lacks ("" for none).
  template <class C>
  static consteval std::string_view context_lacks() {
    if (auto lacks = training_lacks<C>(); !lacks.empty()) return lacks;
    if (auto lacks = update_veto_lacks<C>(); !lacks.empty()) return lacks;
    if constexpr (!requires(C& c) { c.parameters(); }) return "parameters()";
    return "";
  }

  template <context_for<GradientClip> C>
  void clip_all_grads(C& ctx) {
    if constexpr (single_training_context<C>)
      if (!ctx.optimizer_step_due) return;  // accumulating: clip the sum before its update
    std::vector<torch::Tensor> grads;
    for (const auto& p : ctx.parameters())
      if (p.grad().defined() && p.grad().numel() > 0) grads.push_back(p.grad());
    if (grads.empty()) return;

    torch::NoGradGuard no_grad;
    const bool by_norm = options_.max_norm > 0;
    const bool check = options_.nonfinite != nonfinite_grads::ignore && !scaler_enabled(ctx);
    last_norm_ = torch::Tensor();
    if (by_norm || check)
      last_norm_ =
          total_norm(grads, by_norm ? options_.norm_type : std::numeric_limits<double>::infinity());
    if (check) {
      const double norm = host_read(last_norm_);
      if (!std::isfinite(norm)) {
        if (options_.nonfinite == nonfinite_grads::error)
          throw std::runtime_error(fmt::format(
              "GradientClip: the gradients' total norm is {} at {}; the update was not applied "
              "(nonfinite = nonfinite_grads::skip_step skips such updates instead)",
              norm, context_position(ctx)));
        skip_update(ctx);
        ++skipped_;
        return;
      }
    }
    if (by_norm) {
      auto scale = (options_.max_norm / (last_norm_ + 1e-6)).clamp_max(1.0);
      for (auto& g : grads) g.mul_(scale.to(g.scalar_type()));
    } else {
      for (auto& g : grads) g.clamp_(-options_.clip_value, options_.clip_value);
    }
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(clip_all_grads, points::on_post_backward));

  /// The total norm of the last clipped gradients, before clipping, on the device (never
  /// read by the hook unless a check is on). Undefined when clipping by value without a check.
  const torch::Tensor& last_norm() const { return last_norm_; }
  /// Updates skipped for non-finite gradients (nonfinite_grads::skip_step).
  std::int64_t skipped_steps() const { return skipped_; }
  const gradient_clip_options& options() const { return options_; }

  /// The norm_type-norm of the per-tensor norms of `grads` (float32, on their device).
  static torch::Tensor total_norm(const std::vector<torch::Tensor>& grads, double norm_type) {
    std::vector<torch::Tensor> norms;
    norms.reserve(grads.size());
    if (std::isinf(norm_type)) {
      for (const auto& g : grads) norms.push_back(g.detach().abs().max().to(torch::kFloat));
      return torch::stack(norms).max();
    }
    for (const auto& g : grads) norms.push_back(g.detach().norm(norm_type).to(torch::kFloat));
    return torch::stack(norms).norm(norm_type);
  }

 private:
  gradient_clip_options options_;
  torch::Tensor last_norm_;
  std::int64_t skipped_ = 0;
};

}  // namespace hookforge
