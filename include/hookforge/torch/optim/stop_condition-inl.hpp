// hookforge/torch/optim/stop_condition-inl.hpp — ValidationLossDidNotImprove's definitions:
// included by stop_condition.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "hookforge/torch/optim/stop_condition.hpp"

namespace hookforge {

HOOKFORGE_INLINE ValidationLossDidNotImprove::ValidationLossDidNotImprove(std::int64_t patience,
                                                                          double min_delta)
    : patience_(patience), min_delta_(min_delta) {
  if (patience < 0)
    throw std::invalid_argument("hookforge: ValidationLossDidNotImprove needs patience >= 0");
  if (!(min_delta >= 0.0)) {
    throw std::invalid_argument("hookforge: ValidationLossDidNotImprove needs min_delta >= 0");
  }
}

HOOKFORGE_INLINE bool ValidationLossDidNotImprove::should_stop(double score) {
  if (best_ - score > min_delta_) {
    best_ = score;
    validations_without_improvement_ = 0;
    return false;
  }
  ++validations_without_improvement_;
  return validations_without_improvement_ >= patience_;
}

HOOKFORGE_INLINE hookforge::state_map ValidationLossDidNotImprove::state_dict() const {
  return {{"best", best_},
          {"validations_without_improvement", validations_without_improvement_},
          {"patience", patience_},
          {"min_delta", min_delta_}};
}

HOOKFORGE_INLINE void ValidationLossDidNotImprove::load_state_dict(
    const hookforge::state_map& state) {
  const double best = state_value<double>(state, "ValidationLossDidNotImprove", "best");
  const auto count = state_value<std::int64_t>(state, "ValidationLossDidNotImprove",
                                               "validations_without_improvement");
  const auto patience = state_value<std::int64_t>(state, "ValidationLossDidNotImprove", "patience");
  const double min_delta = state_value<double>(state, "ValidationLossDidNotImprove", "min_delta");
  best_ = best;
  validations_without_improvement_ = count;
  patience_ = patience;
  min_delta_ = min_delta;
}

}  // namespace hookforge
