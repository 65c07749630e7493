// hookforge/images/resize.hpp — the bicubic degradation of super-resolution datasets.
//
//   auto hr = hookforge::crop_to_multiple(image, 2);       // [C, H - H % 2, W - W % 2]
//   auto lr = hookforge::bicubic_downscale(hr, 2);         // [C, H / 2, W / 2]
//   auto up = hookforge::bicubic_upscale(lr, 2);           // [C, H, W]: the bicubic baseline
//
// Downscaling is PyTorch's antialiased bicubic, `interpolate(x, scale_factor = 1/s, mode =
// "bicubic", align_corners = False, antialias = True)`: Keys' cubic with a = -0.5, its support
// widened by the factor, weights normalised at the borders (PIL's BICUBIC reduction, close to
// MATLAB's imresize). Upscaling is PyTorch's plain bicubic (a = -0.75), as the field's bicubic
// baseline. Both clamp to [0, 1]; `quantize` rounds to a bit depth's levels, as an LR image
// saved to a PNG file would be.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <torch/nn/functional/upsampling.h>
#include <torch/types.h>

namespace hookforge {

namespace detail::images {
inline torch::Tensor bicubic(const torch::Tensor& image, std::int64_t height, std::int64_t width,
                             bool antialias) {
  namespace F = torch::nn::functional;
  auto options = F::InterpolateFuncOptions()
                     .size(std::vector<std::int64_t>{height, width})
                     .mode(torch::kBicubic)
                     .align_corners(false)
                     .antialias(antialias);
  return F::interpolate(image.unsqueeze(0), options).squeeze(0).clamp(0, 1);
}

inline void check_scale(const char* who, std::int64_t scale) {
  if (scale < 1)
    throw std::invalid_argument(std::string(who) + ": scale must be >= 1, got " +
                                std::to_string(scale));
}
}  // namespace detail::images

/// `image` ([C, H, W]) cut at the bottom and right to the largest multiple of `scale`.
inline torch::Tensor crop_to_multiple(const torch::Tensor& image, std::int64_t scale) {
  detail::images::check_scale("crop_to_multiple", scale);
  const auto h = image.size(-2) / scale * scale, w = image.size(-1) / scale * scale;
  return image.narrow(-2, 0, h).narrow(-1, 0, w);
}

/// `image` ([C, H, W], float in [0, 1], H and W multiples of `scale`) reduced `scale` times.
inline torch::Tensor bicubic_downscale(const torch::Tensor& image, std::int64_t scale) {
  detail::images::check_scale("bicubic_downscale", scale);
  if (image.size(-2) % scale != 0 || image.size(-1) % scale != 0)
    throw std::invalid_argument("bicubic_downscale: the image's sides must be multiples of " +
                                std::to_string(scale) + ", got " + std::to_string(image.size(-2)) +
                                " x " + std::to_string(image.size(-1)));
  return detail::images::bicubic(image, image.size(-2) / scale, image.size(-1) / scale, true);
}

/// `image` ([C, h, w], float in [0, 1]) enlarged `scale` times.
inline torch::Tensor bicubic_upscale(const torch::Tensor& image, std::int64_t scale) {
  detail::images::check_scale("bicubic_upscale", scale);
  return detail::images::bicubic(image, image.size(-2) * scale, image.size(-1) * scale, false);
}

/// `image` (float in [0, 1]) rounded to the 2^bit_depth levels of a `bit_depth`-bit file.
inline torch::Tensor quantize(const torch::Tensor& image, std::int64_t bit_depth) {
  const auto levels = static_cast<double>((std::int64_t{1} << bit_depth) - 1);
  return (image * levels).round() / levels;
}

}  // namespace hookforge
