// hookforge/torch/metrics/psnr-inl.hpp — PSNR's validate and operator(): included by
// psnr.hpp header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cstdint>

#include "hookforge/torch/metrics/psnr.hpp"

namespace hookforge {

HOOKFORGE_INLINE void PSNR::validate() const {
  detail::check_image_options("PSNR", data_range, crop_border);
}

HOOKFORGE_INLINE torch::Tensor PSNR::operator()(const Entry& entry) const {
  validate();
  detail::metric_scope scope;
  auto [x, y] =
      detail::compared_fields(entry, "PSNR", output_field, target_field,
                              {crop_border, y_channel, data_range}, crop_border > 0 ? 3 : 1);
  auto mse = (x - y).square().reshape({x.size(0), -1}).mean(1);
  return (mse.reciprocal() * (data_range * data_range)).log10().mul(10.0).mean();
}

}  // namespace hookforge
