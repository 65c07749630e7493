// Small image files written by the tests themselves: PNG through libpng's simplified API,
// JPEG through TurboJPEG, from [C, H, W] tensors; and the message of an image_error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>

#include <png.h>
#include <torch/torch.h>
#include <turbojpeg.h>

#include "../torch/file_testing.hpp"
#include "hookforge/images/image_error.hpp"

namespace tfx {

/// The message of the hookforge::image_error `fn` throws.
template <class F>
std::string image_error_of(F&& fn) {
  return error_of<hookforge::image_error>(std::forward<F>(fn));
}

/// `pixels` ([1 or 3, H, W]; uint8, or int32 in 0…65535 written as 16-bit) as a PNG file.
inline void write_png(const std::filesystem::path& file, const torch::Tensor& pixels) {
  const bool wide = pixels.scalar_type() != torch::kUInt8;
  auto hwc = pixels.permute({1, 2, 0}).contiguous();
  if (wide) hwc = hwc.to(torch::kInt32).to(torch::kInt16).contiguous();  // bit patterns
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.height = static_cast<png_uint_32>(pixels.size(1));
  image.width = static_cast<png_uint_32>(pixels.size(2));
  image.format = (pixels.size(0) == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB) |
                 (wide ? PNG_FORMAT_FLAG_LINEAR : 0u);
  if (!png_image_write_to_file(&image, file.c_str(), 0, hwc.data_ptr(), 0, nullptr))
    throw std::runtime_error(std::string("write_png: ") + image.message);
}

/// `pixels` ([1 or 3, H, W], uint8) as a JPEG file of `quality`.
inline void write_jpeg(const std::filesystem::path& file, const torch::Tensor& pixels,
                       int quality = 100) {
  auto hwc = pixels.permute({1, 2, 0}).contiguous();
  tjhandle handle = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  const bool gray = pixels.size(0) == 1;
  const int rc = tjCompress2(handle, hwc.data_ptr<std::uint8_t>(), static_cast<int>(pixels.size(2)),
                             0, static_cast<int>(pixels.size(1)), gray ? TJPF_GRAY : TJPF_RGB, &out,
                             &size, gray ? TJSAMP_GRAY : TJSAMP_444, quality, 0);
  if (rc != 0) throw std::runtime_error(std::string("write_jpeg: ") + tjGetErrorStr2(handle));
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(out), static_cast<std::streamsize>(size));
  tjFree(out);
  tjDestroy(handle);
}

/// Deterministic 8-bit pixels, [channels, h, w], with detail at every scale.
inline torch::Tensor test_pixels(std::int64_t channels, std::int64_t h, std::int64_t w,
                                 std::int64_t salt = 0) {
  auto i = torch::arange(channels * h * w, torch::kInt64).reshape({channels, h, w});
  return ((i * 37 + salt * 101) % 251).to(torch::kUInt8);
}

/// The first `keep` bytes of `file` written to `to`.
inline void write_truncated(const std::filesystem::path& file, const std::filesystem::path& to,
                            std::size_t keep) {
  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(to, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(keep));
}

}  // namespace tfx
