// hookforge/hooks/detail/device_timer.hpp — IterTimer's GPU clock: intervals of a CUDA
// stream timed with event pairs, read only once the GPU has passed them.
//
// A CUDA step returns to the host long before the GPU has run it, so the host clock
// measures launches, not work. start() and stop() record CUDA events on the device's
// current stream; collect() asks each pending pair whether the GPU has reached it
// (cudaEventQuery, which never waits) and reports the finished ones, so timing adds no
// synchronisation: a step's GPU time arrives a few steps later. Against a LibTorch
// without CUDA (HOOKFORGE_HAS_CUDA, torch/compat.hpp) it records nothing.
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

#include <c10/core/Device.h>

#include "hookforge/torch/compat.hpp"

#if HOOKFORGE_HAS_CUDA
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace hookforge::detail::hooks {

class device_timer {
 public:
  device_timer() = default;
  // Events belong to one timer: a copy starts with none in flight.
  device_timer(const device_timer&) {}
  device_timer& operator=(const device_timer&) {
    discard();
    return *this;
  }
  ~device_timer() { destroy(); }

  /// Records the start of an interval on `device`'s current stream (CUDA devices only).
  void start(c10::Device device) {
#if HOOKFORGE_HAS_CUDA
    if (!device.is_cuda()) return;
    c10::cuda::CUDAGuard guard(device);
    open_ = interval{device, record(device), nullptr};
#else
    (void)device;
#endif
  }

  /// Records the end of the interval start() opened, if any.
  void stop() {
#if HOOKFORGE_HAS_CUDA
    if (!open_.start) return;
    c10::cuda::CUDAGuard guard(open_.device);
    open_.end = record(open_.device);
    pending_.push_back(open_);
    open_ = {};
    if (pending_.size() > max_pending) {  // the GPU is far behind: forget the oldest
      recycle(pending_.front());
      pending_.pop_front();
    }
#endif
  }

  /// Calls `each(seconds)` for every interval the GPU has finished, oldest first.
  template <class F>
  void collect(F&& each) {
#if HOOKFORGE_HAS_CUDA
    while (!pending_.empty()) {
      auto& next = pending_.front();
      c10::cuda::CUDAGuard guard(next.device);
      const auto ready = cudaEventQuery(next.end);
      if (ready == cudaErrorNotReady) {
        (void)cudaGetLastError();  // a not-ready query leaves an error code behind
        return;
      }
      C10_CUDA_CHECK(ready);
      float ms = 0;
      C10_CUDA_CHECK(cudaEventElapsedTime(&ms, next.start, next.end));
      recycle(next);
      pending_.pop_front();
      each(static_cast<double>(ms) / 1000.0);
    }
#else
    (void)each;
#endif
  }

  /// Forgets the intervals in flight (a new epoch).
  void discard() {
#if HOOKFORGE_HAS_CUDA
    for (auto& i : pending_) recycle(i);
    pending_.clear();
    if (open_.start) free_.push_back({open_.device, open_.start});
    open_ = {};
#endif
  }

 private:
#if HOOKFORGE_HAS_CUDA
  static constexpr std::size_t max_pending = 1024;
  struct interval {
    c10::Device device{c10::kCUDA};
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
  };
  struct spare {
    c10::Device device;
    cudaEvent_t event;
  };

  cudaEvent_t record(c10::Device device) {
    cudaEvent_t event = nullptr;
    for (std::size_t i = 0; i < free_.size(); ++i)
      if (free_[i].device == device) {
        event = free_[i].event;
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    if (!event) C10_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDefault));
    C10_CUDA_CHECK(cudaEventRecord(event, c10::cuda::getCurrentCUDAStream(device.index())));
    return event;
  }
  void recycle(const interval& i) {
    free_.push_back({i.device, i.start});
    free_.push_back({i.device, i.end});
  }
  void destroy() {
    discard();
    for (auto& s : free_) {
      c10::cuda::CUDAGuard guard(s.device);
      (void)cudaEventDestroy(s.event);  // a destructor reports nothing
    }
    free_.clear();
  }

  interval open_;
  std::deque<interval> pending_;
  std::vector<spare> free_;
#else
  void destroy() {}
#endif
};

}  // namespace hookforge::detail::hooks
