// hookforge/images/image_file.hpp — PNG and JPEG files as tensors.
//
//   hookforge::image_info info = hookforge::read_image_info("photo.png");  // header only
//   torch::Tensor pixels = hookforge::read_image("photo.png");   // [C, H, W], as stored
//   torch::Tensor x = hookforge::to_unit_range(pixels, info.bit_depth);   // float32 in [0, 1]
//   torch::Tensor y = hookforge::decode_image(bytes, "upload.png", nullptr, {.max_pixels = n});
//
// PNG is read with libpng, JPEG with libjpeg-turbo (TurboJPEG); the format is told by the
// file's first bytes, not its name. Channels are 1 (gray) or 3 (RGB): palette images become
// RGB, 1/2/4-bit gray becomes 8-bit, alpha is dropped. Samples are the file's values, with
// no gamma or colour-profile conversion; 8-bit files give uint8 tensors, 16-bit PNGs int32
// (0…65535; LibTorch 1.13 has no uint16). Every failure is an `image_error` whose message
// starts with the file's path and says what is wrong: missing, not a PNG or JPEG, truncated
// or corrupt (a JPEG decoder warning counts), larger than 65536 pixels a side or than the
// pixel budget (image_limits.hpp: checked from the header, before the pixels are allocated).
// Memory that still runs out while a file is decoded is hookforge::out_of_memory naming it.
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
#include <string_view>
#include <system_error>
#include <vector>

#include <torch/types.h>

#include "hookforge/images/detail/jpeg_reader.hpp"
#include "hookforge/images/detail/png_reader.hpp"
#include "hookforge/images/image_error.hpp"
#include "hookforge/images/image_limits.hpp"

namespace hookforge {

/// An image file's layout, as read_image will return it.
struct image_info {
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::int64_t channels = 0;   ///< 1 (gray) or 3 (RGB)
  std::int64_t bit_depth = 0;  ///< 8 or 16 (PNG only)
};

namespace detail::images {

/// "W x H": a size as every message gives it, width first.
inline std::string size_text(const image_info& info) {
  return std::to_string(info.width) + " x " + std::to_string(info.height);
}

enum class image_format { png, jpeg, other };

/// The whole file, or an image_error naming it.
inline std::string file_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw image_error(file, "cannot be opened: " + std::string(std::strerror(errno)));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw image_error(file, "cannot be read: " + std::string(std::strerror(errno)));
  return bytes;
}

/// The format told by a file's first bytes.
inline image_format format_of(std::string_view head) {
  const auto* b = reinterpret_cast<const unsigned char*>(head.data());
  if (head.size() >= 8 && png_sig_cmp(b, 0, 8) == 0) return image_format::png;
  if (head.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return image_format::jpeg;
  return image_format::other;
}

/// The format of `file` by its first bytes, or an image_error when it cannot be opened.
inline image_format format_of(const std::filesystem::path& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) throw image_error(file, "is a directory");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw image_error(file, "cannot be opened: " + std::string(std::strerror(errno)));
  std::array<char, 8> head{};
  in.read(head.data(), head.size());
  return format_of(std::string_view(head.data(), static_cast<std::size_t>(in.gcount())));
}

inline image_error not_an_image(const std::filesystem::path& file) {
  return image_error(file, "is not a PNG or JPEG file (its first bytes are neither signature)");
}

/// `source` (a path's c_str(), or the file's bytes) opened as a PNG named `file`.
template <class Source>
image_info png_info(const std::filesystem::path& file, Source source, png_reader& reader) {
  png_layout layout;
  if (!reader.open(source, layout))
    throw image_error(file,
                      std::string("is not a readable PNG (libpng: ") + reader.message() + ")");
  return {layout.width, layout.height, layout.channels, layout.bit_depth};
}

/// The [H, W, C] tensor `file`'s pixels are decoded into, once its size is within `limits`.
inline torch::Tensor pixels_for(const std::filesystem::path& file, const image_info& info,
                                const image_limits& limits, torch::ScalarType dtype) {
  check_image_size(file, info.width, info.height, limits);
  return naming_file(file, "allocating its " + size_text(info) + " pixels",
                     [&] { return torch::empty({info.height, info.width, info.channels}, dtype); });
}

template <class Source>
torch::Tensor read_png(const std::filesystem::path& file, Source source, image_info& info,
                       const image_limits& limits) {
  png_reader reader;
  info = png_info(file, source, reader);
  auto hwc = pixels_for(file, info, limits, info.bit_depth == 16 ? torch::kInt16 : torch::kUInt8);
  std::vector<png_bytep> rows(static_cast<std::size_t>(info.height));
  auto* base = static_cast<png_bytep>(hwc.data_ptr());
  const auto row_bytes = info.width * info.channels * (info.bit_depth / 8);
  for (std::size_t y = 0; y < rows.size(); ++y)
    rows[y] = base + static_cast<std::ptrdiff_t>(y) * row_bytes;
  if (!reader.read(rows.data()))
    throw image_error(file,
                      std::string("is truncated or corrupt (libpng: ") + reader.message() + ")");
  return naming_file(file, "decoding its " + size_text(info) + " pixels", [&] {
    // 16-bit samples were read as int16 bit patterns: 0…65535 as int32.
    if (info.bit_depth == 16) hwc = hwc.to(torch::kInt32).bitwise_and(0xFFFF);
    return hwc.permute({2, 0, 1}).contiguous();
  });
}

inline image_info jpeg_info(const std::filesystem::path& file, std::string_view bytes,
                            jpeg_reader& reader) {
  int width = 0, height = 0, channels = 0;
  if (!reader.header(bytes, width, height, channels))
    throw image_error(file, "is not a readable JPEG (libjpeg-turbo: " + reader.message() + ")");
  return {width, height, channels, 8};
}

inline torch::Tensor read_jpeg(const std::filesystem::path& file, std::string_view bytes,
                               image_info& info, const image_limits& limits) {
  jpeg_reader reader;
  info = jpeg_info(file, bytes, reader);
  auto hwc = pixels_for(file, info, limits, torch::kUInt8);
  if (!reader.decode(bytes, static_cast<int>(info.width), static_cast<int>(info.height),
                     static_cast<int>(info.channels), hwc.data_ptr<std::uint8_t>()))
    throw image_error(file, "is truncated or corrupt (libjpeg-turbo: " + reader.message() + ")");
  return naming_file(file, "decoding its " + size_text(info) + " pixels",
                     [&] { return hwc.permute({2, 0, 1}).contiguous(); });
}

}  // namespace detail::images

/// Whether `file`'s extension is one the image readers take: .png, .jpg, .jpeg, in any case.
inline bool is_image_file_name(const std::filesystem::path& file) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

/// The layout of `file` from its header, without decoding its pixels (nor checking it
/// against a pixel budget). image_error when it is missing, not a PNG or JPEG, or its
/// header is unreadable.
inline image_info read_image_info(const std::filesystem::path& file) {
  using namespace detail::images;
  switch (format_of(file)) {
    case image_format::png: {
      png_reader reader;
      return png_info(file, file.c_str(), reader);
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
/// for 16-bit ones. Its layout goes to `*info` when given. image_error on any failure, and
/// for an image larger than `limits` before anything is allocated for it.
inline torch::Tensor read_image(const std::filesystem::path& file, image_info* info = nullptr,
                                const image_limits& limits = {}) {
  using namespace detail::images;
  image_info layout;
  torch::Tensor pixels;
  switch (format_of(file)) {
    case image_format::png:
      pixels = read_png(file, file.c_str(), layout, limits);
      break;
    case image_format::jpeg:
      pixels = read_jpeg(file, file_bytes(file), layout, limits);
      break;
    case image_format::other:
      throw not_an_image(file);
  }
  if (info) *info = layout;
  return pixels;
}

/// read_image of a file's bytes already in memory (a fuzzer's input, an upload), named
/// `name` in its errors.
inline torch::Tensor decode_image(std::string_view bytes, const std::filesystem::path& name,
                                  image_info* info = nullptr, const image_limits& limits = {}) {
  using namespace detail::images;
  image_info layout;
  torch::Tensor pixels;
  switch (format_of(bytes)) {
    case image_format::png:
      pixels = read_png(name, bytes, layout, limits);
      break;
    case image_format::jpeg:
      pixels = read_jpeg(name, bytes, layout, limits);
      break;
    case image_format::other:
      throw not_an_image(name);
  }
  if (info) *info = layout;
  return pixels;
}

/// `pixels` of a `bit_depth`-bit image as float32 in [0, 1] (divided by 2^bit_depth - 1).
inline torch::Tensor to_unit_range(const torch::Tensor& pixels, std::int64_t bit_depth) {
  return pixels.to(torch::kFloat32) / static_cast<float>((std::int64_t{1} << bit_depth) - 1);
}

}  // namespace hookforge
