// hookforge/core/wrappers/with_priority.hpp — set a hook's priority at the attach call.
//
//   runner{hookforge::with_priority<hookforge::priority::HIGH>(GradientClip{1.0})}
//
// The attach-site priority wins over the hook's own `priority`.
#pragma once

#include "hookforge/core/priority.hpp"
#include "hookforge/core/wrappers/wrapper.hpp"

namespace hookforge {

template <int Priority, class H>
class prioritized_hook : public detail::wrapper_base<H> {
  // The range is checked where the hook is attached (checks.hpp, any_hook.hpp).
 public:
  static constexpr int priority = Priority;
  using detail::wrapper_base<H>::wrapper_base;
};

template <int Priority, class H>
prioritized_hook<Priority, H> with_priority(H hook) {
  return prioritized_hook<Priority, H>(std::move(hook));
}

}  // namespace hookforge
