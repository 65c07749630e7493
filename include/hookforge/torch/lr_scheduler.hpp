// hookforge/torch/lr_scheduler.hpp — learning-rate schedulers with PyTorch's Python semantics.
//
// LibTorch ships only StepLR, and it decays one epoch later than Python's, so
// hookforge brings its own: StepLR, MultiStepLR, ExponentialLR,
// CosineAnnealingLR, LinearLR, ConstantLR and ReduceLROnPlateau. Each works on
// every param group of a `torch::optim::Optimizer` through `options().get_lr()`
// / `set_lr()`. All derive from `lr_scheduler`, so a trainer can call
// `step(val_loss)` on any of them: ReduceLROnPlateau uses the metric, the
// others ignore it.
//
// As in Python, construction records the groups' current lrs as `base_lrs` and
// makes the initial step (epoch 0). The epoch-based schedules compute each lr
// from (base_lr, epoch) in closed form, exactly as Python's
// `_get_closed_form_lr`, so they never drift and a state_dict alone resumes
// them. See docs/schedulers.md.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <torch/optim/optimizer.h>

#include "hookforge/torch/state_dict.hpp"

namespace hookforge {

namespace detail::lr_state {

inline const c10::IValue& entry(const hookforge::state_dict& state, const std::string& key,
                                const char* owner) {
  auto found = state.find(key);
  if (found == state.end()) {
    throw std::invalid_argument(std::string("hookforge: ") + owner + " state_dict has no '" + key + "'");
  }
  return found->second;
}

inline double get_double(const hookforge::state_dict& s, const std::string& key, const char* owner) {
  return entry(s, key, owner).toDouble();
}
inline std::int64_t get_int(const hookforge::state_dict& s, const std::string& key, const char* owner) {
  return entry(s, key, owner).toInt();
}
inline std::vector<double> get_doubles(const hookforge::state_dict& s, const std::string& key,
                                       const char* owner) {
  return entry(s, key, owner).toDoubleVector();
}

}  // namespace detail::lr_state

/// Base of every scheduler: owns the epoch counter, the base and last lrs, and their state.
class lr_scheduler {
 public:
  lr_scheduler(const lr_scheduler&) = delete;
  lr_scheduler& operator=(const lr_scheduler&) = delete;
  virtual ~lr_scheduler() = default;

  /// Advance one epoch and write the new lr into every param group.
  virtual void step() = 0;
  /// Same, given the latest validation metric; only ReduceLROnPlateau uses it.
  virtual void step(double metric) {
    (void)metric;
    step();
  }
  /// True when the scheduler needs `step(metric)` rather than `step()`.
  virtual bool wants_metric() const { return false; }

  /// The lr of each param group after the last step (Python's `get_last_lr()`).
  std::vector<double> last_lr() const { return last_lr_; }
  /// The lr of each param group when the scheduler was constructed.
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  /// Epochs stepped so far; 0 right after construction.
  std::int64_t last_epoch() const { return last_epoch_; }

  /// last_epoch, base_lrs, last_lr and the scheduler's own settings and counters.
  virtual hookforge::state_dict state_dict() const {
    return {{"last_epoch", last_epoch_}, {"base_lrs", base_lrs_}, {"last_lr", last_lr_}};
  }
  /// Restores everything `state_dict()` saved, settings included (as Python's
  /// `__dict__.update`), and writes `last_lr` back into the optimizer's groups,
  /// so a scheduler loaded onto a fresh optimizer continues where it left off.
  virtual void load_state_dict(const hookforge::state_dict& state) {
    auto base = detail::lr_state::get_doubles(state, "base_lrs", "lr_scheduler");
    auto last = detail::lr_state::get_doubles(state, "last_lr", "lr_scheduler");
    if (base.size() != group_count() || last.size() != group_count()) {
      throw std::invalid_argument("hookforge: lr_scheduler state_dict is for " + std::to_string(last.size()) +
                                  " param groups, the optimizer has " + std::to_string(group_count()));
    }
    last_epoch_ = detail::lr_state::get_int(state, "last_epoch", "lr_scheduler");
    base_lrs_ = std::move(base);
    set_lrs(last);
  }

 protected:
  explicit lr_scheduler(torch::optim::Optimizer& optimizer) : optimizer_(&optimizer) {
    base_lrs_ = current_lrs();
    last_lr_ = base_lrs_;
  }

  torch::optim::Optimizer& optimizer() const { return *optimizer_; }
  std::size_t group_count() const { return optimizer_->param_groups().size(); }

  /// The lr each param group has now.
  std::vector<double> current_lrs() const {
    std::vector<double> lrs;
    for (const auto& group : optimizer_->param_groups()) lrs.push_back(group.options().get_lr());
    return lrs;
  }

  /// Writes one lr per param group into the optimizer and records them as `last_lr`.
  void set_lrs(const std::vector<double>& lrs) {
    auto& groups = optimizer_->param_groups();
    if (lrs.size() != groups.size()) {
      throw std::logic_error(
          "hookforge: the optimizer's param groups changed after its lr_scheduler was built");
    }
    for (std::size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lrs[i]);
    last_lr_ = lrs;
  }

  std::int64_t last_epoch_ = -1;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;

 private:
  torch::optim::Optimizer* optimizer_;
};

namespace detail {

/// A schedule whose lr is a pure function of (base_lr, epoch): step() bumps the
/// epoch and writes that function's value into every group.
class closed_form_scheduler : public lr_scheduler {
 public:
  using lr_scheduler::step;
  void step() override {
    ++last_epoch_;
    std::vector<double> lrs;
    for (double base : base_lrs_) lrs.push_back(lr_at(base, last_epoch_));
    set_lrs(lrs);
  }

 protected:
  using lr_scheduler::lr_scheduler;

 private:
  virtual double lr_at(double base_lr, std::int64_t epoch) const = 0;
};

}  // namespace detail

/// lr = base_lr * gamma^(epoch / step_size): decays by gamma every step_size epochs.
class StepLR : public detail::closed_form_scheduler {
 public:
  StepLR(torch::optim::Optimizer& optimizer, std::int64_t step_size, double gamma = 0.1)
      : closed_form_scheduler(optimizer), step_size_(step_size), gamma_(gamma) {
    if (step_size <= 0) throw std::invalid_argument("hookforge: StepLR needs step_size > 0");
    step();
  }

  hookforge::state_dict state_dict() const override {
    auto state = lr_scheduler::state_dict();
    state["step_size"] = step_size_;
    state["gamma"] = gamma_;
    return state;
  }
  void load_state_dict(const hookforge::state_dict& state) override {
    const auto step_size = detail::lr_state::get_int(state, "step_size", "StepLR");
    const auto gamma = detail::lr_state::get_double(state, "gamma", "StepLR");
    lr_scheduler::load_state_dict(state);
    step_size_ = step_size;
    gamma_ = gamma;
  }

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override {
    return base_lr * std::pow(gamma_, static_cast<double>(epoch / step_size_));
  }

  std::int64_t step_size_;
  double gamma_;
};

/// lr = base_lr * gamma^(number of milestones <= epoch); a milestone listed twice counts twice.
class MultiStepLR : public detail::closed_form_scheduler {
 public:
  MultiStepLR(torch::optim::Optimizer& optimizer, std::vector<std::int64_t> milestones, double gamma = 0.1)
      : closed_form_scheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
    std::sort(milestones_.begin(), milestones_.end());
    step();
  }

  hookforge::state_dict state_dict() const override {
    auto state = lr_scheduler::state_dict();
    state["milestones"] = milestones_;
    state["gamma"] = gamma_;
    return state;
  }
  void load_state_dict(const hookforge::state_dict& state) override {
    auto milestones = detail::lr_state::entry(state, "milestones", "MultiStepLR").toIntVector();
    const auto gamma = detail::lr_state::get_double(state, "gamma", "MultiStepLR");
    lr_scheduler::load_state_dict(state);
    milestones_ = std::move(milestones);
    gamma_ = gamma;
  }

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override {
    auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
    return base_lr * std::pow(gamma_, static_cast<double>(passed));
  }

  std::vector<std::int64_t> milestones_;  // sorted
  double gamma_;
};

/// lr = base_lr * gamma^epoch.
class ExponentialLR : public detail::closed_form_scheduler {
 public:
  ExponentialLR(torch::optim::Optimizer& optimizer, double gamma)
      : closed_form_scheduler(optimizer), gamma_(gamma) {
    step();
  }

  hookforge::state_dict state_dict() const override {
    auto state = lr_scheduler::state_dict();
    state["gamma"] = gamma_;
    return state;
  }
  void load_state_dict(const hookforge::state_dict& state) override {
    const auto gamma = detail::lr_state::get_double(state, "gamma", "ExponentialLR");
    lr_scheduler::load_state_dict(state);
    gamma_ = gamma;
  }

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override {
    return base_lr * std::pow(gamma_, static_cast<double>(epoch));
  }

  double gamma_;
};

/// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2
/// (no restarts; past T_max the cosine keeps going, as Python's closed form).
class CosineAnnealingLR : public detail::closed_form_scheduler {
 public:
  CosineAnnealingLR(torch::optim::Optimizer& optimizer, std::int64_t T_max, double eta_min = 0.0)
      : closed_form_scheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
    if (T_max <= 0) throw std::invalid_argument("hookforge: CosineAnnealingLR needs T_max > 0");
    step();
  }

  hookforge::state_dict state_dict() const override {
    auto state = lr_scheduler::state_dict();
    state["T_max"] = T_max_;
    state["eta_min"] = eta_min_;
    return state;
  }
  void load_state_dict(const hookforge::state_dict& state) override {
    const auto T_max = detail::lr_state::get_int(state, "T_max", "CosineAnnealingLR");
    const auto eta_min = detail::lr_state::get_double(state, "eta_min", "CosineAnnealingLR");
    lr_scheduler::load_state_dict(state);
    T_max_ = T_max;
    eta_min_ = eta_min;
  }

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override {
    const double angle = std::numbers::pi * static_cast<double>(epoch) / static_cast<double>(T_max_);
    return eta_min_ + (base_lr - eta_min_) * (1.0 + std::cos(angle)) / 2.0;
  }

  std::int64_t T_max_;
  double eta_min_;
};

/// Linear warm-up: lr = base_lr * (start + (end - start) * min(epoch, total_iters) / total_iters).
class LinearLR : public detail::closed_form_scheduler {
 public:
  explicit LinearLR(torch::optim::Optimizer& optimizer, double start_factor = 1.0 / 3.0,
                    double end_factor = 1.0, std::int64_t total_iters = 5)
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

  hookforge::state_dict state_dict() const override {
    auto state = lr_scheduler::state_dict();
    state["start_factor"] = start_factor_;
    state["end_factor"] = end_factor_;
    state["total_iters"] = total_iters_;
    return state;
  }
  void load_state_dict(const hookforge::state_dict& state) override {
    const auto start_factor = detail::lr_state::get_double(state, "start_factor", "LinearLR");
    const auto end_factor = detail::lr_state::get_double(state, "end_factor", "LinearLR");
    const auto total_iters = detail::lr_state::get_int(state, "total_iters", "LinearLR");
    lr_scheduler::load_state_dict(state);
    start_factor_ = start_factor;
    end_factor_ = end_factor;
    total_iters_ = total_iters;
  }

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override {
    const auto done = static_cast<double>(std::min(total_iters_, epoch));
    return base_lr *
           (start_factor_ + (end_factor_ - start_factor_) * done / static_cast<double>(total_iters_));
  }

  double start_factor_;
  double end_factor_;
  std::int64_t total_iters_;
};

/// lr = base_lr * factor for the first total_iters epochs, then base_lr.
class ConstantLR : public detail::closed_form_scheduler {
 public:
  explicit ConstantLR(torch::optim::Optimizer& optimizer, double factor = 1.0 / 3.0,
                      std::int64_t total_iters = 5)
      : closed_form_scheduler(optimizer), factor_(factor), total_iters_(total_iters) {
    if (!(factor >= 0.0 && factor <= 1.0))
      throw std::invalid_argument("hookforge: ConstantLR needs 0 <= factor <= 1");
    step();
  }

  hookforge::state_dict state_dict() const override {
    auto state = lr_scheduler::state_dict();
    state["factor"] = factor_;
    state["total_iters"] = total_iters_;
    return state;
  }
  void load_state_dict(const hookforge::state_dict& state) override {
    const auto factor = detail::lr_state::get_double(state, "factor", "ConstantLR");
    const auto total_iters = detail::lr_state::get_int(state, "total_iters", "ConstantLR");
    lr_scheduler::load_state_dict(state);
    factor_ = factor;
    total_iters_ = total_iters;
  }

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override {
    // Python's closed form, term for term: factor + (epoch >= total_iters) * (1 - factor).
    const double done = epoch >= total_iters_ ? 1.0 : 0.0;
    return base_lr * (factor_ + done * (1.0 - factor_));
  }

  double factor_;
  std::int64_t total_iters_;
};

enum class plateau_mode { min, max };
enum class plateau_threshold_mode { rel, abs };

/// ReduceLROnPlateau's settings; the defaults are Python's.
struct plateau_options {
  plateau_mode mode = plateau_mode::min;  // min: lower metric is better; max: higher is
  double factor = 0.1;                    // new_lr = old_lr * factor (must be < 1)
  std::int64_t patience = 10;             // bad epochs tolerated; the next one reduces
  double threshold = 1e-4;                // how much better counts as better
  plateau_threshold_mode threshold_mode = plateau_threshold_mode::rel;  // threshold relative or absolute
  std::int64_t cooldown = 0;              // epochs after a reduction that count as neither
  double min_lr = 0.0;                    // lower bound for every group
  std::vector<double> min_lrs = {};       // per group; replaces min_lr when not empty
  double eps = 1e-8;                      // skip reductions smaller than this
};

/// Multiplies every group's lr by `factor` once the metric has not improved for
/// more than `patience` epochs (Python's rule, including threshold, cooldown,
/// min_lr and eps). Reads the current lr of each group, so it composes with
/// manual lr changes. Call `step(metric)` once per epoch.
class ReduceLROnPlateau : public lr_scheduler {
 public:
  explicit ReduceLROnPlateau(torch::optim::Optimizer& optimizer, plateau_options options = {})
      : lr_scheduler(optimizer), options_(std::move(options)) {
    if (!(options_.factor < 1.0))
      throw std::invalid_argument("hookforge: ReduceLROnPlateau needs factor < 1");
    if (options_.min_lrs.empty()) {
      options_.min_lrs.assign(group_count(), options_.min_lr);
    } else if (options_.min_lrs.size() != group_count()) {
      throw std::invalid_argument("hookforge: ReduceLROnPlateau got " +
                                  std::to_string(options_.min_lrs.size()) + " min_lrs for " +
                                  std::to_string(group_count()) + " param groups");
    }
    last_epoch_ = 0;  // as Python: no initial step
    best_ = worst_value();
  }

  /// ReduceLROnPlateau needs the metric; this overload throws.
  void step() override {
    throw std::logic_error("hookforge: ReduceLROnPlateau needs the metric: call step(metric)");
  }

  void step(double metric) override {
    ++last_epoch_;
    if (is_better(metric, best_)) {
      best_ = metric;
      num_bad_epochs_ = 0;
    } else {
      ++num_bad_epochs_;
    }
    if (cooldown_counter_ > 0) {
      --cooldown_counter_;
      num_bad_epochs_ = 0;  // bad epochs during cooldown do not count
    }
    if (num_bad_epochs_ > options_.patience) {
      reduce_lrs();
      cooldown_counter_ = options_.cooldown;
      num_bad_epochs_ = 0;
    }
    last_lr_ = current_lrs();
  }

  bool wants_metric() const override { return true; }

  /// The best metric seen so far (+inf in min mode, -inf in max mode before the first step).
  double best() const { return best_; }
  std::int64_t num_bad_epochs() const { return num_bad_epochs_; }
  std::int64_t cooldown_counter() const { return cooldown_counter_; }
  bool in_cooldown() const { return cooldown_counter_ > 0; }

  hookforge::state_dict state_dict() const override {
    auto state = lr_scheduler::state_dict();
    state["mode"] = std::string(options_.mode == plateau_mode::min ? "min" : "max");
    state["factor"] = options_.factor;
    state["patience"] = options_.patience;
    state["threshold"] = options_.threshold;
    state["threshold_mode"] =
        std::string(options_.threshold_mode == plateau_threshold_mode::rel ? "rel" : "abs");
    state["cooldown"] = options_.cooldown;
    state["min_lrs"] = options_.min_lrs;
    state["eps"] = options_.eps;
    state["best"] = best_;
    state["num_bad_epochs"] = num_bad_epochs_;
    state["cooldown_counter"] = cooldown_counter_;
    return state;
  }

  void load_state_dict(const hookforge::state_dict& state) override {
    using namespace detail::lr_state;
    const char* owner = "ReduceLROnPlateau";
    plateau_options options;
    options.mode =
        parse_choice(entry(state, "mode", owner), "min", "max") ? plateau_mode::max : plateau_mode::min;
    options.factor = get_double(state, "factor", owner);
    options.patience = get_int(state, "patience", owner);
    options.threshold = get_double(state, "threshold", owner);
    options.threshold_mode = parse_choice(entry(state, "threshold_mode", owner), "rel", "abs")
                                 ? plateau_threshold_mode::abs
                                 : plateau_threshold_mode::rel;
    options.cooldown = get_int(state, "cooldown", owner);
    options.min_lrs = get_doubles(state, "min_lrs", owner);
    options.min_lr = options_.min_lr;
    options.eps = get_double(state, "eps", owner);
    const double best = get_double(state, "best", owner);
    const auto num_bad_epochs = get_int(state, "num_bad_epochs", owner);
    const auto cooldown_counter = get_int(state, "cooldown_counter", owner);
    if (options.min_lrs.size() != group_count()) {
      throw std::invalid_argument("hookforge: ReduceLROnPlateau state_dict has the wrong number of min_lrs");
    }
    lr_scheduler::load_state_dict(state);
    options_ = std::move(options);
    best_ = best;
    num_bad_epochs_ = num_bad_epochs;
    cooldown_counter_ = cooldown_counter;
  }

 private:
  // false for `first`, true for `second`; anything else is a corrupt state_dict.
  static bool parse_choice(const c10::IValue& value, const char* first, const char* second) {
    const std::string& text = value.toStringRef();
    if (text != first && text != second) {
      throw std::invalid_argument("hookforge: ReduceLROnPlateau state_dict has unknown mode '" + text + "'");
    }
    return text == second;
  }

  double worst_value() const {
    constexpr double inf = std::numeric_limits<double>::infinity();
    return options_.mode == plateau_mode::min ? inf : -inf;
  }

  bool is_better(double current, double best) const {
    const bool rel = options_.threshold_mode == plateau_threshold_mode::rel;
    if (options_.mode == plateau_mode::min) {
      return rel ? current < best * (1.0 - options_.threshold) : current < best - options_.threshold;
    }
    return rel ? current > best * (options_.threshold + 1.0) : current > best + options_.threshold;
  }

  void reduce_lrs() {
    auto& groups = optimizer().param_groups();
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const double old_lr = groups[i].options().get_lr();
      const double new_lr = std::max(old_lr * options_.factor, options_.min_lrs.at(i));
      if (old_lr - new_lr > options_.eps) groups[i].options().set_lr(new_lr);
    }
  }

  plateau_options options_;
  double best_ = 0.0;
  std::int64_t num_bad_epochs_ = 0;
  std::int64_t cooldown_counter_ = 0;
};

}  // namespace hookforge
