// hookforge/torch/optim/fused_adam-inl.hpp — FusedAdam's definitions: included by
// fused_adam.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/util/Optional.h>
#include <fmt/format.h>

#include "hookforge/torch/compat.hpp"
#include "hookforge/torch/optim/fused_adam.hpp"

namespace hookforge {

HOOKFORGE_INLINE void FusedAdamParamState::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, step);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, exp_avg);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, exp_avg_sq);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, max_exp_avg_sq);
}

HOOKFORGE_INLINE void FusedAdamParamState::serialize(
    torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(step);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg_sq);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(max_exp_avg_sq);
}

namespace detail::optim {

/// The tensors of one kernel call: the parameters of one device and dtype. Not in an
/// unnamed namespace: header-only, the inline functions below that use it are one
/// definition in every TU.
struct adam_bucket {
  c10::Device device;
  c10::ScalarType dtype;
  std::vector<at::Tensor> params{}, grads{}, exp_avgs{}, exp_avg_sqs{}, max_exp_avg_sqs{}, steps{};
};

HOOKFORGE_INLINE void check_adam_settings(const adam_settings& s, const char* who) {
  const auto fail = [&](const char* what, double value) {
    throw std::invalid_argument(fmt::format("{}: {}, got {}", who, what, value));
  };
  if (!(s.lr >= 0)) fail("lr must be >= 0", s.lr);
  if (!(s.eps >= 0)) fail("eps must be >= 0", s.eps);
  if (!(s.beta1 >= 0 && s.beta1 < 1)) fail("betas[0] must be in [0, 1)", s.beta1);
  if (!(s.beta2 >= 0 && s.beta2 < 1)) fail("betas[1] must be in [0, 1)", s.beta2);
  if (!(s.weight_decay >= 0)) fail("weight_decay must be >= 0", s.weight_decay);
}

HOOKFORGE_INLINE void fused_adam_update(torch::optim::Optimizer& optimizer,
                                        const std::vector<torch::Tensor>& params,
                                        const adam_settings& s, const at::Tensor* found_inf,
                                        const char* who) {
  at::NoGradGuard no_grad;
  std::vector<adam_bucket> buckets;
  for (const auto& p : params) {
    const auto& grad = p.grad();
    if (!grad.defined()) continue;
    if (grad.is_sparse())
      throw std::invalid_argument(fmt::format("{}: sparse gradients are not supported", who));
    auto& slot = optimizer.state()[compat::optimizer_state_key(p)];
    if (!slot) {
      auto fresh = std::make_unique<FusedAdamParamState>();
      fresh->step(at::zeros({}, p.options().dtype(at::kFloat)));
      fresh->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
      fresh->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
      if (s.amsgrad) fresh->max_exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
      slot = std::move(fresh);
    }
    auto& state = static_cast<FusedAdamParamState&>(*slot);
    // A state loaded from a checkpoint may sit on another device than the parameter.
    if (state.step().device() != p.device()) {
      state.step(state.step().to(p.device(), at::kFloat));
      state.exp_avg(state.exp_avg().to(p.device()));
      state.exp_avg_sq(state.exp_avg_sq().to(p.device()));
    }
    if (s.amsgrad &&
        (!state.max_exp_avg_sq().defined() || state.max_exp_avg_sq().device() != p.device()))
      state.max_exp_avg_sq(state.max_exp_avg_sq().defined()
                               ? state.max_exp_avg_sq().to(p.device())
                               : at::zeros_like(p, at::MemoryFormat::Preserve));
    adam_bucket* bucket = nullptr;
    for (auto& b : buckets)
      if (b.device == p.device() && b.dtype == p.scalar_type()) bucket = &b;
    if (!bucket)
      bucket = &buckets.emplace_back(adam_bucket{.device = p.device(), .dtype = p.scalar_type()});
    bucket->params.push_back(p);
    bucket->grads.push_back(grad);
    bucket->exp_avgs.push_back(state.exp_avg());
    bucket->exp_avg_sqs.push_back(state.exp_avg_sq());
    if (s.amsgrad) bucket->max_exp_avg_sqs.push_back(state.max_exp_avg_sq());
    bucket->steps.push_back(state.step());
  }

  for (auto& b : buckets) {
    if (!compat::has_kernel("aten::_fused_adam_", b.device))
      throw std::invalid_argument(fmt::format(
          "{}: this LibTorch ({}) has no fused Adam kernel for {} tensors (CUDA builds have one "
          "for cuda, LibTorch >= 2.4 for cpu); use torch::optim::{} there",
          who, TORCH_VERSION, b.device.str(), s.decoupled ? "AdamW" : "Adam"));
    c10::optional<at::Tensor> skip;  // std::optional since 2.x; its own type in 1.13
    if (found_inf) skip = found_inf->to(b.device, at::kFloat, /*non_blocking=*/true);
    at::_foreach_add_(b.steps, 1);
    if (s.decoupled && s.weight_decay != 0) {
      // AdamW's decay, skipped with the update: factor 1 - lr * wd * (1 - found_inf).
      if (skip) {
        const auto factor = (1.0 - *skip).mul_(-s.lr * s.weight_decay).add_(1.0);
        for (auto& p : b.params) p.mul_(factor.to(p.scalar_type()));
      } else {
        at::_foreach_mul_(b.params, 1.0 - s.lr * s.weight_decay);
      }
    }
    at::_fused_adam_(b.params, b.grads, b.exp_avgs, b.exp_avg_sqs, b.max_exp_avg_sqs, b.steps, s.lr,
                     s.beta1, s.beta2, s.decoupled ? 0.0 : s.weight_decay, s.eps, s.amsgrad,
                     /*maximize=*/false, /*grad_scale=*/c10::nullopt, skip);
    if (skip) at::_foreach_sub_(b.steps, std::vector<at::Tensor>(b.steps.size(), *skip));
  }
}

}  // namespace detail::optim

}  // namespace hookforge
