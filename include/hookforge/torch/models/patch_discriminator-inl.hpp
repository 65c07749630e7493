// hookforge/torch/models/patch_discriminator-inl.hpp — PatchDiscriminator's construction and
// forward pass: included by patch_discriminator.hpp header-only, compiled into
// hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>

#include "hookforge/torch/models/patch_discriminator.hpp"

namespace hookforge {

HOOKFORGE_INLINE PatchDiscriminatorImpl::PatchDiscriminatorImpl(patch_discriminator_options o)
    : options(std::move(o)) {
  if (options.channels < 1 || options.features < 1 || options.layers < 1)
    throw std::invalid_argument("PatchDiscriminator: channels, features and layers must be >= 1");
  std::int64_t in = options.channels, out = options.features;
  for (std::int64_t i = 0; i < options.layers; ++i) {
    body->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 4).stride(2).padding(1)));
    body->push_back(torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)));
    in = out;
    out = std::min<std::int64_t>(out * 2, 512);
  }
  body->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, 1, 3).padding(1)));
  register_module("body", body);
}

HOOKFORGE_INLINE torch::Tensor PatchDiscriminatorImpl::forward(const Entry& batch) {
  return body->forward(batch.at(options.input_field));
}

}  // namespace hookforge
