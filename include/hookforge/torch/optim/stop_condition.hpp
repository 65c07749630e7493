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

#include "hookforge/core/build_mode.hpp"
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
  explicit ValidationLossDidNotImprove(std::int64_t patience, double min_delta = 0.0);

  HOOKFORGE_INLINE bool should_stop(double score) override;

  /// The lowest score that counted as an improvement (+inf before the first).
  double best() const { return best_; }
  /// Validations in a row that did not improve.
  std::int64_t validations_without_improvement() const { return validations_without_improvement_; }
  std::int64_t patience() const { return patience_; }
  double min_delta() const { return min_delta_; }

  HOOKFORGE_INLINE hookforge::state_map state_dict() const override;

  /// Restores the counters and the settings, as saved.
  HOOKFORGE_INLINE void load_state_dict(const hookforge::state_map& state) override;

 private:
  std::int64_t patience_;
  double min_delta_;
  double best_ = std::numeric_limits<double>::infinity();
  std::int64_t validations_without_improvement_ = 0;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/stop_condition-inl.hpp"
#endif
