// hookforge/torch/io/checkpoint_rng-inl.hpp — the "rng" section kind's definitions:
// included by checkpoint_rng.hpp header-only, compiled into hookforge::torch_compiled
// otherwise (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/core/ivalue.h>
#include <torch/cuda.h>
#include <torch/serialize/output-archive.h>

#include "hookforge/torch/io/checkpoint_rng.hpp"
#include "hookforge/torch/io/checkpoint_section.hpp"

namespace hookforge::detail::ckpt {

HOOKFORGE_INLINE torch::Tensor generator_state(at::Generator gen) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

HOOKFORGE_INLINE void set_generator_state(at::Generator gen, const torch::Tensor& state) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state.to(torch::kCPU).contiguous());
}

HOOKFORGE_INLINE std::int64_t cuda_device_count() {
  return torch::cuda::is_available() ? static_cast<std::int64_t>(torch::cuda::device_count()) : 0;
}

HOOKFORGE_INLINE at::Generator cuda_generator(std::int64_t index) {
  return at::globalContext().defaultGenerator(
      c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index)));
}

HOOKFORGE_INLINE void encode_rng(torch::serialize::OutputArchive& section) {
  section.write("cpu", c10::IValue(generator_state(at::detail::getDefaultCPUGenerator())));
  const std::int64_t cuda_count = cuda_device_count();
  section.write("cuda_count", c10::IValue(cuda_count));
  for (std::int64_t i = 0; i < cuda_count; ++i)
    section.write("cuda/" + std::to_string(i), c10::IValue(generator_state(cuda_generator(i))));
}

HOOKFORGE_INLINE void decode_rng(const stored_section& section) {
  set_generator_state(at::detail::getDefaultCPUGenerator(), section.read("cpu").toTensor());
  const auto saved = section.read("cuda_count").toInt();
  const auto usable = std::min(saved, cuda_device_count());
  for (std::int64_t i = 0; i < usable; ++i)
    set_generator_state(cuda_generator(i), section.read("cuda/" + std::to_string(i)).toTensor());
}

}  // namespace hookforge::detail::ckpt
