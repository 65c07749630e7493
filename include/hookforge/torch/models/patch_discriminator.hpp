// hookforge/torch/models/patch_discriminator.hpp — a small convolutional discriminator for
// image GANs: a score per image patch.
//
//   hookforge::PatchDiscriminator d({.channels = 1, .features = 32, .layers = 3});
//   auto scores = d->forward(Entry{{"input", images}});   // [N, C, H, W] -> [N, 1, H', W'] logits
//
// `layers` stride-2 4x4 convolutions with LeakyReLU(0.2), `features` channels doubling at
// each, then a 3x3 convolution to one channel: logits (no sigmoid), for
// binary_cross_entropy_with_logits. The GAN runner calls it on an Entry whose "input"
// is the real or the fake sample.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

struct patch_discriminator_options {
  std::int64_t channels = 1;   ///< image channels
  std::int64_t features = 32;  ///< channels of the first layer
  std::int64_t layers = 3;     ///< stride-2 layers (>= 1)
  std::string input_field = "input";
};

struct PatchDiscriminatorImpl : torch::nn::Module {
  explicit PatchDiscriminatorImpl(patch_discriminator_options o = {}) : options(std::move(o)) {
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

  torch::Tensor forward(const Entry& batch) { return body->forward(batch.at(options.input_field)); }

  patch_discriminator_options options;
  torch::nn::Sequential body;
};
TORCH_MODULE(PatchDiscriminator);

}  // namespace hookforge
