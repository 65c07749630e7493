// hookforge/hooks/empty_cache.hpp — EmptyCache: release the CUDA caching allocator's free blocks.
//
//   TrainingEpochRunner train{optimizer, {}, hookforge::EmptyCache{}};  // after each epoch
//   hookforge::EmptyCache{{.before_epoch = true, .after_epoch = true, .after_step = true}}
//
// As MMEngine's EmptyCacheHook (the same options and defaults): at the chosen points it
// calls c10::cuda::CUDACachingAllocator::emptyCache(), which hands cached but unused
// device memory back to the driver (for other processes, or to fight fragmentation). It
// frees nothing that tensors still use, and it does not synchronise beyond what the
// allocator needs. On a machine without CUDA it does nothing.
//
// The call is compiled only against a CUDA build of LibTorch (HOOKFORGE_HAS_CUDA, in
// torch/compat.hpp; HOOKFORGE_NO_CUDA leaves it out). `cuda_support()` says which was built.
#pragma once

#include <cstdint>
#include <stdexcept>

#include <torch/cuda.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/torch/compat.hpp"

#if HOOKFORGE_HAS_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace hookforge {

struct empty_cache_options {
  bool before_epoch = false;  ///< at on_epoch_start
  bool after_epoch = true;    ///< at on_epoch_end
  bool after_step = false;    ///< at on_post_step (costly: the allocator must then allocate again)
};

class EmptyCache {
 public:
  /// Last at each point: the other hooks' temporaries are gone by then.
  static constexpr int priority = priority::LOWEST;

  explicit EmptyCache(empty_cache_options options = {}) : options_(options) {
    if (!options_.before_epoch && !options_.after_epoch && !options_.after_step)
      throw std::invalid_argument(
          "EmptyCache: before_epoch, after_epoch and after_step are all false, so it would never "
          "run");
  }

  template <class C>
  void before_epoch(C&) {
    if (options_.before_epoch) release();
  }
  template <class C>
  void after_step(C&) {
    if (options_.after_step) release();
  }
  template <class C>
  void after_epoch(C&) {
    if (options_.after_epoch) release();
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(before_epoch, points::on_epoch_start),
                          HOOKFORGE_HOOKS_INTO(after_step, points::on_post_step),
                          HOOKFORGE_HOOKS_INTO(after_epoch, points::on_epoch_end));

  /// How often the options asked for a release (whether or not CUDA was there to release).
  std::int64_t requests() const { return requests_; }
  /// How often the CUDA cache was emptied.
  std::int64_t releases() const { return releases_; }
  /// Whether this build can call the CUDA allocator at all.
  static constexpr bool cuda_support() { return HOOKFORGE_HAS_CUDA != 0; }
  const empty_cache_options& options() const { return options_; }

 private:
  void release() {
    ++requests_;
#if HOOKFORGE_HAS_CUDA
    if (torch::cuda::is_available()) {
      c10::cuda::CUDACachingAllocator::emptyCache();
      ++releases_;
    }
#endif
  }

  empty_cache_options options_;
  std::int64_t requests_ = 0;
  std::int64_t releases_ = 0;
};

}  // namespace hookforge
