// hookforge/torch/data/loader-inl.hpp — the DataLoader's pinned memory: included by
// loader.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <utility>

#include <torch/cuda.h>

#include "hookforge/torch/data/loader.hpp"

namespace hookforge::detail {

HOOKFORGE_INLINE Entry pinned(Entry&& batch) {
  for (auto& [name, tensor] : batch)
    if (tensor.defined() && tensor.device().is_cpu() && !tensor.is_pinned())
      tensor = tensor.pin_memory();
  return std::move(batch);
}

HOOKFORGE_INLINE bool can_pin_memory() { return torch::cuda::is_available(); }

}  // namespace hookforge::detail
