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

#include "hookforge/core/build_mode.hpp"
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

// Little-endian integers of `bytes` bytes.
HOOKFORGE_INLINE void put_le(unsigned char* out, std::uint64_t value, int bytes);
HOOKFORGE_INLINE std::uint64_t get_le(const unsigned char* in, int bytes);

// The header's bytes, its own checksum included.
HOOKFORGE_INLINE header_bytes encode(const file_header& h);

// Decodes a header whose magic matched; nullopt when its own checksum does not match.
HOOKFORGE_INLINE std::optional<file_header> decode(const header_bytes& in);

// "0x0000abcd".
HOOKFORGE_INLINE std::string hex(std::uint32_t value);

}  // namespace hookforge::detail::ckpt

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/checkpoint_format-inl.hpp"
#endif
