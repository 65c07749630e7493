// hookforge/images/image_limits.hpp — how large an image the readers take: a pixel budget
// checked against the header before any pixel is allocated.
//
//   hookforge::read_image("photo.png", nullptr, {.max_pixels = 40'000'000});
//
// A file's header may claim any size: a PNG of a hundred bytes can say 65536 x 65536, and a
// valid "decompression bomb" of a few hundred KB really is 16384 x 16384. Decoding such a
// file asks for gigabytes before a pixel is read, so the readers refuse it from the header,
// naming the file, the size it claims and the limit. The default is PIL's
// Image.MAX_IMAGE_PIXELS, the limit users of Python's image libraries already know.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "hookforge/images/image_error.hpp"

namespace hookforge {

/// PIL's Image.MAX_IMAGE_PIXELS: 89,478,485 pixels (a quarter GiB of 3-byte pixels), about
/// 9459 x 9459; photographs of 80 megapixels pass.
inline constexpr std::int64_t default_max_pixels = 89'478'485;

/// The longest side the readers take (libpng's user limit; JPEG's own is 65500).
inline constexpr std::int64_t max_image_side = 65536;

/// What one image may claim before the readers allocate anything for it.
struct image_limits {
  std::int64_t max_pixels = default_max_pixels;  ///< width x height, >= 1
};

namespace detail::images {

/// image_error unless a `width` x `height` image is within `limits` (and max_image_side).
inline void check_image_size(const std::filesystem::path& file, std::int64_t width,
                             std::int64_t height, const image_limits& limits) {
  const auto size = std::to_string(width) + " x " + std::to_string(height);
  if (width > max_image_side || height > max_image_side)
    throw image_error(
        file, "is " + size + " pixels, more than " + std::to_string(max_image_side) + " a side");
  if (width * height > limits.max_pixels)
    throw image_error(file, "is " + size + " pixels (" + std::to_string(width * height) +
                                "), more than max_pixels (" + std::to_string(limits.max_pixels) +
                                ")");
}

}  // namespace detail::images

}  // namespace hookforge
