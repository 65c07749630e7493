// hookforge/torch/runners/malloc_tuning-inl.hpp — tune_malloc's body: included by
// malloc_tuning.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp). <malloc.h> stays out of the users' translation units there.
#pragma once

#include <cstdlib>
#include <string_view>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "hookforge/torch/runners/malloc_tuning.hpp"

namespace hookforge {

HOOKFORGE_INLINE void tune_malloc() {
#if defined(__GLIBC__)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos)
    return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

}  // namespace hookforge
