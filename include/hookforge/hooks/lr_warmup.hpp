// hookforge/hooks/lr_warmup.hpp — LRWarmup: per-iteration learning-rate warm-up.
//
//   hookforge::StepLR schedule{optimizer, 30};                          // the epoch schedule
//   TrainingEpochRunner train{optimizer, {}, hookforge::LRWarmup{{.warmup_iters = 500}}};
//   hookforge::LRWarmup{{.warmup_iters = 1000, .mode = hookforge::warmup_mode::exponential,
//                        .start_factor = 0.01}}
//
// For the first `warmup_iters` optimiser steps, the learning rate of each param group is
// the group's regular rate (the one the epoch scheduler, or the user, set) times a factor
// of the step t = 0, 1, … (optimiser updates taken so far, ctx.optimizer_steps):
//   linear       start_factor + (1 - start_factor) * t / warmup_iters   (torch's LinearLR)
//   constant     start_factor                                           (torch's ConstantLR)
//   exponential  start_factor ^ (1 - t / warmup_iters)                  (mmcv's 'exp' warm-up)
// Linear and constant are torch's schedulers with total_iters = warmup_iters stepped per
// update, and MMEngine's by iteration with end = warmup_iters + 1 (its usual end =
// warmup_iters reaches the full rate one update sooner); tests/peers/parity.py checks both.
// From step warmup_iters on the hook leaves the rate alone: the epoch scheduler
// (hookforge/torch/optim/*) has it from there. The factor is set at on_pre_step and so
// holds for the whole update, gradient accumulation included; updates skipped (a hook's
// veto, the gradient scaler's inf check) do not advance t.
//
// The hook scales the regular rate and puts it back at the training runner's
// on_epoch_end: outside the epoch's steps the optimiser holds the regular rates, so the
// epoch scheduler steps from them, and the trainer records and checkpoints them. A rate
// changed during the epoch by someone else (a per-step schedule) becomes the new regular
// rate. Because t is ctx.optimizer_steps, which the runner saves and restores, a resumed
// run continues the warm-up exactly where it was: the hook has no state of its own.
// On the GAN runner it warms both optimisers, each by its own update count (d_steps, g_steps).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <torch/optim/optimizer.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"

namespace hookforge {

/// The shape of LRWarmup's factor over the warm-up steps.
enum class warmup_mode { linear, constant, exponential };

struct lr_warmup_options {
  std::int64_t warmup_iters = 0;  ///< optimiser steps of warm-up (>= 1)
  warmup_mode mode = warmup_mode::linear;
  double start_factor = 0.001;  ///< the factor at step 0, in (0, 1]
};

class LRWarmup {
 public:
  /// Before other on_pre_step hooks, so they see this step's learning rate.
  static constexpr int priority = priority::HIGH;

  explicit LRWarmup(lr_warmup_options options) : options_(options) {
    if (options_.warmup_iters < 1)
      throw std::invalid_argument("LRWarmup: warmup_iters must be >= 1, got " +
                                  std::to_string(options_.warmup_iters));
    if (!(options_.start_factor > 0 && options_.start_factor <= 1))
      throw std::invalid_argument(
          fmt::format("LRWarmup: start_factor must be in (0, 1], got {}", options_.start_factor));
  }

  /// The factor at optimiser step `t` (1 from warmup_iters on).
  double factor(std::int64_t t) const {
    if (t >= options_.warmup_iters) return 1.0;
    const double s = options_.start_factor;
    const double progress = static_cast<double>(t) / static_cast<double>(options_.warmup_iters);
    switch (options_.mode) {
      case warmup_mode::linear:
        return s + (1.0 - s) * progress;
      case warmup_mode::constant:
        return s;
      case warmup_mode::exponential:
        return std::pow(s, 1.0 - progress);
    }
    return 1.0;
  }

  /// What the handlers read from a context (its optimisers and their update counts): the
  /// first field it lacks ("" for none).
  template <class C>
  static consteval std::string_view context_lacks() {
    return training_lacks<C>();
  }

  template <context_for<LRWarmup> C>
  void warm(C& ctx) {
    for (const auto& [optimizer, t] : optimizer_slots(ctx)) {
      if (optimizer == nullptr) continue;
      auto& s = tracked(*optimizer);
      if (t >= options_.warmup_iters) {
        put_back(s);
        continue;
      }
      auto& groups = optimizer->param_groups();
      if (!s.active || s.regular.size() != groups.size()) {
        s.regular.clear();
        for (auto& group : groups) s.regular.push_back(group.options().get_lr());
      } else {
        // Someone else set a rate: that is the new regular one.
        for (std::size_t i = 0; i < groups.size(); ++i)
          if (groups[i].options().get_lr() != s.applied[i])
            s.regular[i] = groups[i].options().get_lr();
      }
      const double f = factor(t);
      s.applied.resize(groups.size());
      for (std::size_t i = 0; i < groups.size(); ++i) {
        s.applied[i] = s.regular[i] * f;
        groups[i].options().set_lr(s.applied[i]);
      }
      s.active = true;
    }
  }

  template <context_for<LRWarmup> C>
  void restore(C&) {
    for (auto& s : tracked_) put_back(s);
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(warm, points::on_pre_step),
                          HOOKFORGE_HOOKS_INTO(restore, points::on_epoch_end));

  const lr_warmup_options& options() const { return options_; }

 private:
  struct tracked_optimizer {
    torch::optim::Optimizer* optimizer = nullptr;
    std::vector<double> regular;  // the rates the factor scales
    std::vector<double> applied;  // the rates the hook wrote
    bool active = false;          // the optimiser holds warmed rates
  };

  tracked_optimizer& tracked(torch::optim::Optimizer& optimizer) {
    for (auto& s : tracked_)
      if (s.optimizer == &optimizer) return s;
    tracked_.push_back({&optimizer, {}, {}, false});
    return tracked_.back();
  }

  static void put_back(tracked_optimizer& s) {
    if (!s.active) return;
    auto& groups = s.optimizer->param_groups();
    for (std::size_t i = 0; i < groups.size() && i < s.regular.size(); ++i) {
      // A rate someone else set since the hook wrote it is theirs to keep.
      if (groups[i].options().get_lr() == s.applied[i]) groups[i].options().set_lr(s.regular[i]);
    }
    s.active = false;
  }

  lr_warmup_options options_;
  std::vector<tracked_optimizer> tracked_;
};

}  // namespace hookforge
