// hookforge/torch/losses/charbonnier.hpp — the Charbonnier loss, a differentiable L1.
//
//   Charbonnier = mean over every element of the batch of sqrt((output - target)^2 + eps^2)
//
// Close to |output - target| for differences much larger than eps and smooth (quadratic)
// near 0, so its gradient is defined everywhere; as LapSRN (Lai et al. 2017) and BasicSR's
// CharbonnierLoss, eps = 1e-3 by default. Its minimum is eps (at output == target), not 0.
//
//   hookforge::CharbonnierLoss criterion;                 // "output" vs "target", eps 1e-3
//   hookforge::CharbonnierLoss{.eps = 1e-6}
//
// Fields and shapes as pixel_loss.hpp says.
#pragma once

#include <string>

#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

struct CharbonnierLoss {
  double eps = 1e-3;  ///< > 0 and finite
  std::string output_field = "output";
  std::string target_field = "target";

  /// std::invalid_argument for an eps that is not > 0 and finite.
  void validate() const;

  /// The batch's mean Charbonnier penalty, a 0-dim tensor.
  torch::Tensor operator()(const Entry& entry) const;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/losses/charbonnier-inl.hpp"
#endif
