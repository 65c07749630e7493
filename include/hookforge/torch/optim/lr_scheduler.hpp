// hookforge/torch/optim/lr_scheduler.hpp — learning-rate schedulers with PyTorch's Python
// semantics.
//
// LibTorch ships only StepLR, and it decays one epoch later than Python's, so
// hookforge brings its own: StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR,
// CosineAnnealingWarmRestarts, LinearLR, ConstantLR, PolynomialLR, LambdaLR, OneCycleLR,
// the composites SequentialLR and ChainedScheduler, and ReduceLROnPlateau. Each works on
// every param group of a `torch::optim::Optimizer` through `options().get_lr()`
// / `set_lr()`. All derive from `lr_scheduler`, so a trainer can call
// `step(val_loss)` on any of them: ReduceLROnPlateau uses the metric, the
// others ignore it.
//
// As in Python, construction records the groups' current lrs as `base_lrs` and
// makes the initial step (epoch 0). The epoch-based schedules compute each lr
// from (base_lr, epoch) in closed form, exactly as Python's
// `_get_closed_form_lr`, so they never drift and a state_dict alone resumes
// them. A scheduler's interval() says whether the Trainer steps it after each epoch or after
// each optimiser update (Lightning's `interval`). See docs/schedulers.md.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <torch/optim/optimizer.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/io/state_map.hpp"

namespace hookforge {

/// When the Trainer steps a scheduler: after each epoch (PyTorch's usual), or after each
/// optimiser update (OneCycleLR's way; Lightning's `interval: "step"`).
enum class schedule_interval { epoch, step };

/// Base of every scheduler: owns the epoch counter, the base and last lrs, and their state.
class lr_scheduler {
 public:
  lr_scheduler(const lr_scheduler&) = delete;
  lr_scheduler& operator=(const lr_scheduler&) = delete;
  virtual ~lr_scheduler() = default;

  /// Advance one epoch and write the new lr into every param group.
  virtual void step() = 0;
  /// Same, given the latest validation metric; only ReduceLROnPlateau uses it.
  HOOKFORGE_INLINE virtual void step(double metric);
  /// True when the scheduler needs `step(metric)` rather than `step()`.
  virtual bool wants_metric() const { return false; }
  /// The most steps the schedule takes (OneCycleLR's total_steps); none: it goes on.
  virtual std::optional<std::int64_t> step_limit() const { return std::nullopt; }

  /// The lr of each param group after the last step (Python's `get_last_lr()`).
  std::vector<double> last_lr() const { return last_lr_; }
  /// The lr of each param group when the scheduler was constructed.
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  /// Epochs (or updates, stepped per update) so far; 0 right after construction.
  std::int64_t last_epoch() const { return last_epoch_; }

  /// When the Trainer steps this scheduler; schedule_interval::epoch unless set.
  schedule_interval interval() const { return interval_; }
  /// Throws std::invalid_argument for a scheduler that steps on a validation score
  /// (ReduceLROnPlateau) asked to step per update.
  HOOKFORGE_INLINE void set_interval(schedule_interval interval);

  /// The optimizer whose param groups this scheduler sets.
  torch::optim::Optimizer& optimizer() const { return *optimizer_; }

  /// last_epoch, base_lrs, last_lr and the scheduler's own settings and counters.
  HOOKFORGE_INLINE virtual hookforge::state_map state_dict() const;
  /// Restores everything `state_dict()` saved, settings included (as Python's
  /// `__dict__.update`), and writes `last_lr` back into the optimizer's groups,
  /// so a scheduler loaded onto a fresh optimizer continues where it left off.
  HOOKFORGE_INLINE virtual void load_state_dict(const hookforge::state_map& state);

  /// The schedule's settings (T_max, eta_min, gamma, ...) as state_dict() holds them; empty
  /// for a scheduler whose settings are not apart from its state (ReduceLROnPlateau).
  HOOKFORGE_INLINE virtual hookforge::state_map settings() const;
  /// Takes `settings` (another scheduler's settings(), of this kind) and sets the current
  /// epoch's lr by them: after load_state_dict, a run goes on with the schedule it is
  /// configured with, from the epoch the checkpoint reached (hookforge-run's resume).
  HOOKFORGE_INLINE virtual void apply_settings(const hookforge::state_map& settings);

 protected:
  explicit lr_scheduler(torch::optim::Optimizer& optimizer);

  std::size_t group_count() const { return optimizer_->param_groups().size(); }

  /// The lr each param group has now.
  std::vector<double> current_lrs() const;

  /// Writes one lr per param group into the optimizer and records them as `last_lr`.
  void set_lrs(const std::vector<double>& lrs);

  std::int64_t last_epoch_ = -1;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;

 private:
  torch::optim::Optimizer* optimizer_;
  schedule_interval interval_ = schedule_interval::epoch;
};

/// After loading a checkpoint into `scheduler`: where its settings differ from `configured`
/// (its settings() before the load), `configured` applies (apply_settings) from the epoch the
/// checkpoint reached. Returns each difference, "T_max 3 (the checkpoint's: 2)"; none: empty.
/// What a longer resumed run means for a schedule tied to its epochs (docs/schedulers.md).
HOOKFORGE_INLINE std::vector<std::string> keep_configured_settings(
    lr_scheduler& scheduler, const hookforge::state_map& configured);

namespace detail {

/// A schedule whose lr is a pure function of (base_lr, epoch): step() bumps the
/// epoch and writes that function's value into every group. Each subclass lists
/// its settings once, in saved_parameters(); the state code here serves them all.
class closed_form_scheduler : public lr_scheduler {
 public:
  using lr_scheduler::step;
  HOOKFORGE_INLINE void step() override;

  /// The base's entries plus each saved parameter under its name.
  HOOKFORGE_INLINE hookforge::state_map state_dict() const override;
  /// All or nothing: reads every parameter, then loads the base, then assigns, so a
  /// state_dict that fails anywhere leaves the scheduler as it was.
  HOOKFORGE_INLINE void load_state_dict(const hookforge::state_map& state) override;
  HOOKFORGE_INLINE hookforge::state_map settings() const override;
  /// Assigns the settings, then writes lr_at(base_lr, last_epoch) into every group.
  HOOKFORGE_INLINE void apply_settings(const hookforge::state_map& settings) override;

  /// True when lr_at is base_lr times a factor of the epoch alone, so that schedules chain by
  /// multiplying (ChainedScheduler); false for those that set the lr outright.
  virtual bool scales_lr() const { return false; }

 protected:
  using lr_scheduler::lr_scheduler;

  /// One setting in the state_dict: its key and the member that holds it.
  struct saved_parameter {
    const char* name;
    std::variant<double*, std::int64_t*, std::vector<std::int64_t>*, bool*, std::string*> member;
  };
  /// A scheduler's settings, with its class name for state_value's error messages.
  struct parameter_list {
    const char* kind;
    std::vector<saved_parameter> parameters;
  };

  /// Reads every setting from `state` (throwing before anything changes) and returns what
  /// assigns them: the saved parameters; a composite adds its schedules'.
  HOOKFORGE_INLINE virtual std::vector<std::function<void()>> read_settings(
      const hookforge::state_map& state);

  /// How a composite asks the schedules it holds: `schedule`'s lr at `epoch` from `base_lr`,
  /// what it sets besides the lr there, and its read_settings.
  static double lr_of(const closed_form_scheduler& schedule, double base_lr, std::int64_t epoch) {
    return schedule.lr_at(base_lr, epoch);
  }
  static void extras_of(closed_form_scheduler& schedule, std::int64_t epoch) {
    schedule.set_extras(epoch);
  }
  static std::vector<std::function<void()>> settings_reads(closed_form_scheduler& schedule,
                                                           const hookforge::state_map& state) {
    return schedule.read_settings(state);
  }

  /// Writes lr_at(base_lr, last_epoch) into every group, then set_extras(last_epoch).
  HOOKFORGE_INLINE void write_current();

 private:
  virtual double lr_at(double base_lr, std::int64_t epoch) const = 0;
  /// What the schedule sets besides the lr at `epoch` (OneCycleLR's momentum); nothing here.
  virtual void set_extras(std::int64_t epoch) { (void)epoch; }
  /// Non-const so load_state_dict can assign through the pointers; state_dict only reads.
  virtual parameter_list saved_parameters() = 0;
};

}  // namespace detail

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/lr_scheduler-inl.hpp"
#endif
