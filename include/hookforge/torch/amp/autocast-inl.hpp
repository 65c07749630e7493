// hookforge/torch/amp/autocast-inl.hpp — autocast_guard's and no_autocast_guard's
// definitions: included by autocast.hpp header-only, compiled into
// hookforge::torch_compiled otherwise (core/build_mode.hpp). LibTorch's C++ autocast API
// changed in 2.4 (per-device-type functions); both spellings are handled here.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include "hookforge/torch/amp/autocast.hpp"

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define HOOKFORGE_AUTOCAST_PER_DEVICE 1
#else
#define HOOKFORGE_AUTOCAST_PER_DEVICE 0
#endif

namespace hookforge {

HOOKFORGE_INLINE autocast_guard::autocast_guard(c10::Device device, bool enabled)
    : active_(enabled), type_(device.type()) {
  if (!active_) return;
  const auto dtype = type_ == c10::DeviceType::CUDA ? at::kHalf : at::kBFloat16;
#if HOOKFORGE_AUTOCAST_PER_DEVICE
  was_enabled_ = at::autocast::is_autocast_enabled(type_);
  old_dtype_ = at::autocast::get_autocast_dtype(type_);
  at::autocast::set_autocast_enabled(type_, true);
  at::autocast::set_autocast_dtype(type_, dtype);
#else
  if (type_ == c10::DeviceType::CUDA) {
    was_enabled_ = at::autocast::is_enabled();
    old_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    was_enabled_ = at::autocast::is_cpu_enabled();
    old_dtype_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_cpu_enabled(true);
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
#endif
  at::autocast::increment_nesting();
}

HOOKFORGE_INLINE autocast_guard::~autocast_guard() {
  if (!active_) return;
  // Leaving the outermost autocast region frees the casted-weight cache, as Python does.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if HOOKFORGE_AUTOCAST_PER_DEVICE
  at::autocast::set_autocast_enabled(type_, was_enabled_);
  at::autocast::set_autocast_dtype(type_, old_dtype_);
#else
  if (type_ == c10::DeviceType::CUDA) {
    at::autocast::set_enabled(was_enabled_);
    at::autocast::set_autocast_gpu_dtype(old_dtype_);
  } else {
    at::autocast::set_cpu_enabled(was_enabled_);
    at::autocast::set_autocast_cpu_dtype(old_dtype_);
  }
#endif
}

HOOKFORGE_INLINE no_autocast_guard::no_autocast_guard() {
#if HOOKFORGE_AUTOCAST_PER_DEVICE
  was_cpu_ = at::autocast::is_autocast_enabled(c10::DeviceType::CPU);
  was_cuda_ = at::autocast::is_autocast_enabled(c10::DeviceType::CUDA);
  at::autocast::set_autocast_enabled(c10::DeviceType::CPU, false);
  at::autocast::set_autocast_enabled(c10::DeviceType::CUDA, false);
#else
  was_cpu_ = at::autocast::is_cpu_enabled();
  was_cuda_ = at::autocast::is_enabled();
  at::autocast::set_cpu_enabled(false);
  at::autocast::set_enabled(false);
#endif
}

HOOKFORGE_INLINE no_autocast_guard::~no_autocast_guard() {
#if HOOKFORGE_AUTOCAST_PER_DEVICE
  at::autocast::set_autocast_enabled(c10::DeviceType::CPU, was_cpu_);
  at::autocast::set_autocast_enabled(c10::DeviceType::CUDA, was_cuda_);
#else
  at::autocast::set_cpu_enabled(was_cpu_);
  at::autocast::set_enabled(was_cuda_);
#endif
}

}  // namespace hookforge
