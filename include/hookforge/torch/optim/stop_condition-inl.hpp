// hookforge/torch/optim/stop_condition-inl.hpp — ValidationLossDidNotImprove's definitions:
// included by stop_condition.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/config.hpp).
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
  const double best = entry(state, "best").toDouble();
  const auto count = entry(state, "validations_without_improvement").toInt();
  const auto patience = entry(state, "patience").toInt();
  const double min_delta = entry(state, "min_delta").toDouble();
  best_ = best;
  validations_without_improvement_ = count;
  patience_ = patience;
  min_delta_ = min_delta;
}

HOOKFORGE_INLINE const c10::IValue& ValidationLossDidNotImprove::entry(
    const hookforge::state_map& state, const std::string& key) {
  auto found = state.find(key);
  if (found == state.end()) {
    throw std::invalid_argument("hookforge: ValidationLossDidNotImprove state_dict has no '" + key +
                                "'");
  }
  return found->second;
}

}  // namespace hookforge
