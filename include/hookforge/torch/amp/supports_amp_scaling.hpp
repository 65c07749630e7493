// hookforge/torch/amp/supports_amp_scaling.hpp — an optimiser whose step the GradScaler can
// skip on the device.
//
// GradScaler::step must not update the parameters when a gradient holds inf/NaN. With
// LibTorch's own optimisers it can only decide on the host, so it reads the found-inf flag
// at every step: one synchronisation per step, as Python's GradScaler with a non-fused
// optimiser. An optimiser that also derives from supports_amp_scaling takes the flag as a
// tensor instead and leaves everything as it was where it is set, so the scaler reads
// nothing (Python's `_step_supports_amp_scaling`, which its fused Adam has). FusedAdam and
// FusedAdamW (optim/fused_adam.hpp) are hookforge's.
#pragma once

#include <ATen/core/Tensor.h>

namespace hookforge {

class supports_amp_scaling {
 public:
  /// The optimiser's step, done on the device unless `found_inf` (a float 0-dim tensor,
  /// non-zero when a gradient holds inf/NaN) is set; then parameters and state stay
  /// exactly as they were. Never reads `found_inf` on the host.
  virtual void step_unless_inf(const at::Tensor& found_inf) = 0;

 protected:
  supports_amp_scaling() = default;
  supports_amp_scaling(const supports_amp_scaling&) = default;
  supports_amp_scaling& operator=(const supports_amp_scaling&) = default;
  ~supports_amp_scaling() = default;
};

}  // namespace hookforge
