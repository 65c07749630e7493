// hookforge/torch/io/checkpoint_format-inl.hpp — the header codec's definitions: included
// by checkpoint_format.hpp header-only, compiled into hookforge::torch_compiled otherwise.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "hookforge/torch/io/checkpoint_format.hpp"
#include "hookforge/torch/io/crc32.hpp"

namespace hookforge::detail::ckpt {

HOOKFORGE_INLINE void put_le(unsigned char* out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(value >> (8 * i));
}

HOOKFORGE_INLINE std::uint64_t get_le(const unsigned char* in, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= std::uint64_t{in[i]} << (8 * i);
  return value;
}

HOOKFORGE_INLINE header_bytes encode(const file_header& h) {
  header_bytes out{};
  std::memcpy(out.data(), magic.data(), magic.size());
  put_le(&out[16], h.version, 4);
  put_le(&out[20], h.payload_size, 8);
  put_le(&out[28], h.payload_crc, 4);
  put_le(&out[32], crc32(0, out.data(), 32), 4);
  return out;
}

HOOKFORGE_INLINE std::optional<file_header> decode(const header_bytes& in) {
  if (get_le(&in[32], 4) != crc32(0, in.data(), 32)) return std::nullopt;
  return file_header{static_cast<std::uint32_t>(get_le(&in[16], 4)), get_le(&in[20], 8),
                     static_cast<std::uint32_t>(get_le(&in[28], 4))};
}

HOOKFORGE_INLINE std::string hex(std::uint32_t value) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out = "0x00000000";
  for (int i = 0; i < 8; ++i) out[9 - i] = digits[(value >> (4 * i)) & 0xFu];
  return out;
}

}  // namespace hookforge::detail::ckpt
