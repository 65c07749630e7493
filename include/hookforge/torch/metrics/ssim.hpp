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
#include <string>

#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
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
  bool y_channel = false;        ///< compare the BT.601 Y of RGB images, (N, 3, H, W) (ycbcr.hpp)
  HOOKFORGE_METRIC_FIELDS("ssim")

  /// std::invalid_argument for a data_range <= 0 or a negative crop_border.
  void validate() const;

  /// The mean SSIM of the batch's samples (dimension 0), a 0-dim float32 tensor on its device.
  torch::Tensor operator()(const Entry& entry) const;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/metrics/ssim-inl.hpp"
#endif
