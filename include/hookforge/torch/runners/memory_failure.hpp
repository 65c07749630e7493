// hookforge/torch/runners/memory_failure.hpp — a run that runs out of memory says where.
//
// A memory failure deep in a training step reads "std::bad_alloc" or LibTorch's "not enough
// memory: you tried to allocate N bytes", with nothing on which part of the run asked. The
// Trainer runs each part of an epoch through naming_memory_failure, so the error it throws,
// hookforge::out_of_memory, names the part and the epoch:
//
//   out of memory in the training runner during epoch 3 of 10: [enforce fail at
//   alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to
//   allocate 1099511627776 bytes. Error code 12 (Cannot allocate memory)
#pragma once

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

#include <c10/util/Exception.h>

#include "hookforge/core/build_mode.hpp"

namespace hookforge {

/// A memory failure (std::bad_alloc, LibTorch's allocators running out) in a named part
/// of a run; what() names the part, the epoch and the allocator's message.
struct out_of_memory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {

/// The allocator's message when `e` is a memory failure (c10::OutOfMemoryError, or a
/// c10::Error of LibTorch's CPU allocator: "can't allocate memory" in 2.x, "not enough
/// memory" in 1.13), else "".
HOOKFORGE_INLINE std::string memory_failure_message(const c10::Error& e);

/// The out_of_memory for a failure the allocator describes as `what`, in `part` during the
/// 0-based `epoch` of `epochs`.
HOOKFORGE_INLINE out_of_memory memory_failure(std::string_view part, std::int64_t epoch,
                                              std::int64_t epochs, std::string_view what);

}  // namespace detail

/// `f()`, with a memory failure in it rethrown as out_of_memory naming `part` ("the
/// training runner") and the epoch (0-based `epoch`, of `epochs`). Other errors pass as
/// they are.
template <class F>
decltype(auto) naming_memory_failure(std::string_view part, std::int64_t epoch, std::int64_t epochs,
                                     F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    throw detail::memory_failure(part, epoch, epochs, "std::bad_alloc (the allocation failed)");
  } catch (const c10::Error& e) {
    const auto what = detail::memory_failure_message(e);
    if (what.empty()) throw;
    throw detail::memory_failure(part, epoch, epochs, what);
  }
}

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/runners/memory_failure-inl.hpp"
#endif
