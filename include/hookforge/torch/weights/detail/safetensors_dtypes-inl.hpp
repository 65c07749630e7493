// hookforge/torch/weights/detail/safetensors_dtypes-inl.hpp — the safetensors format's
// dtypes, limits and message helpers, for the reader and writer (safetensors-inl.hpp), which
// include it.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "hookforge/torch/compat.hpp"
#include "hookforge/torch/io/checkpoint_error.hpp"

namespace hookforge::detail::safetensors {

using json = nlohmann::json;

// The Rust library's MAX_HEADER_SIZE; a longer header is refused before it is read.
inline constexpr std::uint64_t max_header_bytes = 100'000'000;
// The format's nesting: the header object, a tensor's entry (or __metadata__), the entry's
// shape and data_offsets arrays. Deeper JSON is refused while it is parsed.
inline constexpr int max_json_depth = 3;
inline constexpr std::string_view metadata_key = "__metadata__";

// The types not every supported LibTorch has (compat.hpp): Undefined where the one in use
// lacks them, so that a file holding them is refused by the dtype's name.
#if HOOKFORGE_HAS_UNSIGNED_DTYPES  // 2.3, after the float8 types (2.1, the fnuz ones 2.2)
inline constexpr auto u16_type = c10::ScalarType::UInt16, u32_type = c10::ScalarType::UInt32,
                      u64_type = c10::ScalarType::UInt64,
                      f8_e5m2_type = c10::ScalarType::Float8_e5m2,
                      f8_e4m3_type = c10::ScalarType::Float8_e4m3fn,
                      f8_e5m2fnuz_type = c10::ScalarType::Float8_e5m2fnuz,
                      f8_e4m3fnuz_type = c10::ScalarType::Float8_e4m3fnuz;
#else
inline constexpr auto u16_type = c10::ScalarType::Undefined, u32_type = u16_type,
                      u64_type = u16_type, f8_e5m2_type = u16_type, f8_e4m3_type = u16_type,
                      f8_e5m2fnuz_type = u16_type, f8_e4m3fnuz_type = u16_type;
#endif
#if HOOKFORGE_HAS_MICROSCALING_DTYPES
inline constexpr auto f8_e8m0_type = c10::ScalarType::Float8_e8m0fnu,
                      f4_type = c10::ScalarType::Float4_e2m1fn_x2;
#else
inline constexpr auto f8_e8m0_type = c10::ScalarType::Undefined, f4_type = f8_e8m0_type;
#endif

// A dtype of the format: its name, its width in bits and the LibTorch type it is read as.
struct dtype_info {
  std::string_view name;
  std::uint64_t bits;
  c10::ScalarType type;  // Undefined: the LibTorch in use has none (F6_*: no LibTorch has)
};

// Every dtype of the Rust library's `Dtype`, in its order. F4 packs two elements to a byte;
// LibTorch's Float4_e2m1fn_x2 counts the pairs, so its last dimension is half the file's.
inline constexpr std::array<dtype_info, 22> dtypes{{
    {"BOOL", 8, c10::ScalarType::Bool},
    {"F4", 4, f4_type},
    {"F6_E2M3", 6, c10::ScalarType::Undefined},
    {"F6_E3M2", 6, c10::ScalarType::Undefined},
    {"U8", 8, c10::ScalarType::Byte},
    {"I8", 8, c10::ScalarType::Char},
    {"F8_E5M2", 8, f8_e5m2_type},
    {"F8_E4M3", 8, f8_e4m3_type},
    {"F8_E8M0", 8, f8_e8m0_type},
    {"F8_E4M3FNUZ", 8, f8_e4m3fnuz_type},
    {"F8_E5M2FNUZ", 8, f8_e5m2fnuz_type},
    {"I16", 16, c10::ScalarType::Short},
    {"U16", 16, u16_type},
    {"F16", 16, c10::ScalarType::Half},
    {"BF16", 16, c10::ScalarType::BFloat16},
    {"I32", 32, c10::ScalarType::Int},
    {"U32", 32, u32_type},
    {"F32", 32, c10::ScalarType::Float},
    {"C64", 64, c10::ScalarType::ComplexFloat},
    {"F64", 64, c10::ScalarType::Double},
    {"I64", 64, c10::ScalarType::Long},
    {"U64", 64, u64_type},
}};

// A tensor's entry of the header, validated.
struct entry {
  std::string name;
  const dtype_info* dtype = nullptr;
  std::vector<std::uint64_t> shape;  // as the file has it (F4: elements)
  std::vector<std::int64_t> sizes;   // as LibTorch has it (F4: pairs)
  std::uint64_t begin = 0, end = 0;  // within the data
};

// "'<file>': <what>", the shape of every message here.
HOOKFORGE_INLINE std::string message(const std::filesystem::path& file, const std::string& what) {
  return "'" + file.string() + "': " + what;
}

[[noreturn]] HOOKFORGE_INLINE void fail(const std::filesystem::path& file,
                                        const std::string& what) {
  throw checkpoint_error(message(file, what));
}

[[noreturn]] HOOKFORGE_INLINE void refuse(const std::filesystem::path& file,
                                          const std::string& what) {
  throw std::invalid_argument(message(file, what));
}

// The file's data are little-endian, and are copied as they are: a big-endian host would
// have to swap every element, which nothing here does.
HOOKFORGE_INLINE void check_little_endian(const std::filesystem::path& file) {
  if constexpr (std::endian::native != std::endian::little)
    fail(file, "safetensors data are little-endian, and this big-endian host cannot use them");
}

HOOKFORGE_INLINE std::uint64_t load_le64(const unsigned char* bytes) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = value << 8 | bytes[i];
  return value;
}

HOOKFORGE_INLINE std::array<unsigned char, 8> store_le64(std::uint64_t value) {
  std::array<unsigned char, 8> bytes{};
  for (auto& byte : bytes) {
    byte = static_cast<unsigned char>(value & 0xff);
    value >>= 8;
  }
  return bytes;
}

// A JSON value for a message, cut short: the header may hold anything.
HOOKFORGE_INLINE std::string excerpt(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// `text` with bytes outside printable ASCII as \xHH: nlohmann's parse errors quote the
// header's bytes as they are, invalid UTF-8 included.
HOOKFORGE_INLINE std::string printable(std::string_view text) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += digits[byte >> 4];
      out += digits[byte & 0xf];
    }
  }
  return out;
}

HOOKFORGE_INLINE std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::vector<std::string> dims;
  for (const auto dim : shape) dims.push_back(std::to_string(dim));
  return "[" + join_names(dims, ", ") + "]";
}

HOOKFORGE_INLINE std::string range_text(std::uint64_t begin, std::uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

HOOKFORGE_INLINE const dtype_info* find_dtype(std::string_view name) {
  for (const auto& d : dtypes)
    if (d.name == name) return &d;
  return nullptr;
}

}  // namespace hookforge::detail::safetensors
