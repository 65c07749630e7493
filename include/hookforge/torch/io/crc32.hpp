// hookforge/torch/io/crc32.hpp — CRC-32 (the zlib/zip/PNG one: reflected polynomial
// 0xEDB88320), so that checkpoints can be verified without linking zlib.
//
//   std::uint32_t crc = 0;
//   crc = hookforge::detail::crc32(crc, chunk1.data(), chunk1.size());   // streams
//   crc = hookforge::detail::crc32(crc, chunk2.data(), chunk2.size());
//
// Slicing-by-8 (eight bytes per step, tables built at compile time): a few GB/s, so
// verifying a checkpoint costs little next to reading it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hookforge/core/build_mode.hpp"

namespace hookforge::detail {

// Continues `crc` (0 to start) over `size` bytes; crc32(0, "123456789", 9) == 0xCBF43926.
HOOKFORGE_INLINE std::uint32_t crc32(std::uint32_t crc, const void* data,
                                     std::size_t size) noexcept;

}  // namespace hookforge::detail

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/crc32-inl.hpp"
#endif
