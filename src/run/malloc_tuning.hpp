// src/run/malloc_tuning.hpp — glibc's malloc thresholds for a training process.
//
// With glibc's defaults, memory freed at the top of the heap is returned to the system once
// 128 KiB are free, and a batch's temporaries of more than the (dynamic) mmap threshold are
// mapped and unmapped at every step; both come back as page faults at the next step. On the
// default job without its dataset cache, 2 epochs took 552k minor faults and 10.9 s; with
// an mmap threshold of 32 MiB and a trim threshold of 64 MiB, 38k and 9.8 s (and 5 % more
// peak memory). Either threshold alone is worse than none (docs/benchmarks.md, "The whole
// job"). A process whose GLIBC_TUNABLES names a malloc setting keeps its own choice.
// Private to hookforge::run; no LibTorch.
#pragma once

namespace hookforge::run::detail {

/// Sets the thresholds above unless GLIBC_TUNABLES sets glibc.malloc.*; a no-op elsewhere.
/// Call before the first large allocation.
void tune_malloc();

}  // namespace hookforge::run::detail
