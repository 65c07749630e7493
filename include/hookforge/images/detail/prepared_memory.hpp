// hookforge/images/detail/prepared_memory.hpp — the memory an ImageFolder image takes, told
// from its header: checked before the image is decoded (against image_folder_options'
// memory_limit), and summed for the cache before anything is cached.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/core.h>

#include "hookforge/images/image_file.hpp"

namespace hookforge::detail::images {

/// The bytes decoding and preparing one image takes at its peak: the decoded samples and
/// their [C, H, W] copy (16 bits: int16, int32 and its mask), the float32 image and its
/// colour conversion (3 channels), then HR and LR in `out_channels` float32 channels, and with
/// `bicubic` the bicubic baseline and its clamped copy. Doubles: a header may claim more than
/// a size_t holds.
inline double working_bytes(const image_info& info, std::int64_t out_channels, std::int64_t scale,
                            bool bicubic) {
  const double pixels = static_cast<double>(info.width) * static_cast<double>(info.height);
  const double in = static_cast<double>(info.channels), out = static_cast<double>(out_channels);
  const double decoded = in * (info.bit_depth == 16 ? 2 + 4 + 4 : 1 + 1);
  const double converted = 4 * (in + 3);
  const double s = static_cast<double>(scale);
  const double high_images = bicubic ? 3 : 1;  // HR, and the bicubic with its clamped copy
  const double prepared = scale == 1 ? 4 * out : 4 * out * (high_images + 1 / (s * s));
  return pixels * (decoded + converted + prepared);
}

/// The bytes a cached image keeps: HR, and with scale >= 2 LR and (with `bicubic`) the bicubic
/// baseline, float32.
inline double cached_bytes(const image_info& info, std::int64_t out_channels, std::int64_t scale,
                           bool bicubic) {
  const double pixels = static_cast<double>(info.width) * static_cast<double>(info.height);
  const double s = static_cast<double>(scale);
  const double high_images = bicubic ? 2 : 1;  // HR, and the bicubic
  return pixels * 4 * static_cast<double>(out_channels) *
         (scale == 1 ? 1 : high_images + 1 / (s * s));
}

/// "3.2 GiB".
inline std::string gib_text(double bytes) {
  return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
}

}  // namespace hookforge::detail::images
