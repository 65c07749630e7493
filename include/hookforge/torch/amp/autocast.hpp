// hookforge/torch/amp/autocast.hpp — mixed precision for a scope: float16 on CUDA, bfloat16 on CPU.
//
// An RAII guard around forward and loss, and one that turns autocast off for a scope
// (metrics compute in float32 even inside an autocast region). LibTorch's C++ autocast
// API changed in 2.4 (per-device-type functions); autocast-inl.hpp handles both spellings.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "hookforge/core/build_mode.hpp"

namespace hookforge {

class autocast_guard {
 public:
  /// Enables autocast for `device`'s type when `enabled`; otherwise does nothing.
  autocast_guard(c10::Device device, bool enabled);

  ~autocast_guard();

  autocast_guard(const autocast_guard&) = delete;
  autocast_guard& operator=(const autocast_guard&) = delete;

 private:
  bool active_;
  c10::DeviceType type_;
  bool was_enabled_ = false;
  at::ScalarType old_dtype_ = at::kFloat;
};

/// Turns autocast off on the CPU and on CUDA for a scope, then restores both.
class no_autocast_guard {
 public:
  no_autocast_guard();
  ~no_autocast_guard();

  no_autocast_guard(const no_autocast_guard&) = delete;
  no_autocast_guard& operator=(const no_autocast_guard&) = delete;

 private:
  bool was_cpu_ = false;
  bool was_cuda_ = false;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/amp/autocast-inl.hpp"
#endif
