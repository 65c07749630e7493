// hookforge/torch/optim/stop_condition.hpp — when a training loop should stop early.
//
// The trainer asks its stop condition once per validation, with that
// validation's monitored score (trainer_options::monitor, "loss" by default).
// `NoCondition` never stops; `ValidationLossDidNotImprove` is early stopping on
// a score where lower is better: stop once it has failed to improve by more than
// `min_delta` for `patience` validations in a row. Both carry their state
// through checkpoints, so a resumed run stops where the uninterrupted one would.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "hookforge/torch/io/state_map.hpp"

namespace hookforge {

/// Decides, once per validation, whether training should stop.
class stop_condition {
 public:
  virtual ~stop_condition() = default;

  /// Called once per validation with the monitored score (trainer_options::monitor,
  /// "loss" by default; lower is better); true means stop now.
  virtual bool should_stop(double score) = 0;

  virtual hookforge::state_map state_dict() const { return {}; }
  virtual void load_state_dict(const hookforge::state_map& state) { (void)state; }
};

/// Never stops: training runs for as many epochs as it was given.
class NoCondition final : public stop_condition {
 public:
  bool should_stop(double score) override {
    (void)score;
    return false;
  }
};

/// Early stopping on the monitored validation score (lower is better: a loss).
///
/// A validation improves when `best - score > min_delta` (the first finite
/// score always does; NaN never does). Each improvement records the new best
/// and resets the count; each other validation adds one. `should_stop` is true
/// once `patience` validations in a row did not improve (patience 0: the first
/// one that does not improve).
class ValidationLossDidNotImprove final : public stop_condition {
 public:
  explicit ValidationLossDidNotImprove(std::int64_t patience, double min_delta = 0.0)
      : patience_(patience), min_delta_(min_delta) {
    if (patience < 0)
      throw std::invalid_argument("hookforge: ValidationLossDidNotImprove needs patience >= 0");
    if (!(min_delta >= 0.0)) {
      throw std::invalid_argument("hookforge: ValidationLossDidNotImprove needs min_delta >= 0");
    }
  }

  bool should_stop(double score) override {
    if (best_ - score > min_delta_) {
      best_ = score;
      validations_without_improvement_ = 0;
      return false;
    }
    ++validations_without_improvement_;
    return validations_without_improvement_ >= patience_;
  }

  /// The lowest score that counted as an improvement (+inf before the first).
  double best() const { return best_; }
  /// Validations in a row that did not improve.
  std::int64_t validations_without_improvement() const { return validations_without_improvement_; }
  std::int64_t patience() const { return patience_; }
  double min_delta() const { return min_delta_; }

  hookforge::state_map state_dict() const override {
    return {{"best", best_},
            {"validations_without_improvement", validations_without_improvement_},
            {"patience", patience_},
            {"min_delta", min_delta_}};
  }

  /// Restores the counters and the settings, as saved.
  void load_state_dict(const hookforge::state_map& state) override {
    const double best = entry(state, "best").toDouble();
    const auto count = entry(state, "validations_without_improvement").toInt();
    const auto patience = entry(state, "patience").toInt();
    const double min_delta = entry(state, "min_delta").toDouble();
    best_ = best;
    validations_without_improvement_ = count;
    patience_ = patience;
    min_delta_ = min_delta;
  }

 private:
  static const c10::IValue& entry(const hookforge::state_map& state, const std::string& key) {
    auto found = state.find(key);
    if (found == state.end()) {
      throw std::invalid_argument("hookforge: ValidationLossDidNotImprove state_dict has no '" + key + "'");
    }
    return found->second;
  }

  std::int64_t patience_;
  double min_delta_;
  double best_ = std::numeric_limits<double>::infinity();
  std::int64_t validations_without_improvement_ = 0;
};

}  // namespace hookforge
