// hookforge/torch/models/espcn.hpp — ESPCN, the efficient sub-pixel convolutional network
// (Shi et al. 2016, "Real-Time Single Image and Video Super-Resolution Using an Efficient
// Sub-Pixel Convolutional Neural Network"): all convolutions run at low resolution and the
// last one's scale^2 channels per output channel are rearranged into a scale-times larger
// image (pixel shuffle).
//
//   conv 5x5  channels     -> features       tanh
//   conv 3x3  features     -> features / 2   tanh
//   conv 3x3  features / 2 -> channels * scale^2
//   pixel_shuffle(scale)                          [N, C, H, W] -> [N, C, scale H, scale W]
//
// Zero padding keeps every convolution's size ("same"); the weights start as torch's
// defaults. With `residual`, the network learns a correction of bicubic upscaling: the
// output is the above plus the bicubic interpolation of the input (torch's, align_corners =
// false, not clamped), and the last convolution starts at zero, so the untrained network
// is exactly bicubic and training only improves on it (on the procedural images of
// torch/data/procedural_images.hpp it beats bicubic from the first epoch; with torch's
// initialisation the first epoch is below bicubic).
//
//   hookforge::ESPCN model(hookforge::espcn_options{.scale = 2, .residual = true});
//   auto sr = model->forward(batch);   // batch.at("input"): [N, 1, H, W] -> [N, 1, 2H, 2W]
#pragma once

#include <cstdint>
#include <string>

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

struct espcn_options {
  std::int64_t scale = 2;             ///< upscaling factor, >= 2
  std::int64_t channels = 1;          ///< image channels in and out, >= 1
  std::int64_t features = 64;         ///< channels of the first layer (the second has half), >= 2
  bool residual = false;              ///< add the bicubic upscaling of the input to the output
  std::string input_field = "input";  ///< the batch's field holding the low-resolution images

  /// std::invalid_argument naming the first option out of range.
  void validate() const;

  /// The parameters of the model these options build, without building it (a double: a
  /// config may ask for more than an int64 holds).
  double parameter_count() const {
    const double c = static_cast<double>(channels), f = static_cast<double>(features),
                 h = static_cast<double>(features / 2),
                 out = c * static_cast<double>(scale * scale);
    return (c * 25 + 1) * f + (f * 9 + 1) * h + (h * 9 + 1) * out;
  }
};

struct ESPCNImpl : torch::nn::Module {
  explicit ESPCNImpl(espcn_options opts = {});

  /// The upscaled images of `input`, [N, channels, H, W] -> [N, channels, scale H, scale W].
  torch::Tensor forward(const torch::Tensor& input);

  /// forward(batch.at(options.input_field)).
  torch::Tensor forward(const Entry& batch) { return forward(batch.at(options.input_field)); }

  /// The bicubic upscaling of `input` by options.scale (align_corners = false, not clamped).
  torch::Tensor bicubic(const torch::Tensor& input) const;

  const espcn_options options;
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};

 private:
  static espcn_options validated(espcn_options options);
};
TORCH_MODULE(ESPCN);

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/models/espcn-inl.hpp"
#endif
