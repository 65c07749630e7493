// hookforge/torch/models/espcn-inl.hpp — ESPCN's construction, forward pass and bicubic
// upscaling: included by espcn.hpp header-only, compiled into hookforge::torch_compiled
// otherwise (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <torch/nn/functional/upsampling.h>
#include <torch/types.h>

#include "hookforge/torch/models/espcn.hpp"

namespace hookforge {

HOOKFORGE_INLINE void espcn_options::validate() const {
  auto check = [](bool ok, const char* what, std::int64_t value) {
    if (!ok)
      throw std::invalid_argument(std::string("ESPCN: ") + what + ", got " + std::to_string(value));
  };
  check(scale >= 2, "scale must be >= 2", scale);
  check(channels >= 1, "channels must be >= 1", channels);
  check(features >= 2, "features must be >= 2", features);
}

HOOKFORGE_INLINE ESPCNImpl::ESPCNImpl(espcn_options opts) : options(validated(std::move(opts))) {
  namespace nn = torch::nn;
  const auto& o = options;
  conv1 =
      register_module("conv1", nn::Conv2d(nn::Conv2dOptions(o.channels, o.features, 5).padding(2)));
  conv2 = register_module("conv2",
                          nn::Conv2d(nn::Conv2dOptions(o.features, o.features / 2, 3).padding(1)));
  conv3 = register_module(
      "conv3",
      nn::Conv2d(nn::Conv2dOptions(o.features / 2, o.channels * o.scale * o.scale, 3).padding(1)));
  if (o.residual) {
    torch::NoGradGuard no_grad;
    conv3->weight.zero_();
    conv3->bias.zero_();
  }
}

HOOKFORGE_INLINE torch::Tensor ESPCNImpl::forward(const torch::Tensor& input) {
  if (input.dim() != 4 || input.size(1) != options.channels)
    throw std::invalid_argument("ESPCN: input must be [N, " + std::to_string(options.channels) +
                                ", H, W], got shape " + c10::str(input.sizes()));
  auto x = torch::tanh(conv1->forward(input));
  x = torch::tanh(conv2->forward(x));
  x = torch::pixel_shuffle(conv3->forward(x), options.scale);
  if (options.residual) x = x + bicubic(input);
  return x;
}

HOOKFORGE_INLINE torch::Tensor ESPCNImpl::bicubic(const torch::Tensor& input) const {
  namespace F = torch::nn::functional;
  return F::interpolate(input, F::InterpolateFuncOptions()
                                   .size(std::vector<std::int64_t>{input.size(-2) * options.scale,
                                                                   input.size(-1) * options.scale})
                                   .mode(torch::kBicubic)
                                   .align_corners(false));
}

HOOKFORGE_INLINE espcn_options ESPCNImpl::validated(espcn_options options) {
  options.validate();
  return options;
}

}  // namespace hookforge
