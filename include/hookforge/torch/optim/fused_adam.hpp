// hookforge/torch/optim/fused_adam.hpp — FusedAdam and FusedAdamW: LibTorch's Adam and AdamW
// computed by ATen's fused kernel, with a step the GradScaler skips on the device.
//
//   hookforge::FusedAdam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
//   hookforge::FusedAdamW adamw(model->parameters(), torch::optim::AdamWOptions(1e-3));
//   // a config: optimizer: {_target: Adam, params: {model: ${ref:model}, fused: true}}
//
// The update is torch::optim::Adam's (FusedAdamW: AdamW's decoupled weight decay), done
// for all parameters of a group, device and dtype by one `_fused_adam_` kernel, as
// PyTorch's `Adam(fused=True)`. The options are LibTorch's (AdamOptions, AdamWOptions), so
// schedulers, checkpoints and everything that takes a torch::optim::Optimizer take these.
//
// Why it exists: each parameter's step count is a float tensor on its device, so the step
// reads nothing on the host, and it implements supports_amp_scaling: under a GradScaler
// the kernel itself leaves parameters and moments alone when a gradient holds inf/NaN, and
// the step count is put back, with no synchronisation (amp/supports_amp_scaling.hpp).
//
// The kernel is ATen's: CUDA builds have it for cuda, and LibTorch has it for CPU from
// 2.4 (not 1.13). A step over parameters on a device without it throws
// std::invalid_argument naming the device; compat::has_kernel says beforehand. Dense
// floating-point gradients only (sparse ones throw), maximize = false. Results equal
// torch::optim::Adam's to float rounding (tests/torch/test_grad_scaler.cpp: 1e-6 over 100
// steps). The state saves and loads with the optimizer, as LibTorch's own.
#pragma once

#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/arg.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/serialize.h>
#include <torch/serialize/archive.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/amp/supports_amp_scaling.hpp"

namespace hookforge {

/// One parameter's FusedAdam state. `step` is a float32 0-dim tensor on the parameter's
/// device (the kernels read it there); max_exp_avg_sq only with amsgrad.
struct FusedAdamParamState
    : public torch::optim::OptimizerCloneableParamState<FusedAdamParamState> {
  TORCH_ARG(torch::Tensor, step);
  TORCH_ARG(torch::Tensor, exp_avg);
  TORCH_ARG(torch::Tensor, exp_avg_sq);
  TORCH_ARG(torch::Tensor, max_exp_avg_sq);

 public:
  HOOKFORGE_INLINE void serialize(torch::serialize::InputArchive& archive) override;
  HOOKFORGE_INLINE void serialize(torch::serialize::OutputArchive& archive) const override;
};

namespace detail::optim {

/// One param group's hyper-parameters, as the kernel takes them.
struct adam_settings {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad;
  bool decoupled;  // AdamW: p *= 1 - lr * weight_decay, instead of grad += weight_decay * p
};

template <class Options>
adam_settings settings_of(const torch::optim::OptimizerOptions& options, bool decoupled) {
  const auto& o = static_cast<const Options&>(options);
  return {o.lr(),   std::get<0>(o.betas()), std::get<1>(o.betas()),
          o.eps(),  o.weight_decay(),       o.amsgrad(),
          decoupled};
}

/// The Adam update of `params` (those with a gradient), one kernel per device and dtype;
/// where `found_inf` is given and set, nothing changes. `who` names the class in errors.
HOOKFORGE_INLINE void fused_adam_update(torch::optim::Optimizer& optimizer,
                                        const std::vector<torch::Tensor>& params,
                                        const adam_settings& settings, const at::Tensor* found_inf,
                                        const char* who);

/// Checks the options the way torch::optim::Adam does (std::invalid_argument).
HOOKFORGE_INLINE void check_adam_settings(const adam_settings& settings, const char* who);

/// FusedAdam and FusedAdamW: one class but for the options type and the weight decay.
template <class Options, bool Decoupled>
class fused_adam : public torch::optim::Optimizer, public supports_amp_scaling {
 public:
  explicit fused_adam(const std::vector<torch::optim::OptimizerParamGroup>& param_groups,
                      Options defaults = {})
      : Optimizer(param_groups, std::make_unique<Options>(defaults)) {
    check_adam_settings(settings_of<Options>(defaults, Decoupled), name());
  }
  explicit fused_adam(std::vector<torch::Tensor> params, Options defaults = {})
      : fused_adam({torch::optim::OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

  torch::Tensor step(LossClosure closure = nullptr) override {
    torch::Tensor loss;
    if (closure) {
      at::AutoGradMode enable_grad(true);
      loss = closure();
    }
    update(nullptr);
    return loss;
  }

  void step_unless_inf(const at::Tensor& found_inf) override { update(&found_inf); }

  void save(torch::serialize::OutputArchive& archive) const override {
    torch::optim::serialize<FusedAdamParamState, Options>(archive, *this);
  }
  void load(torch::serialize::InputArchive& archive) override {
    torch::optim::serialize<FusedAdamParamState, Options>(archive, *this);
  }

 private:
  static constexpr const char* name() { return Decoupled ? "FusedAdamW" : "FusedAdam"; }

  void update(const at::Tensor* found_inf) {
    for (auto& group : param_groups_)
      fused_adam_update(*this, group.params(), settings_of<Options>(group.options(), Decoupled),
                        found_inf, name());
  }
};

}  // namespace detail::optim

/// torch::optim::Adam, fused (see the top of this file).
class FusedAdam final : public detail::optim::fused_adam<torch::optim::AdamOptions, false> {
 public:
  using fused_adam::fused_adam;
};

/// torch::optim::AdamW, fused (see the top of this file).
class FusedAdamW final : public detail::optim::fused_adam<torch::optim::AdamWOptions, true> {
 public:
  using fused_adam::fused_adam;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/fused_adam-inl.hpp"
#endif
