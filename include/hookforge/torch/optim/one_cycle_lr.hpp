// hookforge/torch/optim/one_cycle_lr.hpp — OneCycleLR, with PyTorch's Python semantics (see
// lr_scheduler.hpp). A schedule of optimiser updates: its interval() is step from the start.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// OneCycleLR's settings, named and defaulted as PyTorch's.
struct one_cycle_options {
  double max_lr = 0.0;           ///< the peak lr (required, > 0)
  std::int64_t total_steps = 0;  ///< steps in the cycle; 0: epochs * steps_per_epoch
  std::int64_t epochs = 0;       ///< with steps_per_epoch, when total_steps is 0
  std::int64_t steps_per_epoch = 0;
  double pct_start = 0.3;               ///< share of the cycle spent rising to max_lr
  std::string anneal_strategy = "cos";  ///< "cos" or "linear"
  bool cycle_momentum = true;  ///< momentum (SGD, RMSprop) or beta1 (Adam, AdamW) inverse to lr
  double base_momentum = 0.85;
  double max_momentum = 0.95;
  double div_factor = 25.0;       ///< initial lr = max_lr / div_factor
  double final_div_factor = 1e4;  ///< final lr = initial lr / final_div_factor
  bool three_phase = false;       ///< rise, fall back to the initial lr, then anneal to the final
};

/// The 1cycle policy: the lr rises from max_lr / div_factor to max_lr over pct_start of
/// total_steps, then anneals to the final lr (three_phase: back down symmetrically, then to
/// the final lr), by a cosine or a line; with cycle_momentum, the momentum (or Adam's beta1)
/// moves the other way between max_momentum and base_momentum. The optimizer's own lr is
/// replaced, as PyTorch's does. Stepping past total_steps is an error.
class OneCycleLR : public detail::closed_form_scheduler {
 public:
  OneCycleLR(torch::optim::Optimizer& optimizer, one_cycle_options options);

  std::optional<std::int64_t> step_limit() const override { return total_steps_; }

 private:
  /// Where the schedule is at `step`: the lr and the momentum.
  struct point {
    double lr;
    double momentum;
  };
  /// One stretch of the cycle: it ends at end_step, moving lr and momentum between these.
  struct phase {
    double end_step, start_lr, end_lr, start_momentum, end_momentum;
  };
  HOOKFORGE_INLINE std::vector<phase> phases() const;
  HOOKFORGE_INLINE point at(std::int64_t step) const;
  HOOKFORGE_INLINE double lr_at(double base_lr, std::int64_t epoch) const override;
  HOOKFORGE_INLINE void set_extras(std::int64_t epoch) override;
  HOOKFORGE_INLINE parameter_list saved_parameters() override;

  double max_lr_;
  std::int64_t total_steps_;
  double pct_start_;
  std::string anneal_strategy_;
  bool cycle_momentum_;
  double base_momentum_;
  double max_momentum_;
  double div_factor_;
  double final_div_factor_;
  bool three_phase_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/one_cycle_lr-inl.hpp"
#endif
