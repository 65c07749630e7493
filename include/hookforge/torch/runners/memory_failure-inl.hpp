// hookforge/torch/runners/memory_failure-inl.hpp — what a memory failure's error says: included
// by memory_failure.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/core.h>

#include "hookforge/torch/runners/memory_failure.hpp"

namespace hookforge::detail {

HOOKFORGE_INLINE std::string memory_failure_message(const c10::Error& e) {
  std::string text = e.what_without_backtrace();
  const bool memory = dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr ||
                      text.find("not enough memory") != std::string::npos ||
                      text.find("can't allocate memory") != std::string::npos ||
                      text.find("out of memory") != std::string::npos;
  return memory ? text : std::string();
}

HOOKFORGE_INLINE out_of_memory memory_failure(std::string_view part, std::int64_t epoch,
                                              std::int64_t epochs, std::string_view what) {
  return out_of_memory(
      fmt::format("out of memory in {} during epoch {} of {}: {}", part, epoch + 1, epochs, what));
}

}  // namespace hookforge::detail
