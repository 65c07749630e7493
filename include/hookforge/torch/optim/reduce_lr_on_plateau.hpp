// hookforge/torch/optim/reduce_lr_on_plateau.hpp — ReduceLROnPlateau, with PyTorch's Python
// semantics (see lr_scheduler.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/metrics/metric_rule.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

enum class plateau_mode { min, max };
enum class plateau_threshold_mode { rel, abs };

/// ReduceLROnPlateau's settings; the defaults are Python's.
struct plateau_options {
  plateau_mode mode = plateau_mode::min;  // min: lower metric is better; max: higher is
  double factor = 0.1;                    // new_lr = old_lr * factor (must be < 1)
  std::int64_t patience = 10;             // bad epochs tolerated; the next one reduces
  double threshold = 1e-4;                // how much better counts as better
  plateau_threshold_mode threshold_mode =
      plateau_threshold_mode::rel;   // threshold relative or absolute
  std::int64_t cooldown = 0;         // epochs after a reduction that count as neither
  double min_lr = 0.0;               // lower bound for every group
  std::vector<double> min_lrs = {};  // per group; replaces min_lr when not empty
  double eps = 1e-8;                 // skip reductions smaller than this
};

/// Multiplies every group's lr by `factor` once the metric has not improved for
/// more than `patience` epochs (Python's rule, including threshold, cooldown,
/// min_lr and eps). Reads the current lr of each group, so it composes with
/// manual lr changes. Call `step(metric)` once per epoch.
class ReduceLROnPlateau : public lr_scheduler {
 public:
  explicit ReduceLROnPlateau(torch::optim::Optimizer& optimizer, plateau_options options = {});

  /// ReduceLROnPlateau needs the metric; this overload throws.
  HOOKFORGE_INLINE void step() override;

  HOOKFORGE_INLINE void step(double metric) override;

  bool wants_metric() const override { return true; }

  /// The best metric seen so far (+inf in min mode, -inf in max mode before the first step).
  double best() const { return best_; }
  std::int64_t num_bad_epochs() const { return num_bad_epochs_; }
  std::int64_t cooldown_counter() const { return cooldown_counter_; }
  bool in_cooldown() const { return cooldown_counter_ > 0; }

  HOOKFORGE_INLINE hookforge::state_map state_dict() const override;

  HOOKFORGE_INLINE void load_state_dict(const hookforge::state_map& state) override;

 private:
  // false for `first`, true for `second`; anything else is a corrupt state_dict.
  static bool parse_choice(const c10::IValue& value, const char* first, const char* second);

  metric_rule rule() const;  // min: less is better; max: greater
  double worst_value() const;

  bool is_better(double current, double best) const;

  void reduce_lrs();

  plateau_options options_;
  double best_ = 0.0;
  std::int64_t num_bad_epochs_ = 0;
  std::int64_t cooldown_counter_ = 0;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/reduce_lr_on_plateau-inl.hpp"
#endif
