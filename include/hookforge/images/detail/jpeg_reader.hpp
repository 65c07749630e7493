// hookforge/images/detail/jpeg_reader.hpp — JPEG files through libjpeg-turbo's TurboJPEG
// API: 8 bits per channel, gray files as gray, every other colour space as RGB. A warning
// (a truncated file, corrupt data) stops the decoding and is an error. The caller checks the
// header's size against its pixel budget before it allocates the pixels and decodes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <turbojpeg.h>

namespace hookforge::detail::images {

/// One TurboJPEG decompressor over a file's bytes. Each function returns false on an error,
/// whose text is message().
class jpeg_reader {
 public:
  jpeg_reader() : handle_(tjInitDecompress()) {}
  jpeg_reader(const jpeg_reader&) = delete;
  jpeg_reader& operator=(const jpeg_reader&) = delete;
  ~jpeg_reader() {
    if (handle_) tjDestroy(handle_);
  }

  /// Reads the header of `bytes`: width, height and channels (1 or 3).
  bool header(std::string_view bytes, int& width, int& height, int& channels) {
    if (!handle_) return fail("TurboJPEG could not allocate its state");
    int subsampling = 0, colorspace = 0;
    if (tjDecompressHeader3(handle_, data(bytes), size(bytes), &width, &height, &subsampling,
                            &colorspace) != 0)
      return fail(tjGetErrorStr2(handle_));
    channels = colorspace == TJCS_GRAY ? 1 : 3;
    return true;
  }

  /// Decodes `bytes` into `pixels` (height rows of width * channels bytes).
  bool decode(std::string_view bytes, int width, int height, int channels, std::uint8_t* pixels) {
    if (tjDecompress2(handle_, data(bytes), size(bytes), pixels, width, /*pitch=*/0, height,
                      channels == 1 ? TJPF_GRAY : TJPF_RGB,
                      TJFLAG_ACCURATEDCT | TJFLAG_STOPONWARNING) != 0)
      return fail(tjGetErrorStr2(handle_));
    return true;
  }

  const std::string& message() const noexcept { return message_; }

 private:
  static const unsigned char* data(std::string_view bytes) {
    return reinterpret_cast<const unsigned char*>(bytes.data());
  }
  static unsigned long size(std::string_view bytes) {
    return static_cast<unsigned long>(bytes.size());
  }
  bool fail(const char* text) {
    message_ = text ? text : "unknown error";
    return false;
  }

  tjhandle handle_;
  std::string message_;
};

}  // namespace hookforge::detail::images
