// hookforge/hooks/iter_timer.hpp — IterTimer: data time and step time per iteration, and ETAs.
//
//   hookforge::IterTimer timer;
//   TrainingEpochRunner train{optimizer, {}, hookforge::ref(timer)};
//   ValidationEpochRunner val{{}, hookforge::ref(timer)};
//   ProgressBar bar{{.timer = &timer}};          // shows the timer's figures
//   timer.training().mean_step, timer.training().run_eta   // seconds
//
// Per iteration, as MMEngine's IterTimerHook measures it:
//   data time   the end of the previous iteration (or on_epoch_start) to on_pre_step:
//               the time spent waiting for the loader
//   step time   on_pre_step to on_post_step: forward, backward, update and the hooks between
// Runners without on_pre_step (inference, validation) report the whole iteration as step
// time and 0 data time. Each iteration costs two steady_clock reads and a few additions.
//
// On a CUDA device the host's step time is the time to launch the step's kernels, which
// run later. The timer then also times each step on the GPU, with a pair of CUDA events
// around on_pre_step..on_post_step on the batch's device, read once the GPU has passed
// them (never waiting, so no synchronisation): device_step is the latest finished step's
// GPU time, a few steps behind the host figures (detail/device_timer.hpp).
//
// The figures are kept per kind of runner — training (a context with an optimiser) and
// evaluation (the others) — so one timer shared by ref between a training and a
// validation runner keeps both. Counters come from the context, so nothing drifts by one
// between training and validation, or across a resume: the timer has no state to save.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <type_traits>
#include <string_view>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"
#include "hookforge/hooks/detail/device_timer.hpp"

namespace hookforge {

/// One kind of runner's timings, in seconds, as IterTimer keeps them.
struct iteration_times {
  std::int64_t iterations = 0;  ///< iterations timed this epoch
  double data = 0;              ///< last iteration: waiting for its batch (0 without on_pre_step)
  double step = 0;              ///< last iteration: on_pre_step to on_post_step
  double iteration = 0;         ///< last iteration: data + step
  double mean_data = 0;         ///< this epoch's means of the three
  double mean_step = 0;
  double mean_iteration = 0;
  double elapsed = 0;             ///< since this epoch's on_epoch_start
  double epoch_eta = -1;          ///< left in this epoch at the mean iteration time (-1: unknown)
  double run_eta = -1;            ///< left in the run's training: this epoch and the epochs after
                                  ///< it (-1: unknown, and always for evaluation)
  std::int64_t device_steps = 0;  ///< steps of this epoch timed on the GPU so far
  double device_step = -1;        ///< the latest of them: GPU time (-1: none, or not on CUDA)
  double mean_device_step = -1;   ///< their mean (-1: none)
};

class IterTimer {
  using clock = std::chrono::steady_clock;

 public:
  static constexpr int priority = priority::NORMAL;

  /// The training runner's figures (TrainingEpochRunner, GANTrainingRunner).
  const iteration_times& training() const { return slots_[0].times; }
  /// The figures of runners that do not train (validation, inference, benchmark).
  const iteration_times& evaluation() const { return slots_[1].times; }
  /// The figures for the runner whose context is `C`.
  template <class C>
  const iteration_times& of(const C&) const {
    return slots_[index<C>()].times;
  }

  /// One handler for the three points, so the timer attaches to runners without
  /// on_pre_step (validation, inference) too.
  /// What tick reads from a context: the epoch counters (the first one it lacks; "" for none).
  template <class C>
  static consteval std::string_view context_lacks() {
    return epoch_counters_lacks<C>();
  }

  template <context_for<IterTimer> C, class P>
    requires one_of_points<P, points::on_epoch_start, points::on_pre_step, points::on_post_step>
  void tick(C& ctx, P) {
    if constexpr (std::is_same_v<P, points::on_epoch_start>)
      start<C>();
    else if constexpr (std::is_same_v<P, points::on_pre_step>)
      pre_step(ctx);
    else
      post_step(ctx);
  }

  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(
      tick, points::on_epoch_start, points::on_pre_step, points::on_post_step));

 private:
  template <class C>
  void start() {
    auto& s = slots_[index<C>()];
    s.gpu.discard();
    s.times = {};
    s.data_sum = s.step_sum = s.gpu_sum = 0;
    s.pre_step_seen = false;
    s.epoch_start = s.last_end = clock::now();
    s.started = true;
  }

  template <class C>
  void pre_step(const C& ctx) {
    auto& s = slots_[index<C>()];
    if constexpr (requires { ctx.entry.begin()->second.device(); })
      for (const auto& [name, tensor] : ctx.entry)
        if (tensor.defined()) {
          s.gpu.start(tensor.device());
          break;
        }
    s.step_start = clock::now();
    s.pre_step_seen = true;
  }

  template <class C>
  void post_step(const C& ctx) {
    const auto end = clock::now();
    auto& s = slots_[index<C>()];
    s.gpu.stop();
    s.gpu.collect([&](double seconds) {
      auto& t = s.times;
      t.device_step = seconds;
      s.gpu_sum += seconds;
      t.mean_device_step = s.gpu_sum / static_cast<double>(++t.device_steps);
    });
    if (!s.started) {  // attached in the middle of an epoch: time from here on
      s.epoch_start = s.last_end = end;
      s.started = true;
      s.pre_step_seen = false;
      return;
    }
    auto& t = s.times;
    t.iteration = seconds(end - s.last_end);
    t.data = s.pre_step_seen ? seconds(s.step_start - s.last_end) : 0.0;
    t.step = t.iteration - t.data;
    s.pre_step_seen = false;
    s.last_end = end;
    s.data_sum += t.data;
    s.step_sum += t.step;
    ++t.iterations;
    const auto n = static_cast<double>(t.iterations);
    t.mean_data = s.data_sum / n;
    t.mean_step = s.step_sum / n;
    t.mean_iteration = (s.data_sum + s.step_sum) / n;
    t.elapsed = seconds(end - s.epoch_start);
    if (ctx.num_batches >= 0) {
      const auto left = std::max<std::int64_t>(0, ctx.num_batches - ctx.batch_idx - 1);
      t.epoch_eta = t.mean_iteration * static_cast<double>(left);
      if (updates_parameters<C> && ctx.total_epochs > 0) {
        const auto epochs_left = std::max<std::int64_t>(0, ctx.total_epochs - ctx.epoch - 1);
        t.run_eta =
            t.epoch_eta + t.mean_iteration * static_cast<double>(epochs_left * ctx.num_batches);
      }
    }
  }

  struct slot {
    iteration_times times;
    clock::time_point epoch_start{}, last_end{}, step_start{};
    double data_sum = 0;
    double step_sum = 0;
    double gpu_sum = 0;
    detail::hooks::device_timer gpu;
    bool started = false;
    bool pre_step_seen = false;
  };

  template <class C>
  static constexpr std::size_t index() {
    return updates_parameters<C> ? 0 : 1;
  }
  static double seconds(clock::duration d) { return std::chrono::duration<double>(d).count(); }

  std::array<slot, 2> slots_{};
};

}  // namespace hookforge
