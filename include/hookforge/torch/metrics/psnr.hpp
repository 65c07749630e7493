// hookforge/torch/metrics/psnr.hpp — peak signal-to-noise ratio, in dB, per sample then averaged.
//
//   PSNR_i = 10 log10(data_range^2 / MSE_i),  MSE_i = mean over sample i's elements of (x - y)^2
//
// after `crop_border` pixels are removed from each edge of the last two dimensions (the
// usual border crop of super-resolution benchmarks). The batch's value is the mean of the
// PSNR_i, so the epoch's is the mean over samples (not the PSNR of the mean MSE). A sample
// equal to its target has PSNR +inf, as in BasicSR and scikit-image. With `y_channel`, RGB
// images (N, 3, H, W) are compared on their BT.601 Y (data/ycbcr.hpp), as the SR literature
// reports PSNR.
#pragma once

#include <cstdint>
#include <string>

#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/metrics/metric.hpp"

namespace hookforge {

struct PSNR {
  double data_range = 1.0;  ///< max - min of the signal: 1 for [0, 1] images, 255 for 8-bit ones
  std::int64_t crop_border = 0;  ///< pixels removed from each edge of the last two dimensions
  bool y_channel = false;        ///< compare the BT.601 Y of RGB images, (N, 3, H, W) (ycbcr.hpp)
  HOOKFORGE_METRIC_FIELDS("psnr")

  /// std::invalid_argument for a data_range <= 0 or a negative crop_border.
  void validate() const;

  /// The mean PSNR of the batch's samples (dimension 0), a 0-dim float32 tensor on its device.
  torch::Tensor operator()(const Entry& entry) const;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/metrics/psnr-inl.hpp"
#endif
