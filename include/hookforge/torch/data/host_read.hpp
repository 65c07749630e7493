// hookforge/torch/data/host_read.hpp — the one way hookforge reads a device value on the host.
//
// Reading a CUDA tensor's value on the host (`item()`) waits for every queued kernel,
// so a hook that does it at each step turns an asynchronous step into a synchronous
// one. Built-in hooks read device values only through host_read(), on the intervals
// their options give, and host_reads() counts the reads so a test can hold them to it.
#pragma once

#include <atomic>
#include <cstdint>

#include <ATen/core/Tensor.h>

namespace hookforge {

namespace detail {
inline std::atomic<std::int64_t> host_read_count{0};
}  // namespace detail

/// The value of a one-element tensor, as a double, read on the host (counted).
inline double host_read(const at::Tensor& value) {
  detail::host_read_count.fetch_add(1, std::memory_order_relaxed);
  return value.item<double>();
}

/// How many host_read() calls were made by this process so far.
inline std::int64_t host_reads() { return detail::host_read_count.load(std::memory_order_relaxed); }

}  // namespace hookforge
