// hookforge/images/detail/png_reader.hpp — PNG files through libpng's classic API, 8 or 16
// bits per channel as stored, gray or RGB (palette and 1/2/4-bit gray expanded to 8 bits,
// alpha dropped), no gamma or colour conversion: the values are the file's.
//
// libpng reports errors by longjmp. The functions that call into libpng keep only plain
// locals between their setjmp and any libpng call, and C++ objects live in their callers,
// so a longjmp skips no destructor.
#pragma once

#include <bit>
#include <cerrno>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include <png.h>

namespace hookforge::detail::images {

/// What a PNG file holds, after the expansions above.
struct png_layout {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  int channels = 0;   ///< 1 (gray) or 3 (RGB)
  int bit_depth = 0;  ///< 8 or 16
};

/// One open PNG file. Every function returns false on a libpng error, whose text is message().
class png_reader {
 public:
  png_reader() = default;
  png_reader(const png_reader&) = delete;
  png_reader& operator=(const png_reader&) = delete;
  ~png_reader() {
    if (png_) png_destroy_read_struct(&png_, info_ ? &info_ : nullptr, nullptr);
    if (file_) std::fclose(file_);
  }

  /// Opens `path` (its signature already checked) and reads its header and transforms.
  bool open(const char* path, png_layout& layout) {
    file_ = std::fopen(path, "rb");
    if (!file_) {
      std::snprintf(message_, sizeof message_, "%s", std::strerror(errno));
      return false;
    }
    png_ = png_create_read_struct(PNG_LIBPNG_VER_STRING, this, &png_reader::on_error,
                                  &png_reader::on_warning);
    if (png_) info_ = png_create_info_struct(png_);
    if (!png_ || !info_) {
      std::snprintf(message_, sizeof message_, "libpng could not allocate its state");
      return false;
    }
    return read_header(layout);
  }

  /// Reads the pixels into `rows[0..height)`, each `width * channels` samples of
  /// bit_depth / 8 bytes, 16-bit samples in this machine's byte order.
  bool read(png_bytep* rows) {
    if (setjmp(png_jmpbuf(png_))) return false;
    png_read_image(png_, rows);
    png_read_end(png_, nullptr);
    return true;
  }

  const char* message() const noexcept { return message_; }

 private:
  bool read_header(png_layout& layout) {
    if (setjmp(png_jmpbuf(png_))) return false;
    png_init_io(png_, file_);
    png_set_user_limits(png_, 1u << 16, 1u << 16);  // libpng's own cap is 1e6 x 1e6
    png_read_info(png_, info_);
    const int color = png_get_color_type(png_, info_);
    int depth = png_get_bit_depth(png_, info_);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png_);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png_);
    if (color & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png_);
    if constexpr (std::endian::native == std::endian::little)
      if (depth == 16) png_set_swap(png_);  // PNG stores big-endian samples
    png_read_update_info(png_, info_);
    depth = png_get_bit_depth(png_, info_);
    layout.width = png_get_image_width(png_, info_);
    layout.height = png_get_image_height(png_, info_);
    layout.channels = png_get_channels(png_, info_);
    layout.bit_depth = depth;
    return true;
  }

  static void on_error(png_structp png, png_const_charp text) {
    auto* self = static_cast<png_reader*>(png_get_error_ptr(png));
    std::snprintf(self->message_, sizeof self->message_, "%s", text);
    png_longjmp(png, 1);
  }
  static void on_warning(png_structp, png_const_charp) {}  // e.g. an unknown chunk: not an error

  std::FILE* file_ = nullptr;
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
  char message_[256] = {};
};

}  // namespace hookforge::detail::images
