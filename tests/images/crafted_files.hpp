// Image files no ordinary writer makes, written by the limit tests: PNGs of every colour
// type and bit depth with and without tRNS (libpng's classic API), PNGs built chunk by chunk
// (headers that lie), large blank images, and the process's peak memory around a call.
#pragma once

#include <array>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <png.h>
#include <torch/torch.h>

namespace tfx {

/// A PNG's colour type, bit depth and whether it has a tRNS chunk.
struct png_kind {
  int color_type;
  int bit_depth;
  bool trns;
};

namespace detail {

/// libpng's writer over `file`: `rows` of packed samples, `palette` and `trns` when given.
inline void write_png_rows(const std::filesystem::path& file, int width, int height, png_kind kind,
                           std::vector<std::vector<png_byte>>& rows,
                           const std::vector<png_color>& palette,
                           const std::vector<png_byte>& palette_alpha, png_color_16 trans) {
  std::FILE* out = std::fopen(file.c_str(), "wb");
  if (!out) throw std::runtime_error("write_png_rows: cannot open " + file.string());
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  std::vector<png_bytep> pointers;
  for (auto& row : rows) pointers.push_back(row.data());
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(out);
    throw std::runtime_error("write_png_rows: libpng failed");
  }
  png_init_io(png, out);
  png_set_IHDR(png, info, width, height, kind.bit_depth, kind.color_type, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (!palette.empty()) png_set_PLTE(png, info, palette.data(), static_cast<int>(palette.size()));
  if (kind.trns)
    png_set_tRNS(png, info, palette_alpha.empty() ? nullptr : palette_alpha.data(),
                 static_cast<int>(palette_alpha.size()), palette_alpha.empty() ? &trans : nullptr);
  png_write_info(png, info);
  png_write_image(png, pointers.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  std::fclose(out);
}

/// Appends `value` of `depth` bits to `row` at sample `index` (big-endian, packed MSB first).
inline void put_sample(std::vector<png_byte>& row, std::size_t index, int depth, int value) {
  if (depth == 16) {
    row[2 * index] = static_cast<png_byte>(value >> 8);
    row[2 * index + 1] = static_cast<png_byte>(value & 0xFF);
  } else if (depth == 8) {
    row[index] = static_cast<png_byte>(value);
  } else {
    const auto bit = index * static_cast<std::size_t>(depth);
    row[bit / 8] |= static_cast<png_byte>(value << (8 - depth - static_cast<int>(bit % 8)));
  }
}

}  // namespace detail

/// Writes a 5 x 3 PNG of `kind` to `file` and returns what read_image must give for it:
/// [1 or 3, 3, 5], the colour without any alpha, 1/2/4-bit gray scaled to 8 bits, int32
/// for 16-bit files, else uint8.
inline torch::Tensor write_png_kind(const std::filesystem::path& file, png_kind kind) {
  constexpr int width = 5, height = 3;
  const int c = kind.color_type;
  const bool palette = c == PNG_COLOR_TYPE_PALETTE;
  const bool alpha = (c & PNG_COLOR_MASK_ALPHA) != 0;
  const int colour = (c & PNG_COLOR_MASK_COLOR) && !palette ? 3 : 1;  // samples, alpha aside
  const int levels = 1 << kind.bit_depth;
  const std::vector<png_color> colours = {{10, 20, 30}, {40, 50, 60}, {70, 80, 90}, {200, 100, 0}};
  const std::vector<png_byte> alphas = {0, 128, 255, 60};
  const int entries = std::min(levels, 4);
  auto expected = torch::zeros({palette ? 3 : colour, height, width}, torch::kInt32);
  std::vector<std::vector<png_byte>> rows(height);
  const int per_pixel = colour + (alpha ? 1 : 0);
  for (int y = 0; y < height; ++y) {
    rows[y].assign(static_cast<std::size_t>(width * per_pixel * 2 + 1), 0);
    for (int x = 0; x < width; ++x) {
      const int i = y * width + x;
      if (palette) {
        const int index = i % entries;
        detail::put_sample(rows[y], x, kind.bit_depth, index);
        const auto& e = colours[index];
        expected[0][y][x] = e.red, expected[1][y][x] = e.green, expected[2][y][x] = e.blue;
        continue;
      }
      for (int s = 0; s < colour; ++s) {
        const int v = (i * 37 + s * 11) % levels;
        detail::put_sample(rows[y], static_cast<std::size_t>(x * per_pixel + s), kind.bit_depth, v);
        expected[s][y][x] = kind.bit_depth < 8 ? v * 255 / (levels - 1) : v;
      }
      if (alpha)
        detail::put_sample(rows[y], static_cast<std::size_t>(x * per_pixel + colour),
                           kind.bit_depth, (i * 5) % levels);
    }
  }
  png_color_16 trans{};
  trans.gray = trans.red = trans.green = trans.blue = static_cast<png_uint_16>(37 % levels);
  detail::write_png_rows(
      file, width, height, kind, rows,
      palette ? std::vector<png_color>(colours.begin(), colours.begin() + entries)
              : std::vector<png_color>{},
      palette && kind.trns ? std::vector<png_byte>(alphas.begin(), alphas.begin() + entries)
                           : std::vector<png_byte>{},
      trans);
  return kind.bit_depth == 16 ? expected : expected.to(torch::kUInt8);
}

/// A `width` x `height` 8-bit gray PNG of zeros: a few hundred KB for 10000 x 10000.
inline void write_blank_png(const std::filesystem::path& file, int width, int height) {
  std::vector<std::vector<png_byte>> rows(static_cast<std::size_t>(height),
                                          std::vector<png_byte>(static_cast<std::size_t>(width)));
  detail::write_png_rows(file, width, height, {PNG_COLOR_TYPE_GRAY, 8, false}, rows, {}, {}, {});
}

/// PNG's CRC-32 of `bytes`.
inline std::uint32_t crc32(const std::string& bytes) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char b : bytes) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return crc ^ 0xFFFFFFFFu;
}

inline std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

/// One PNG chunk: length, type, data, CRC.
inline std::string png_chunk(const std::string& type, const std::string& data) {
  return be32(static_cast<std::uint32_t>(data.size())) + type + data + be32(crc32(type + data));
}

inline const std::string png_signature = "\x89PNG\r\n\x1a\n";

/// An IHDR chunk: `width` x `height`, 8-bit, of `color_type`.
inline std::string ihdr(std::uint32_t width, std::uint32_t height, int color_type) {
  const std::string depth_and_type = {static_cast<char>(8), static_cast<char>(color_type)};
  return png_chunk("IHDR", be32(width) + be32(height) + depth_and_type + std::string(3, '\0'));
}

/// The JPEG in `file` with its frame header's size set to `width` x `height`.
inline void set_jpeg_size(const std::filesystem::path& file, std::uint16_t width,
                          std::uint16_t height) {
  std::fstream io(file, std::ios::in | std::ios::out | std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(io)), std::istreambuf_iterator<char>());
  const auto sof = bytes.find("\xFF\xC0");
  if (sof == std::string::npos) throw std::runtime_error("set_jpeg_size: no SOF0 marker");
  const std::array<char, 4> size = {static_cast<char>(height >> 8), static_cast<char>(height),
                                    static_cast<char>(width >> 8), static_cast<char>(width)};
  io.seekp(static_cast<std::streamoff>(sof + 5));
  io.write(size.data(), size.size());
}

/// The most this process's resident memory rose above its level before `f()` while `f` ran,
/// in bytes (Linux: /proc/self/clear_refs resets the peak); -1 where it cannot be measured.
template <class F>
std::int64_t peak_memory_rise(F&& f) {
  auto field = [](const char* name) -> std::int64_t {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
      if (line.rfind(name, 0) == 0) return std::stoll(line.substr(std::string(name).size())) * 1024;
    return -1;
  };
  {
    std::ofstream reset("/proc/self/clear_refs");
    reset << "5";
    if (!reset.flush()) return -1;
  }
  const auto before = field("VmRSS:");
  f();
  const auto peak = field("VmHWM:");
  return before < 0 || peak < 0 ? -1 : peak - before;
}

}  // namespace tfx
