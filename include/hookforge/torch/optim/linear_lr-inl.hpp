// hookforge/torch/optim/linear_lr-inl.hpp — LinearLR's definitions: included by
// linear_lr.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "hookforge/torch/optim/linear_lr.hpp"

namespace hookforge {

HOOKFORGE_INLINE LinearLR::LinearLR(torch::optim::Optimizer& optimizer, double start_factor,
                                    double end_factor, std::int64_t total_iters)
    : closed_form_scheduler(optimizer),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  if (!(start_factor > 0.0 && start_factor <= 1.0)) {
    throw std::invalid_argument("hookforge: LinearLR needs 0 < start_factor <= 1");
  }
  if (!(end_factor >= 0.0 && end_factor <= 1.0)) {
    throw std::invalid_argument("hookforge: LinearLR needs 0 <= end_factor <= 1");
  }
  if (total_iters <= 0) throw std::invalid_argument("hookforge: LinearLR needs total_iters > 0");
  step();
}

HOOKFORGE_INLINE double LinearLR::lr_at(double base_lr, std::int64_t epoch) const {
  const auto done = static_cast<double>(std::min(total_iters_, epoch));
  return base_lr *
         (start_factor_ + (end_factor_ - start_factor_) * done / static_cast<double>(total_iters_));
}

HOOKFORGE_INLINE LinearLR::parameter_list LinearLR::saved_parameters() {
  return {"LinearLR",
          {{"start_factor", &start_factor_},
           {"end_factor", &end_factor_},
           {"total_iters", &total_iters_}}};
}

}  // namespace hookforge
