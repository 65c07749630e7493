// hookforge/torch/runners/malloc_tuning.hpp — glibc's malloc thresholds for a training process:
// what Trainer::fit sets first (unless trainer_options::tune_malloc is false) and hookforge-run
// at its start.
//
//   hookforge::tune_malloc();   // early in main(), before the datasets; fit() does it anyway
//
// With glibc's defaults, memory freed at the top of the heap goes back to the system once
// 128 KiB are free, and a block larger than the mmap threshold is mapped and unmapped each time:
// a training step's temporaries of a few MB (activations, oneDNN's reorder buffers) then come
// back as page faults at every step. glibc raises that threshold by itself only when a mapped
// block is freed, so whether a program pays depends on its history: the default job's loop by
// hand happens to free a 9 MB stack of images at start-up and runs with 100k faults an epoch;
// the same job through the Trainer, its images kept in the loader, took 419k faults and 11 %
// longer (docs/benchmarks.md, "Page faults"). An mmap threshold of 32 MiB and a trim threshold
// of 64 MiB bring it to 78k; either threshold alone is worse than none. A process whose
// GLIBC_TUNABLES sets glibc.malloc.* keeps its own choice; elsewhere than glibc this does
// nothing.
#pragma once

#include "hookforge/core/build_mode.hpp"

namespace hookforge {

/// Sets glibc's mmap threshold to 32 MiB and its trim threshold to 64 MiB (see above), unless
/// GLIBC_TUNABLES sets glibc.malloc.*. Affects the whole process; calling it again does nothing
/// more.
HOOKFORGE_INLINE void tune_malloc();

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/runners/malloc_tuning-inl.hpp"
#endif
