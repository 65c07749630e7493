// hookforge/torch/io/checkpoint_rng.hpp — the "rng" section kind: the default CPU
// generator's state and, when CUDA is available, every CUDA device's default generator's.
//
//   kind        "rng"
//   cpu         the CPU generator's state
//   cuda_count  how many CUDA generators follow (0 without CUDA)
//   cuda/<i>    device i's generator state
#pragma once

#include <torch/serialize/output-archive.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/io/checkpoint_section.hpp"

namespace hookforge::detail::ckpt {

// A snapshot, taken now, of the generators into `section`.
HOOKFORGE_INLINE void encode_rng(torch::serialize::OutputArchive& section);

// Restores the CPU generator and the CUDA generators of the devices present both in the
// section and on this machine (others are left alone; none on a CPU-only machine).
HOOKFORGE_INLINE void decode_rng(const stored_section& section);

}  // namespace hookforge::detail::ckpt

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/checkpoint_rng-inl.hpp"
#endif
