// hookforge/images/detail/png_reader.hpp — PNG files through libpng's classic API, 8 or 16
// bits per channel as stored, gray or RGB (palette and 1/2/4-bit gray expanded to 8 bits,
// alpha dropped, a tRNS chunk's transparency too), no gamma or colour conversion: the values
// are the file's. From a file or from bytes in memory (what a fuzzer hands over).
//
// What a file may make libpng allocate is bounded whatever its chunks claim: every ancillary
// chunk but tRNS is skipped unread (text, ICC profiles, EXIF: nothing here uses them, and a
// 45-byte file whose tEXt length says 2 GB made libpng allocate 2 GB), the chunks it keeps
// are capped, and libpng's own allocations go through an allocator that refuses any block
// larger than its largest buffer can be (a row of 65536 pixels of 8 bytes). The image itself
// is the caller's to allocate, once it has checked the header's size.
//
// libpng reports errors by longjmp. The functions that call into libpng keep only plain
// locals between their setjmp and any libpng call, and C++ objects live in their callers,
// so a longjmp skips no destructor.
#pragma once

#include <bit>
#include <cerrno>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <png.h>

namespace hookforge::detail::images {

/// What a PNG file holds, after the expansions above.
struct png_layout {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  int channels = 0;   ///< 1 (gray) or 3 (RGB)
  int bit_depth = 0;  ///< 8 or 16
};

/// One open PNG. Every function returns false on a libpng error, whose text is message().
class png_reader {
 public:
  /// The largest block libpng may allocate: its largest buffers are rows (65536 x 8 bytes)
  /// and the ancillary chunks it keeps (tRNS: 256 bytes).
  static constexpr std::size_t largest_block = std::size_t{1} << 20;

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
    return start(layout);
  }

  /// Reads `bytes` (kept by the caller until the reader is done) as a PNG file.
  bool open(std::string_view bytes, png_layout& layout) {
    bytes_ = bytes;
    return start(layout);
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
  bool start(png_layout& layout) {
    png_ = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, this, &png_reader::on_error,
                                    &png_reader::on_warning, nullptr, &png_reader::allocate,
                                    &png_reader::release);
    if (png_) info_ = png_create_info_struct(png_);
    if (!png_ || !info_) {
      std::snprintf(message_, sizeof message_, "libpng could not allocate its state");
      return false;
    }
    return read_header(layout);
  }

  bool read_header(png_layout& layout) {
    if (setjmp(png_jmpbuf(png_))) return false;
    png_set_read_fn(png_, this, &png_reader::read_bytes);
    limit_chunks();
    png_read_info(png_, info_);
    const int color = png_get_color_type(png_, info_);
    int depth = png_get_bit_depth(png_, info_);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png_);  // tRNS: an alpha
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png_);
    png_set_strip_alpha(png_);  // the file's alpha, or the palette's transparency
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

  /// Every ancillary chunk but tRNS is skipped without being read into memory; the sides
  /// are capped at 65536 (libpng's own cap is 1e6 x 1e6).
  void limit_chunks() {
    png_set_user_limits(png_, 1u << 16, 1u << 16);
    png_set_chunk_malloc_max(png_, largest_block);
    png_set_chunk_cache_max(png_, 16);
    png_set_keep_unknown_chunks(png_, PNG_HANDLE_CHUNK_NEVER, nullptr, 0);
    static const png_byte skipped[] =
        "bKGD\0cHRM\0eXIf\0gAMA\0hIST\0iCCP\0iTXt\0oFFs\0pCAL\0"
        "pHYs\0sBIT\0sCAL\0sPLT\0sRGB\0tEXt\0tIME\0zTXt";
    png_set_keep_unknown_chunks(png_, PNG_HANDLE_CHUNK_NEVER, skipped, 17);
  }

  static void read_bytes(png_structp png, png_bytep out, std::size_t count) {
    auto* self = static_cast<png_reader*>(png_get_io_ptr(png));
    if (self->file_) {
      if (std::fread(out, 1, count, self->file_) != count)
        png_error(png, "the file ends before its chunks do");
      return;
    }
    if (count > self->bytes_.size()) png_error(png, "the file ends before its chunks do");
    std::memcpy(out, self->bytes_.data(), count);
    self->bytes_.remove_prefix(count);
  }

  static png_voidp allocate(png_structp, png_alloc_size_t size) {
    return size <= largest_block ? std::malloc(size) : nullptr;  // libpng reports the null
  }
  static void release(png_structp, png_voidp block) { std::free(block); }

  static void on_error(png_structp png, png_const_charp text) {
    auto* self = static_cast<png_reader*>(png_get_error_ptr(png));
    std::snprintf(self->message_, sizeof self->message_, "%s", text);
    png_longjmp(png, 1);
  }
  static void on_warning(png_structp, png_const_charp) {}  // e.g. a skipped chunk: not an error

  std::FILE* file_ = nullptr;
  std::string_view bytes_;  ///< what is left to read, when reading from memory
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
  char message_[256] = {};
};

}  // namespace hookforge::detail::images
