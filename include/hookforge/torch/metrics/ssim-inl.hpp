// hookforge/torch/metrics/ssim-inl.hpp — SSIM's validate and operator(): included by
// ssim.hpp header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <stdexcept>
#include <string>

#include <torch/nn/functional/conv.h>

#include "hookforge/torch/metrics/ssim.hpp"

namespace hookforge {

HOOKFORGE_INLINE void SSIM::validate() const {
  detail::check_image_options("SSIM", data_range, crop_border);
}

HOOKFORGE_INLINE torch::Tensor SSIM::operator()(const Entry& entry) const {
  validate();
  detail::metric_scope scope;
  auto [x, y] = detail::compared_fields(entry, "SSIM", output_field, target_field,
                                        {crop_border, y_channel, data_range}, 3);
  if (x.dim() > 4)
    throw std::invalid_argument("SSIM: images must be (N, C, H, W) or (N, H, W), got shape " +
                                c10::str(x.sizes()));
  if (x.dim() == 3) {
    x = x.unsqueeze(1);
    y = y.unsqueeze(1);
  }
  if (x.size(2) < window_size || x.size(3) < window_size)
    throw std::invalid_argument("SSIM: images must be at least 11x11 (after crop_border), got " +
                                std::to_string(x.size(2)) + "x" + std::to_string(x.size(3)));

  // The five local statistics in one grouped, separable convolution: the 2-D Gaussian
  // window is the outer product of the 1-D one. The window is built on the device, so
  // no host-to-device copy waits on the queue.
  const auto channels = x.size(1);
  auto stats = torch::cat({x, y, x * x, y * y, x * y}, 1);
  auto g = torch::arange(window_size, x.options()).sub((window_size - 1) / 2.0);
  g = g.square().mul(-1.0 / (2.0 * sigma * sigma)).exp();
  g = g / g.sum();
  namespace F = torch::nn::functional;
  const auto groups = 5 * channels;
  stats = F::conv2d(stats, g.view({1, 1, window_size, 1}).expand({groups, 1, window_size, 1}),
                    F::Conv2dFuncOptions().groups(groups));
  stats = F::conv2d(stats, g.view({1, 1, 1, window_size}).expand({groups, 1, 1, window_size}),
                    F::Conv2dFuncOptions().groups(groups));
  auto parts = stats.split(channels, 1);
  const auto &mu_x = parts[0], &mu_y = parts[1];
  auto mu_xx = mu_x * mu_x, mu_yy = mu_y * mu_y, mu_xy = mu_x * mu_y;
  auto var_x = parts[2] - mu_xx, var_y = parts[3] - mu_yy, cov = parts[4] - mu_xy;

  const double c1 = (k1 * data_range) * (k1 * data_range);
  const double c2 = (k2 * data_range) * (k2 * data_range);
  auto map = (2.0 * mu_xy + c1) * (2.0 * cov + c2) / ((mu_xx + mu_yy + c1) * (var_x + var_y + c2));
  // Every sample's map has as many elements: the mean of the per-sample means is the mean.
  return map.mean();
}

}  // namespace hookforge
