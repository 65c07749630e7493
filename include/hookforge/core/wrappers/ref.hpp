// hookforge/core/wrappers/ref.hpp — attach an existing hook object instead of a copy.
//
//   ProgressBar progress{"P"};
//   TrainingEpochRunner train{..., hookforge::ref(progress)};
//   ValidationEpochRunner val{..., hookforge::ref(progress)};   // the same instance
//
// The caller keeps the object alive for as long as the runners use it.
#pragma once

#include "hookforge/core/wrappers/wrapper.hpp"

namespace hookforge {

template <class H>
class ref_hook : public detail::wrapper_base<H, /*ByReference=*/true> {
  using detail::wrapper_base<H, true>::wrapper_base;
};

template <class H>
ref_hook<H> ref(H& hook) {
  return ref_hook<H>(hook);
}

}  // namespace hookforge
