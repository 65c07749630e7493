// hookforge/hooks/early_stopping.hpp — EarlyStopping: stop the run when a validation score
// stops improving, turns non-finite, or reaches a threshold; its state survives a resume.
//
//   hookforge::Trainer trainer(model, train, val, {.epochs = 200},
//                              hookforge::EarlyStopping({.monitor = "psnr", .patience = 10}));
//
// After each validation: at on_trainer_epoch_finished of each epoch that validated at its end
// (other epochs do not count), and at on_trainer_validation_finished, after each validation
// between batches (trainer_options::val_interval_steps), whose stop ends the epoch there:
//   - a non-finite score stops at once (check_finite);
//   - a score better than stopping_threshold stops at once;
//   - a score better than the best by more than min_delta becomes the best and resets the
//     count; any other score (NaN too, when check_finite is off) adds one, and `patience`
//     of them in a row stop the run.
// "Better" is the rule (greater / less), inferred from the monitor's name when not given
// (torch/metrics/metric_rule.hpp). The stop goes through ctx.request_stop with a reason naming
// the score and the values; a stop already requested this epoch keeps its reason.
// A monitor missing from the validation scores is a warning (once), or an error when
// `strict`. The best score, its epoch and the count are the hook's state_dict, so a
// resumed run stops where the uninterrupted one would (MMEngine's hook starts over).
// Priority LOW: before CheckpointSaver (VERY_LOW), whose checkpoint then holds this
// epoch's state and which saves the last epoch of a run that stops.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/metrics/metric_rule.hpp"
#include "hookforge/torch/runners/trainer.hpp"

namespace hookforge {

/// EarlyStopping's options.
struct early_stopping_options {
  std::string monitor = "auto";  ///< a validation score; "auto": the trainer's monitor
  std::string rule = "";         ///< "greater" or "less"; empty: inferred from the monitor's name
  double min_delta = 0.0;        ///< an improvement must exceed this (>= 0)
  std::int64_t patience = 5;     ///< validations without improvement that stop the run (>= 1)
  bool strict = false;           ///< a missing monitor is an error, not a warning
  bool check_finite = true;      ///< a NaN or infinite score stops the run at once
  std::optional<double> stopping_threshold =
      std::nullopt;  ///< a score better than this stops the run
};

class EarlyStopping {
 public:
  static constexpr int priority = priority::LOW;
  static constexpr std::string_view state_key = "EarlyStopping";

  explicit EarlyStopping(early_stopping_options options = {}) : options_(std::move(options)) {
    const auto& o = options_;
    if (o.monitor.empty())
      throw std::invalid_argument(
          "EarlyStopping: monitor must name a validation score or be \"auto\", got \"\"");
    if (!(o.min_delta >= 0.0) || !std::isfinite(o.min_delta))
      throw std::invalid_argument(
          fmt::format("EarlyStopping: min_delta must be finite and >= 0, got {}", o.min_delta));
    if (o.patience < 1)
      throw std::invalid_argument(
          fmt::format("EarlyStopping: patience must be >= 1, got {}", o.patience));
    if (o.stopping_threshold && std::isnan(*o.stopping_threshold))
      throw std::invalid_argument("EarlyStopping: stopping_threshold must be a number, got nan");
    if (o.monitor == "auto")
      check_rule_text("EarlyStopping", o.rule);
    else
      rule_ = metric_rule_for("EarlyStopping", o.monitor, o.rule);
  }

  /// At on_trainer_epoch_finished and on_trainer_validation_finished.
  void check(TrainerContext& ctx) {
    if (!ctx.validated) return;
    const std::string& metric = resolve_monitor(ctx);
    auto it = ctx.val_scores.find(metric);
    if (it == ctx.val_scores.end()) {
      std::string names;
      for (const auto& [name, value] : ctx.val_scores) names += (names.empty() ? "" : ", ") + name;
      const auto message =
          fmt::format("EarlyStopping: monitor '{}' is not a validation score (scores: {})", metric,
                      names.empty() ? "none" : names);
      if (options_.strict) throw std::invalid_argument(message);
      if (!warned_) warn(message + "; early stopping is skipped");
      warned_ = true;
      return;
    }
    if (auto reason = update(it->second, ctx.epoch + 1); reason && !ctx.stop_training)
      ctx.request_stop(std::move(*reason));
  }

  /// Best score, its epoch, the count of validations without improvement, and the score's
  /// name; saved in the trainer's checkpoints (section "hooks.trainer.EarlyStopping").
  state_map state_dict() const {
    return {{"monitor", monitor_},
            {"best", best_},
            {"best_epoch", best_epoch_},
            {"wait_count", wait_count_}};
  }

  void load_state_dict(const state_map& state) {
    constexpr const char* hook = "EarlyStopping";
    auto saved_monitor = state_value<std::string>(state, hook, "monitor");
    const auto best = state_value<double>(state, hook, "best");
    const auto best_epoch = state_value<std::int64_t>(state, hook, "best_epoch");
    const auto wait_count = state_value<std::int64_t>(state, hook, "wait_count");
    if (!saved_monitor.empty() && options_.monitor != "auto" && saved_monitor != options_.monitor)
      throw std::invalid_argument(fmt::format(
          "EarlyStopping: the checkpoint's state monitors '{}', this hook monitors '{}'",
          saved_monitor, options_.monitor));
    monitor_ = std::move(saved_monitor);
    best_ = best;
    best_epoch_ = best_epoch;
    wait_count_ = wait_count;
  }

  /// The best score so far (NaN before the first), and its epoch (1-based; 0 before).
  double best() const { return best_; }
  std::int64_t best_epoch() const { return best_epoch_; }
  /// Validations in a row without improvement.
  std::int64_t wait_count() const { return wait_count_; }
  const early_stopping_options& options() const { return options_; }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(check, points::on_trainer_epoch_finished),
                          HOOKFORGE_HOOKS_INTO(check, points::on_trainer_validation_finished));

 private:
  /// One validation's score at `epoch` (1-based): the stop reason, or nullopt to go on.
  std::optional<std::string> update(double score, std::int64_t epoch) {
    const metric_rule rule = *rule_;
    const auto& metric = monitor_;
    if (options_.check_finite && !std::isfinite(score))
      return fmt::format("EarlyStopping: {} = {} at epoch {} is not finite ({})", metric, score,
                         epoch, best_text());
    if (is_better(rule, score, best_, options_.min_delta)) {
      best_ = score;
      best_epoch_ = epoch;
      wait_count_ = 0;
    } else {
      ++wait_count_;
    }
    if (options_.stopping_threshold && is_better(rule, score, *options_.stopping_threshold))
      return fmt::format("EarlyStopping: {} = {} at epoch {} is {} than stopping_threshold {}",
                         metric, score, epoch, to_string(rule), *options_.stopping_threshold);
    if (wait_count_ >= options_.patience)
      return fmt::format(
          "EarlyStopping: {} did not improve by more than {} for {} validation(s) ({}, last {})",
          metric, options_.min_delta, wait_count_, best_text(), score);
    return std::nullopt;
  }

  std::string best_text() const {
    return best_epoch_ == 0 ? std::string("no best yet")
                            : fmt::format("best {} at epoch {}", best_, best_epoch_);
  }

  const std::string& resolve_monitor(const TrainerContext& ctx) {
    const std::string metric = options_.monitor == "auto" ? ctx.monitor : options_.monitor;
    if (metric.empty())
      throw std::invalid_argument(
          "EarlyStopping: monitor is \"auto\" but the trainer has no monitor");
    if (!rule_) rule_ = metric_rule_for("EarlyStopping", metric, options_.rule);
    if (monitor_ != metric) {
      if (!monitor_.empty())
        throw std::invalid_argument(fmt::format(
            "EarlyStopping: the restored state monitors '{}', the trainer's monitor is now '{}'",
            monitor_, metric));
      monitor_ = metric;
    }
    return monitor_;
  }

  early_stopping_options options_;
  std::optional<metric_rule> rule_;
  std::string monitor_;  ///< the score monitored (the trainer's for "auto"), once known
  double best_ = std::numeric_limits<double>::quiet_NaN();
  std::int64_t best_epoch_ = 0;
  std::int64_t wait_count_ = 0;
  bool warned_ = false;
};

}  // namespace hookforge
