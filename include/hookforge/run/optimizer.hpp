// hookforge/run/optimizer.hpp — the optimizer kind: a torch optimiser over a model's parameters.
//
//   optimizer:
//     _target: Adam                     # SGD, Adam, AdamW, RMSprop
//     params: {model: ${ref:model}, lr: 1.0e-3, betas: [0.9, 0.999], weight_decay: 0}
//
// An optimizer entry builds a `std::shared_ptr<torch::optim::Optimizer>` holding every
// parameter of `model` in one group; it keeps the model alive. The options are
// PyTorch's, with its defaults (SGD's lr has none: it is required).
//
// Adam and AdamW take `fused: true`, as PyTorch's: hookforge::FusedAdam / FusedAdamW
// (torch/optim/fused_adam.hpp), the same update in one ATen kernel, whose step a
// GradScaler skips on the device, so a mixed-precision step on CUDA reads nothing on
// the host. A LibTorch without the kernel for the run's device is a config error.
#pragma once

#include <memory>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <fmt/core.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include "hookforge/config/register.hpp"
#include "hookforge/run/model.hpp"
#include "hookforge/torch/models/freeze.hpp"
#include "hookforge/run/settings.hpp"
#include "hookforge/torch/compat.hpp"
#include "hookforge/torch/optim/fused_adam.hpp"

HOOKFORGE_DECLARE_KIND(optimizer, torch::optim::Optimizer);

namespace hookforge::run {

struct sgd_config {
  std::shared_ptr<Model> model;
  double lr = 0;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

struct adam_config {
  std::shared_ptr<Model> model;
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 0;
  bool amsgrad = false;
  bool fused = false;  ///< FusedAdam (see above)
};

/// AdamW: Adam's options, weight_decay 1e-2 by default (PyTorch's).
struct adamw_config {
  std::shared_ptr<Model> model;
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
  bool fused = false;  ///< FusedAdamW (see above)
};

struct rmsprop_config {
  std::shared_ptr<Model> model;
  double lr = 1e-2;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0;
  double momentum = 0;
  bool centered = false;
};

namespace detail {
inline std::vector<torch::Tensor> parameters_of(const std::shared_ptr<Model>& model,
                                                const char* who) {
  if (!model) throw std::invalid_argument(fmt::format("{}: model must be given", who));
  if (model->module().parameters().empty())
    throw std::invalid_argument(fmt::format("{}: the model has no parameters", who));
  auto params = trainable_parameters(model->module());  // frozen ones (Pretrained) left out
  if (params.empty())
    throw std::invalid_argument(
        fmt::format("{}: every parameter of the model is frozen; nothing to train", who));
  return params;
}
inline void check_common(const char* who, double lr, double weight_decay) {
  if (!(lr > 0)) throw std::invalid_argument(fmt::format("{}: lr must be > 0, got {}", who, lr));
  if (!(weight_decay >= 0))
    throw std::invalid_argument(
        fmt::format("{}: weight_decay must be >= 0, got {}", who, weight_decay));
}
inline void check_betas(const char* who, std::pair<double, double> betas) {
  for (double b : {betas.first, betas.second})
    if (!(b >= 0 && b < 1))
      throw std::invalid_argument(
          fmt::format("{}: betas must be in [0, 1), got [{}, {}]", who, betas.first, betas.second));
}
}  // namespace detail

inline std::shared_ptr<torch::optim::SGD> make_sgd(sgd_config c) {
  detail::check_common("SGD", c.lr, c.weight_decay);
  if (c.nesterov && (c.momentum <= 0 || c.dampening != 0))
    throw std::invalid_argument("SGD: nesterov needs momentum > 0 and dampening 0");
  auto opt = std::make_shared<torch::optim::SGD>(detail::parameters_of(c.model, "SGD"),
                                                 torch::optim::SGDOptions(c.lr)
                                                     .momentum(c.momentum)
                                                     .dampening(c.dampening)
                                                     .weight_decay(c.weight_decay)
                                                     .nesterov(c.nesterov));
  return keep_alive(std::move(opt), c.model);
}

namespace detail {
/// Adam and AdamW share their options; `Config` is adam_config or adamw_config, `Fused`
/// the class `fused: true` builds.
template <class Opt, class Fused, class OptOptions, class Config>
std::shared_ptr<torch::optim::Optimizer> make_adam_family(const char* who, Config c) {
  check_common(who, c.lr, c.weight_decay);
  check_betas(who, c.betas);
  const auto options = OptOptions(c.lr)
                           .betas(std::make_tuple(c.betas.first, c.betas.second))
                           .eps(c.eps)
                           .weight_decay(c.weight_decay)
                           .amsgrad(c.amsgrad);
  auto params = parameters_of(c.model, who);
  if (!c.fused) return keep_alive(std::make_shared<Opt>(std::move(params), options), c.model);
  const auto device = settings().device;
  if (!compat::has_kernel("aten::_fused_adam_", device))
    throw std::invalid_argument(fmt::format(
        "{}: fused: this LibTorch ({}) has no fused Adam kernel for {} (CUDA builds have one for "
        "cuda, LibTorch >= 2.4 for cpu); remove `fused: true` there",
        who, TORCH_VERSION, device.str()));
  return keep_alive(std::make_shared<Fused>(std::move(params), options), c.model);
}
}  // namespace detail

inline std::shared_ptr<torch::optim::Optimizer> make_adam(adam_config c) {
  return detail::make_adam_family<torch::optim::Adam, FusedAdam, torch::optim::AdamOptions>(
      "Adam", std::move(c));
}

inline std::shared_ptr<torch::optim::Optimizer> make_adamw(adamw_config c) {
  return detail::make_adam_family<torch::optim::AdamW, FusedAdamW, torch::optim::AdamWOptions>(
      "AdamW", std::move(c));
}

inline std::shared_ptr<torch::optim::RMSprop> make_rmsprop(rmsprop_config c) {
  detail::check_common("RMSprop", c.lr, c.weight_decay);
  auto opt = std::make_shared<torch::optim::RMSprop>(detail::parameters_of(c.model, "RMSprop"),
                                                     torch::optim::RMSpropOptions(c.lr)
                                                         .alpha(c.alpha)
                                                         .eps(c.eps)
                                                         .weight_decay(c.weight_decay)
                                                         .momentum(c.momentum)
                                                         .centered(c.centered));
  return keep_alive(std::move(opt), c.model);
}

}  // namespace hookforge::run
