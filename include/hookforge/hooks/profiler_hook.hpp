// hookforge/hooks/profiler_hook.hpp — ProfilerHook: LibTorch's profiler (Kineto) over a
// schedule of training steps, as MMEngine's ProfilerHook and Lightning's PyTorchProfiler record
// PyTorch's; its traces where TensorBoard's PyTorch profiler plugin, Perfetto and
// chrome://tracing open them.
//
//   hookforge::ProfilerHook profiler({.wait = 1, .warmup = 1, .active = 3});
//   hookforge::TrainingEpochRunner train(adam, {}, hookforge::ref(profiler));  // the steps
//   hookforge::Trainer trainer(model, train, validate, {.work_dir = "runs/a"},
//                              hookforge::ref(profiler));                      // the end
//   // then: tensorboard --logdir runs/a   (the PyTorch profiler plugin), or ui.perfetto.dev
//
// The schedule is torch.profiler.schedule's, on the training steps this run does: skip
// `skip_first` steps, then `repeat` cycles (0: until training ends) of `wait` steps doing
// nothing, `warmup` steps with the profiler started but not recording, and `active` steps
// recorded. Each cycle's trace is written when its last active step ends, to
// `<out_dir>/<worker>.<time in ns>.pt.trace.json` (out_dir: <work_dir>/profiler; worker:
// <hostname>_<pid>, so each rank of a distributed run writes its own), and the table of the
// ops with the most self CPU time is printed (`row_limit` rows; 0: none). Each recorded step
// is a range "ProfilerStep#<global step>", as PyTorch's profiler marks them; hooks timed by a
// HookProfiler (hookforge-run: a HookProfiler in the trainer's hooks) are ranges
// "hook: <Hook>.<method>@<point>", so the trace shows which hook a step's time went to.
// `record_shapes`, `profile_memory` and `with_stack` are the profiler's options of those names.
//
// Attach one instance to the training runner (the steps) and the Trainer (a window still
// open when training ends is written then), by hookforge::ref. The profiler records the
// training thread. LibTorch 2.x only: Debian's 1.13 is built without Kineto, and the
// constructor says so (compat.hpp: HOOKFORGE_HAS_KINETO_TRACES).
// Priority HIGHEST: a step's range opens before the other hooks' handlers run in it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/hooks/detail/kineto_session.hpp"
#include "hookforge/torch/compat.hpp"
#include "hookforge/torch/profiling/range.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"
#include "hookforge/torch/runners/trainer_types.hpp"

#if HOOKFORGE_HAS_KINETO_TRACES
#include <torch/cuda.h>
#endif

namespace hookforge {

struct profiler_hook_options {
  std::int64_t wait = 1;               ///< steps doing nothing at the start of each cycle
  std::int64_t warmup = 1;             ///< steps with the profiler started, not recording
  std::int64_t active = 3;             ///< steps recorded: one trace per cycle
  std::int64_t repeat = 1;             ///< cycles; 0: until training ends
  std::int64_t skip_first = 0;         ///< steps before the first cycle
  bool record_shapes = false;          ///< each op's input shapes
  bool profile_memory = false;         ///< tensor memory allocated and freed
  bool with_stack = false;             ///< the C++ stack of each op
  std::filesystem::path out_dir = {};  ///< empty: <the trainer's work_dir>/profiler
  std::string worker_name = {};        ///< empty: <hostname>_<pid>
  std::int64_t row_limit = 10;         ///< the table's rows per trace; 0: no table
  std::ostream* stream = nullptr;      ///< where the table goes (nullptr: stdout)
};

class ProfilerHook {
 public:
  static constexpr int priority = priority::HIGHEST;

  explicit ProfilerHook(profiler_hook_options options = {}) : options_(std::move(options)) {
#if !HOOKFORGE_HAS_KINETO_TRACES
    throw std::invalid_argument(
        "ProfilerHook: this LibTorch has no Kineto profiler traces (Debian's LibTorch 1.13 is "
        "built with USE_KINETO=OFF): build against LibTorch 2.x (the pip wheel) to profile");
#endif
    auto check = [](std::int64_t value, std::int64_t least, std::string_view name) {
      if (value < least)
        throw std::invalid_argument(
            fmt::format("ProfilerHook: {} must be >= {}, got {}", name, least, value));
    };
    check(options_.wait, 0, "wait");
    check(options_.warmup, 0, "warmup");
    check(options_.active, 1, "active");
    check(options_.repeat, 0, "repeat");
    check(options_.skip_first, 0, "skip_first");
    check(options_.row_limit, 0, "row_limit");
  }

  /// What the step handlers need of a runner's context: the epoch counters, of a runner that
  /// updates parameters.
  template <class C>
  static consteval std::string_view context_lacks() {
    if constexpr (std::is_same_v<C, TrainerContext>)
      return "";
    else if constexpr (!updates_parameters<C>)
      return "optimizer (ProfilerHook profiles training steps: attach it to the training runner "
             "and the Trainer)";
    else
      return epoch_counters_lacks<C>();
  }

  /// At a training runner's on_pre_step: the schedule moves on, and the step's range opens.
  template <context_for<ProfilerHook> C>
    requires(!std::is_same_v<C, TrainerContext> && updates_parameters<C>)
  void profile(C& ctx, points::on_pre_step) {
#if HOOKFORGE_HAS_KINETO_TRACES
    session().step(ctx.global_step, [&](auto result) { write(std::move(result)); });
#else
    (void)ctx;
#endif
  }

  /// At a training runner's on_epoch_end: the last step's range closes.
  template <context_for<ProfilerHook> C>
    requires(!std::is_same_v<C, TrainerContext> && updates_parameters<C>)
  void profile(C&, points::on_epoch_end) {
#if HOOKFORGE_HAS_KINETO_TRACES
    if (state_->session) state_->session->close_step();
#endif
  }

  /// At on_training_began: where the traces go (the trainer's work_dir).
  void profile(TrainerContext& ctx, points::on_training_began) { state_->work_dir = ctx.work_dir; }

  /// At on_training_finished: a window still recording is written.
  void profile(TrainerContext&, points::on_training_finished) {
#if HOOKFORGE_HAS_KINETO_TRACES
    if (state_->session) state_->session->finish([&](auto result) { write(std::move(result)); });
    state_->session.reset();
#endif
  }

  /// The traces written so far.
  const std::vector<std::filesystem::path>& traces() const { return state_->traces; }
  const profiler_hook_options& options() const { return options_; }

  /// The folder the traces go to.
  std::filesystem::path directory() const {
    if (!options_.out_dir.empty()) return options_.out_dir;
    const auto& dir = state_->work_dir;
    return (dir.empty() ? std::filesystem::path(".") : dir) / "profiler";
  }

  static constexpr auto bindings = hookforge::bindings(
      HOOKFORGE_HOOKS_INTO(profile, points::on_pre_step, points::on_epoch_end,
                           points::on_training_began, points::on_training_finished));

 private:
  // Shared by copies (a hook is copied before it is attached): one profiler session.
  struct shared_state {
    std::filesystem::path work_dir;
    std::vector<std::filesystem::path> traces;
#if HOOKFORGE_HAS_KINETO_TRACES
    std::unique_ptr<detail::kineto::session> session;
#endif
  };

#if HOOKFORGE_HAS_KINETO_TRACES
  detail::kineto::session& session() {
    if (!state_->session) {
      // Kineto logs an ERROR line when a CUDA build of LibTorch finds no GPU; on such a
      // machine it has nothing to say about CUDA, so unless the user set its level, quiet.
      const bool cuda = torch::cuda::is_available();
      if (!cuda) ::setenv("KINETO_LOG_LEVEL", "5", /*overwrite=*/0);
      state_->session = std::make_unique<detail::kineto::session>(
          detail::kineto::schedule{.wait = options_.wait,
                                   .warmup = options_.warmup,
                                   .active = options_.active,
                                   .repeat = options_.repeat,
                                   .skip_first = options_.skip_first},
          detail::kineto::config_options{.record_shapes = options_.record_shapes,
                                         .profile_memory = options_.profile_memory,
                                         .with_stack = options_.with_stack,
                                         .cuda = cuda});
    }
    return *state_->session;
  }

  std::string worker() const {
    if (!options_.worker_name.empty()) return options_.worker_name;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return fmt::format("{}_{}", host, ::getpid());
  }

  /// A window's trace, written whole (a temporary file, renamed), and its table.
  void write(std::unique_ptr<detail::kineto::result> result) {
    const auto dir = directory();
    std::filesystem::create_directories(dir);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    const auto path = dir / fmt::format("{}.{}.pt.trace.json", worker(), ns);
    const auto partial = std::filesystem::path(path.string() + ".partial");
    const auto rows = detail::kineto::self_times(*result);
    result->save(partial.string());  // Kineto's save empties the result: the table first
    std::filesystem::rename(partial, path);
    state_->traces.push_back(path);
    if (options_.row_limit > 0) print_table(path, rows);
  }

  void print_table(const std::filesystem::path& path,
                   const std::vector<detail::kineto::op_time>& rows) const {
    std::string text = fmt::format("profiler trace {}: top ops by self CPU time\n", path.string());
    text +=
        fmt::format("{:<48} {:>12} {:>13} {:>7}\n", "name", "self CPU us", "CPU total us", "calls");
    const auto n = std::min<std::size_t>(rows.size(), static_cast<std::size_t>(options_.row_limit));
    for (std::size_t i = 0; i < n; ++i)
      text += fmt::format("{:<48} {:>12.1f} {:>13.1f} {:>7}\n", rows[i].name.substr(0, 48),
                          rows[i].self_us, rows[i].total_us, rows[i].calls);
    if (options_.stream)
      *options_.stream << text << std::flush;
    else
      fmt::print("{}", text);
  }
#endif

  profiler_hook_options options_;
  std::shared_ptr<shared_state> state_ = std::make_shared<shared_state>();
  range_observation ranges_;  // the runners' step, phase and point ranges in the traces
};

}  // namespace hookforge
