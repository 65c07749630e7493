// hookforge/torch/io/checkpoint_format.hpp — the on-disk layout of a checkpoint file
// (version 2): a 36-byte header, then the payload, a torch::serialize archive (a zip).
//
//   offset  size  field
//        0    16  magic "hookforge-ckpt\r\n"
//       16     4  format version, little-endian (2)
//       20     8  payload size in bytes, little-endian
//       28     4  CRC-32 of the payload, little-endian
//       32     4  CRC-32 of bytes 0..31 (the header itself)
//       36     …  payload
//
// The header checksum makes a flipped header byte an error of its own; the payload
// checksum catches every flipped or lost byte of the archive (LibTorch does not check
// the zip's own CRCs on load). Version 1 files are the bare archive (they start with
// the zip signature "PK\3\4") and carry no checksum.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "hookforge/torch/io/crc32.hpp"

namespace hookforge::detail::ckpt {

inline constexpr std::string_view format_name = "hookforge-checkpoint";  // in the archive
inline constexpr std::uint32_t format_version = 2;
inline constexpr std::string_view magic{"hookforge-ckpt\r\n", 16};
inline constexpr std::string_view zip_signature{"PK\x03\x04", 4};  // a version 1 file
inline constexpr std::size_t header_size = 36;

using header_bytes = std::array<unsigned char, header_size>;

struct file_header {
  std::uint32_t version = format_version;
  std::uint64_t payload_size = 0;
  std::uint32_t payload_crc = 0;
};

inline void put_le(unsigned char* out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(value >> (8 * i));
}

inline std::uint64_t get_le(const unsigned char* in, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= std::uint64_t{in[i]} << (8 * i);
  return value;
}

inline header_bytes encode(const file_header& h) {
  header_bytes out{};
  std::memcpy(out.data(), magic.data(), magic.size());
  put_le(&out[16], h.version, 4);
  put_le(&out[20], h.payload_size, 8);
  put_le(&out[28], h.payload_crc, 4);
  put_le(&out[32], crc32(0, out.data(), 32), 4);
  return out;
}

// Decodes a header whose magic matched; nullopt when its own checksum does not match.
inline std::optional<file_header> decode(const header_bytes& in) {
  if (get_le(&in[32], 4) != crc32(0, in.data(), 32)) return std::nullopt;
  return file_header{static_cast<std::uint32_t>(get_le(&in[16], 4)), get_le(&in[20], 8),
                     static_cast<std::uint32_t>(get_le(&in[28], 4))};
}

inline std::string hex(std::uint32_t value) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out = "0x00000000";
  for (int i = 0; i < 8; ++i) out[9 - i] = digits[(value >> (4 * i)) & 0xFu];
  return out;
}

}  // namespace hookforge::detail::ckpt
