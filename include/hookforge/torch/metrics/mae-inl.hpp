// hookforge/torch/metrics/mae-inl.hpp — MAE's operator(): included by
// mae.hpp header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include "hookforge/torch/metrics/mae.hpp"

namespace hookforge {

HOOKFORGE_INLINE torch::Tensor MAE::operator()(const Entry& entry) const {
  detail::metric_scope scope;
  auto [x, y] = detail::compared_fields(entry, "MAE", output_field, target_field, 0, 1);
  return (x - y).abs().mean();
}

}  // namespace hookforge
