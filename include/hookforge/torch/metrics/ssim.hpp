// hookforge/torch/metrics/ssim.hpp — structural similarity (Wang et al. 2004), per sample then
// averaged.
//
// As the reference implementation (Wang's ssim_index.m, BasicSR's calculate_ssim,
// scikit-image's structural_similarity with gaussian_weights=True and
// use_sample_covariance=False): with w the 11x11 Gaussian window (sigma 1.5, summing to 1)
// and * a correlation over the window's valid positions (no padding),
//   mu_x = w * x            sigma_x^2 = w * x^2 - mu_x^2        sigma_xy = w * (x y) - mu_x mu_y
//   SSIM map = (2 mu_x mu_y + C1)(2 sigma_xy + C2) / ((mu_x^2 + mu_y^2 + C1)(sigma_x^2 + sigma_y^2
//   + C2)) C1 = (K1 L)^2, C2 = (K2 L)^2, K1 = 0.01, K2 = 0.03, L = data_range
// A sample's SSIM is the mean of its map over positions and channels (each channel on its
// own, then averaged); the batch's value is the mean over samples. Images are (N, C, H, W)
// or (N, H, W), at least 11x11 after `crop_border` pixels are removed from each edge.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <torch/nn/functional/conv.h>
#include <torch/types.h>

#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/metrics/metric.hpp"

namespace hookforge {

struct SSIM {
  static constexpr std::int64_t window_size = 11;
  static constexpr double sigma = 1.5;
  static constexpr double k1 = 0.01;
  static constexpr double k2 = 0.03;

  double data_range = 1.0;  ///< max - min of the signal: 1 for [0, 1] images, 255 for 8-bit ones
  std::int64_t crop_border = 0;  ///< pixels removed from each edge of the last two dimensions
  std::string output_field = "output";
  std::string target_field = "target";
  std::string name = "ssim";

  /// std::invalid_argument for a data_range <= 0 or a negative crop_border.
  void validate() const {
    detail::check_data_range("SSIM", data_range);
    detail::check_crop_border("SSIM", crop_border);
  }

  /// The mean SSIM of the batch's samples (dimension 0), a 0-dim float32 tensor on its device.
  torch::Tensor operator()(const Entry& entry) const {
    validate();
    detail::metric_scope scope;
    auto [x, y] =
        detail::compared_fields(entry, "SSIM", output_field, target_field, crop_border, 3);
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
    auto map =
        (2.0 * mu_xy + c1) * (2.0 * cov + c2) / ((mu_xx + mu_yy + c1) * (var_x + var_y + c2));
    // Every sample's map has as many elements: the mean of the per-sample means is the mean.
    return map.mean();
  }

  operator metric() const { return detail::make_metric(*this); }
};

}  // namespace hookforge
