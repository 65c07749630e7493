// hookforge/images/image_file.hpp — PNG and JPEG files as tensors.
//
//   hookforge::image_info info = hookforge::read_image_info("photo.png");  // header only
//   torch::Tensor pixels = hookforge::read_image("photo.png");   // [C, H, W], as stored
//   torch::Tensor x = hookforge::to_unit_range(pixels, info.bit_depth);   // float32 in [0, 1]
//
// PNG is read with libpng, JPEG with libjpeg-turbo (TurboJPEG); the format is told by the
// file's first bytes, not its name. Channels are 1 (gray) or 3 (RGB): palette images become
// RGB, 1/2/4-bit gray becomes 8-bit, alpha is dropped. Samples are the file's values, with
// no gamma or colour-profile conversion; 8-bit files give uint8 tensors, 16-bit PNGs int32
// (0…65535; LibTorch 1.13 has no uint16). Every failure is an `image_error` whose message
// starts with the file's path and says what is wrong: missing, not a PNG or JPEG, truncated
// or corrupt (a JPEG decoder warning counts), larger than 65536 pixels a side.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "hookforge/images/detail/jpeg_reader.hpp"
#include "hookforge/images/detail/png_reader.hpp"

namespace hookforge {

/// A file that could not be read as an image; what() starts with its path.
class image_error : public std::runtime_error {
 public:
  image_error(std::filesystem::path file, const std::string& what)
      : std::runtime_error(file.string() + ": " + what), file_(std::move(file)) {}
  const std::filesystem::path& file() const noexcept { return file_; }

 private:
  std::filesystem::path file_;
};

/// An image file's layout, as read_image will return it.
struct image_info {
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::int64_t channels = 0;   ///< 1 (gray) or 3 (RGB)
  std::int64_t bit_depth = 0;  ///< 8 or 16 (PNG only)
};

namespace detail::images {

enum class image_format { png, jpeg, other };

/// The whole file, or an image_error naming it.
inline std::string file_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw image_error(file, "cannot be opened: " + std::string(std::strerror(errno)));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw image_error(file, "cannot be read: " + std::string(std::strerror(errno)));
  return bytes;
}

/// The format by the file's first bytes, or an image_error when it cannot be opened.
inline image_format format_of(const std::filesystem::path& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) throw image_error(file, "is a directory");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw image_error(file, "cannot be opened: " + std::string(std::strerror(errno)));
  std::array<unsigned char, 8> head{};
  in.read(reinterpret_cast<char*>(head.data()), head.size());
  const auto got = static_cast<std::size_t>(in.gcount());
  if (got == 8 && png_sig_cmp(head.data(), 0, 8) == 0) return image_format::png;
  if (got >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF) return image_format::jpeg;
  return image_format::other;
}

inline image_error not_an_image(const std::filesystem::path& file) {
  return image_error(file, "is not a PNG or JPEG file (its first bytes are neither signature)");
}

inline image_info png_info(const std::filesystem::path& file, png_reader& reader) {
  png_layout layout;
  if (!reader.open(file.c_str(), layout))
    throw image_error(file,
                      std::string("is not a readable PNG (libpng: ") + reader.message() + ")");
  return {layout.width, layout.height, layout.channels, layout.bit_depth};
}

inline torch::Tensor read_png(const std::filesystem::path& file, image_info& info) {
  png_reader reader;
  info = png_info(file, reader);
  const auto row_samples = info.width * info.channels;
  const auto dtype = info.bit_depth == 16 ? torch::kInt16 : torch::kUInt8;
  auto hwc = torch::empty({info.height, info.width, info.channels}, dtype);
  std::vector<png_bytep> rows(static_cast<std::size_t>(info.height));
  auto* base = static_cast<png_bytep>(hwc.data_ptr());
  const auto row_bytes = row_samples * (info.bit_depth / 8);
  for (std::size_t y = 0; y < rows.size(); ++y)
    rows[y] = base + static_cast<std::ptrdiff_t>(y) * row_bytes;
  if (!reader.read(rows.data()))
    throw image_error(file,
                      std::string("is truncated or corrupt (libpng: ") + reader.message() + ")");
  // 16-bit samples were read as int16 bit patterns: 0…65535 as int32.
  if (info.bit_depth == 16) hwc = hwc.to(torch::kInt32).bitwise_and(0xFFFF);
  return hwc.permute({2, 0, 1}).contiguous();
}

inline image_info jpeg_info(const std::filesystem::path& file, const std::string& bytes,
                            jpeg_reader& reader) {
  int width = 0, height = 0, channels = 0;
  if (!reader.header(bytes, width, height, channels))
    throw image_error(file, "is not a readable JPEG (libjpeg-turbo: " + reader.message() + ")");
  if (width > 65536 || height > 65536)
    throw image_error(file, "is " + std::to_string(width) + " x " + std::to_string(height) +
                                " pixels, more than 65536 a side");
  return {width, height, channels, 8};
}

inline torch::Tensor read_jpeg(const std::filesystem::path& file, image_info& info) {
  const std::string bytes = file_bytes(file);
  jpeg_reader reader;
  info = jpeg_info(file, bytes, reader);
  auto hwc = torch::empty({info.height, info.width, info.channels}, torch::kUInt8);
  if (!reader.decode(bytes, static_cast<int>(info.width), static_cast<int>(info.height),
                     static_cast<int>(info.channels), hwc.data_ptr<std::uint8_t>()))
    throw image_error(file, "is truncated or corrupt (libjpeg-turbo: " + reader.message() + ")");
  return hwc.permute({2, 0, 1}).contiguous();
}

}  // namespace detail::images

/// Whether `file`'s extension is one the image readers take: .png, .jpg, .jpeg, in any case.
inline bool is_image_file_name(const std::filesystem::path& file) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

/// The layout of `file` from its header, without decoding its pixels. image_error when it
/// is missing, not a PNG or JPEG, or its header is unreadable.
inline image_info read_image_info(const std::filesystem::path& file) {
  using namespace detail::images;
  switch (format_of(file)) {
    case image_format::png: {
      png_reader reader;
      return png_info(file, reader);
    }
    case image_format::jpeg: {
      jpeg_reader reader;
      return jpeg_info(file, file_bytes(file), reader);
    }
    case image_format::other:
      break;
  }
  throw not_an_image(file);
}

/// The pixels of `file`, [channels, height, width]: uint8 for 8-bit files, int32 (0…65535)
/// for 16-bit ones. Its layout goes to `*info` when given. image_error on any failure.
inline torch::Tensor read_image(const std::filesystem::path& file, image_info* info = nullptr) {
  using namespace detail::images;
  image_info layout;
  torch::Tensor pixels;
  switch (format_of(file)) {
    case image_format::png:
      pixels = read_png(file, layout);
      break;
    case image_format::jpeg:
      pixels = read_jpeg(file, layout);
      break;
    case image_format::other:
      throw not_an_image(file);
  }
  if (info) *info = layout;
  return pixels;
}

/// `pixels` of a `bit_depth`-bit image as float32 in [0, 1] (divided by 2^bit_depth - 1).
inline torch::Tensor to_unit_range(const torch::Tensor& pixels, std::int64_t bit_depth) {
  return pixels.to(torch::kFloat32) / static_cast<float>((std::int64_t{1} << bit_depth) - 1);
}

}  // namespace hookforge
