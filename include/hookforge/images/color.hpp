// hookforge/images/color.hpp — the colour an image dataset gives its samples.
//
//   torch::Tensor y = hookforge::to_color(rgb, hookforge::image_color::y);   // [1, H, W]
//
// `rgb`: 3 channels (a gray image is repeated into each). `gray`: 1 channel, luma
// 0.299 R + 0.587 G + 0.114 B (ITU-R BT.601's weights, as PIL's "L"; a gray image as it is).
// `y`: 1 channel, the Y of ITU-R BT.601 YCbCr in studio range (bt601_y, torch/data/ycbcr.hpp;
// a gray image counts as R = G = B): what the super-resolution literature evaluates on.
#pragma once

#include <stdexcept>

#include <torch/types.h>

#include "hookforge/torch/data/ycbcr.hpp"

namespace hookforge {

enum class image_color { rgb, gray, y };

/// `image` ([1 or 3, H, W], float in [0, 1]) in `color`; std::invalid_argument for another
/// channel count.
inline torch::Tensor to_color(const torch::Tensor& image, image_color color) {
  const auto channels = image.size(0);
  if (channels != 1 && channels != 3)
    throw std::invalid_argument("to_color: expected an image of 1 or 3 channels, got " +
                                std::to_string(channels));
  switch (color) {
    case image_color::rgb:
      return channels == 3 ? image : image.expand({3, -1, -1}).contiguous();
    case image_color::gray:
      if (channels == 1) return image;
      return image[0].unsqueeze(0) * 0.299 + image[1].unsqueeze(0) * 0.587 +
             image[2].unsqueeze(0) * 0.114;
    case image_color::y:
      return bt601_y(channels == 3 ? image : image.expand({3, -1, -1}));
  }
  return image;
}

}  // namespace hookforge
