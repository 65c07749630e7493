// hookforge/hooks/detail/image_pixels.hpp — a batch of images as 8-bit pixels on the host, and
// one image as PNG bytes: what BatchImageSaver writes to files and TensorBoardLogger to its
// event files.
//
// Needs libpng (Debian: libpng-dev), linked by the hookforge::torch CMake target.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <png.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "hookforge/torch/data/host_read.hpp"

namespace hookforge::detail::hooks {

/// Why `value_range` cannot map values to 0…255 ("" when it can): low < high, both finite.
inline std::string value_range_problem(std::pair<double, double> range) {
  const auto [low, high] = range;
  if (low < high && std::isfinite(low) && std::isfinite(high)) return "";
  return fmt::format("value_range must be finite with low < high, got [{}, {}]", low, high);
}

/// The first `count` samples (all when 0) of `images` — [N, C, H, W] with C = 1 or 3, or
/// [N, H, W] — as uint8 [k, H, W, C] on the host: clamped to `range` (NaN and -inf to low,
/// +inf to high), mapped linearly to 0…255 and rounded, on the tensor's device; the copy
/// to the host is one counted host read. `who` and `field` name the images in errors.
inline torch::Tensor host_pixels(std::string_view who, std::string_view field,
                                 const torch::Tensor& images, std::int64_t count,
                                 std::pair<double, double> range) {
  const bool shape_ok =
      images.defined() &&
      (images.dim() == 3 || (images.dim() == 4 && (images.size(1) == 1 || images.size(1) == 3)));
  if (!shape_ok)
    throw std::invalid_argument(fmt::format(
        "{}: field '{}' must be images [N, C, H, W] with C = 1 or 3, or [N, H, W]; got {}", who,
        field,
        images.defined() ? "shape " + c10::str(images.sizes())
                         : std::string("an undefined tensor")));
  torch::NoGradGuard no_grad;
  auto x = images.detach();
  if (count > 0 && x.size(0) > count) x = x.slice(0, 0, count);
  if (x.dim() == 3) x = x.unsqueeze(1);
  const auto [low, high] = range;
  x = torch::nan_to_num(x.to(torch::kFloat), low, high, low).clamp(low, high);
  x = ((x - low) * (255.0 / (high - low)))
          .round()
          .to(torch::kUInt8)
          .permute({0, 2, 3, 1})
          .contiguous();
  detail::host_read_count.fetch_add(1, std::memory_order_relaxed);  // as hookforge::host_read
  return x.to(torch::kCPU);
}

/// `pixels` (uint8, contiguous [H, W, channels], channels 1 or 3, on the host) as PNG bytes.
inline std::string encode_png(std::string_view who, const torch::Tensor& pixels) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.height = static_cast<png_uint_32>(pixels.size(0));
  image.width = static_cast<png_uint_32>(pixels.size(1));
  image.format = pixels.size(2) == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  const void* data = pixels.data_ptr<std::uint8_t>();
  std::string bytes;
  if (png_image_write_to_memory(&image, nullptr, &size, /*convert_to_8bit=*/0, data,
                                /*row_stride=*/0, nullptr)) {
    bytes.resize(size);
    if (png_image_write_to_memory(&image, bytes.data(), &size, 0, data, 0, nullptr)) {
      bytes.resize(size);
      return bytes;
    }
  }
  const std::string message = image.message;
  png_image_free(&image);
  throw std::runtime_error(fmt::format("{}: libpng could not encode the image: {}", who, message));
}

}  // namespace hookforge::detail::hooks
