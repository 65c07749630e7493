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

#include <cstdint>
#include <string>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

struct patch_discriminator_options {
  std::int64_t channels = 1;   ///< image channels
  std::int64_t features = 32;  ///< channels of the first layer
  std::int64_t layers = 3;     ///< stride-2 layers (>= 1)
  std::string input_field = "input";

  /// The parameters of the model these options build, without building it (a double: a
  /// config may ask for more than an int64 holds).
  double parameter_count() const {
    double n = 0, in = static_cast<double>(channels), out = static_cast<double>(features);
    const auto next = [](double width) { return width * 2 < 512 ? width * 2 : 512.0; };
    std::int64_t i = 0;
    for (; i < layers && !(in == out && next(out) == out); ++i) {
      n += (in * 16 + 1) * out;
      in = out;
      out = next(out);
    }
    n += static_cast<double>(layers - i) * (in * 16 + 1) * out;  // the widths have settled
    return n + in * 9 + 1;
  }
};

struct PatchDiscriminatorImpl : torch::nn::Module {
  explicit PatchDiscriminatorImpl(patch_discriminator_options o = {});

  torch::Tensor forward(const Entry& batch);

  patch_discriminator_options options;
  torch::nn::Sequential body;
};
TORCH_MODULE(PatchDiscriminator);

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/models/patch_discriminator-inl.hpp"
#endif
