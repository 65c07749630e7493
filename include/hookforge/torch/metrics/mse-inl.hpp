// hookforge/torch/metrics/mse-inl.hpp — MSE's operator(): included by
// mse.hpp header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include "hookforge/torch/metrics/mse.hpp"

namespace hookforge {

HOOKFORGE_INLINE torch::Tensor MSE::operator()(const Entry& entry) const {
  detail::metric_scope scope;
  auto [x, y] = detail::compared_fields(entry, "MSE", output_field, target_field, 0, 1);
  return (x - y).square().mean();
}

}  // namespace hookforge
