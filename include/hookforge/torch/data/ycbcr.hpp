// hookforge/torch/data/ycbcr.hpp — the Y (luma) of ITU-R BT.601 YCbCr in studio range, the
// channel super-resolution papers report PSNR and SSIM on (MATLAB's rgb2ycbcr; BasicSR's
// `test_y_channel`):
//
//   Y = (16 + 65.481 R + 128.553 G + 24.966 B) / 255     with R, G, B in [0, 1]
//
// so Y lies in [16/255, 235/255]. Values in [0, data_range] are scaled to [0, 1] and back.
#pragma once

#include <cstdint>

#include <torch/types.h>

namespace hookforge {

/// The BT.601 Y of `rgb`, whose dimension `channel_dim` holds R, G and B (size 3), keeping
/// that dimension (size 1). Values in [0, data_range].
inline torch::Tensor bt601_y(const torch::Tensor& rgb, std::int64_t channel_dim = -3,
                             double data_range = 1.0) {
  const auto r = rgb.narrow(channel_dim, 0, 1), g = rgb.narrow(channel_dim, 1, 1),
             b = rgb.narrow(channel_dim, 2, 1);
  return (r * (65.481 / 255) + g * (128.553 / 255) + b * (24.966 / 255)) +
         data_range * (16.0 / 255);
}

}  // namespace hookforge
