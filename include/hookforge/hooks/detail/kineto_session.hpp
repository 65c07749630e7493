// hookforge/hooks/detail/kineto_session.hpp — LibTorch's profiler (Kineto) driven over a
// schedule of steps as PyTorch's torch.profiler.profile drives it, its traces saved as Chrome
// trace JSON, and the table of the ops that took the most self CPU time. What ProfilerHook
// runs; nothing of it knows hooks. LibTorch 2.x only (compat.hpp: HOOKFORGE_HAS_KINETO_TRACES).
//
//   kineto::session s(schedule, config_options);
//   for (step n ...) { s.step(n, on_trace); ... }   // on_trace(result) at each window's end
//   s.finish(on_trace);
//
// The schedule is torch.profiler.schedule's: after `skip_first` steps, cycles of `wait` steps
// doing nothing, `warmup` steps with the profiler prepared but not recording, and `active`
// steps recorded, the last of which ends the window and hands its trace over; `repeat`
// cycles (0: until the end). Each recorded step is a range "ProfilerStep#<n>" (user
// annotation), which the viewers take for the steps. The profiler records the thread it is
// enabled on; it is enabled, disabled and saved on the training thread.
#pragma once

#include "hookforge/torch/compat.hpp"

#if HOOKFORGE_HAS_KINETO_TRACES

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <ATen/record_function.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/profiler_kineto.h>

namespace hookforge::detail::kineto {

struct schedule {
  std::int64_t wait = 1, warmup = 1, active = 3, repeat = 1, skip_first = 0;

  enum class action { none, warmup, record, record_and_save };

  /// What step `n` (counted from 0, the first step the session sees) does.
  action at(std::int64_t n) const {
    if (n < skip_first) return action::none;
    n -= skip_first;
    const std::int64_t cycle = wait + warmup + active;
    if (repeat > 0 && n / cycle >= repeat) return action::none;
    const std::int64_t m = n % cycle;
    if (m < wait) return action::none;
    if (m < wait + warmup) return action::warmup;
    return m < cycle - 1 ? action::record : action::record_and_save;
  }
};

struct config_options {
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_stack = false;
  bool cuda = false;  ///< CUDA activities too (a GPU is present)
};

using result = torch::autograd::profiler::ProfilerResult;

class session {
 public:
  session(schedule plan, config_options options) : plan_(plan), options_(options) {}
  ~session() {
    step_range_.reset();
    if (enabled_) torch::autograd::profiler::disableProfiler();  // an exception ended the run
  }
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// Before step `global_step`: the last step's range closed, the schedule's transition for
  /// the next step of this session, and its range opened when it records. `ready` gets each
  /// window's result.
  template <class Ready>
  void step(std::int64_t global_step, Ready&& ready) {
    close_step();
    const auto next = plan_.at(steps_++);
    transit(next, ready);
    if (next == action::record || next == action::record_and_save) {
      step_range_.emplace(at::RecordScope::USER_SCOPE);
      if (step_range_->isActive()) step_range_->before(fmt::format("ProfilerStep#{}", global_step));
    }
  }

  /// The step's range closed (an epoch's end: what follows is not the step's).
  void close_step() { step_range_.reset(); }

  /// The end of training: a window in progress is stopped and handed over (what torch.profiler
  /// does on leaving its `with` block), a warm-up dropped.
  template <class Ready>
  void finish(Ready&& ready) {
    close_step();
    const action from = std::exchange(current_, action::none);
    if (from == action::warmup) start();
    if (from != action::none) {
      auto result = stop();
      if (from != action::warmup) ready(std::move(result));
    }
  }

  bool recording() const { return enabled_; }

 private:
  using action = schedule::action;

  torch::profiler::impl::ProfilerConfig config() const {
    torch::profiler::impl::ExperimentalConfig experimental;
    return torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::KINETO,
                                                 options_.record_shapes, options_.profile_memory,
                                                 options_.with_stack, /*with_flops=*/false,
                                                 /*with_modules=*/false, experimental);
  }

  std::set<torch::profiler::impl::ActivityType> activities() const {
    std::set<torch::profiler::impl::ActivityType> out{torch::profiler::impl::ActivityType::CPU};
    if (options_.cuda) out.insert(torch::profiler::impl::ActivityType::CUDA);
    return out;
  }

  void prepare() { torch::autograd::profiler::prepareProfiler(config(), activities()); }
  void start() {
    torch::autograd::profiler::enableProfiler(config(), activities());
    enabled_ = true;
  }
  std::unique_ptr<result> stop() {
    enabled_ = false;
    return torch::autograd::profiler::disableProfiler();
  }

  /// torch.profiler.profile's transitions, from the current action to `next`.
  template <class Ready>
  void transit(action next, Ready& ready) {
    const action from = current_;
    current_ = next;
    const bool recording_next = next == action::record || next == action::record_and_save;
    switch (from) {
      case action::none:
        if (next == action::warmup || recording_next) prepare();
        if (recording_next) start();
        break;
      case action::warmup:
        if (recording_next || next == action::none) start();
        if (next == action::none) stop();  // a warm-up left: nothing to keep
        break;
      case action::record:
        if (!recording_next) stop();  // a window cut short: not a trace
        break;
      case action::record_and_save:
        ready(stop());
        if (next == action::warmup || recording_next) prepare();
        if (recording_next) start();
        break;
    }
  }

  schedule plan_;
  config_options options_;
  action current_ = action::none;
  std::int64_t steps_ = 0;
  bool enabled_ = false;
  std::optional<at::RecordFunction> step_range_;
};

/// One row of the table: an op (or range) and its time.
struct op_time {
  std::string name;
  std::int64_t calls = 0;
  double self_us = 0;   ///< time in the op itself, its children's taken out
  double total_us = 0;  ///< time from its start to its end
};

/// The CPU events of `r` by name, the largest self time first: each event's children are
/// the events of its thread that start and end inside it, as torch.profiler's table nests them.
inline std::vector<op_time> self_times(const result& r) {
  struct span {
    const torch::autograd::profiler::KinetoEvent* event;
    std::uint64_t start, end;
  };
  std::map<std::uint64_t, std::vector<span>> by_thread;
  for (const auto& e : r.events())
    if (e.deviceType() == c10::DeviceType::CPU && !e.isAsync())
      by_thread[e.startThreadId()].push_back({&e, e.startNs(), e.endNs()});
  std::map<std::string, op_time> rows;
  for (auto& [thread, spans] : by_thread) {
    std::sort(spans.begin(), spans.end(), [](const span& a, const span& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<std::pair<const span*, double>> open;  // (span, its children's time)
    auto close = [&] {
      const auto [s, children] = open.back();
      open.pop_back();
      const double total = static_cast<double>(s->end - s->start) / 1e3;
      auto& row = rows[s->event->name()];
      row.name = s->event->name();
      ++row.calls;
      row.total_us += total;
      row.self_us += std::max(0.0, total - children);
      if (!open.empty()) open.back().second += total;
    };
    for (const auto& s : spans) {
      while (!open.empty() && s.start >= open.back().first->end) close();
      open.emplace_back(&s, 0.0);
    }
    while (!open.empty()) close();
  }
  std::vector<op_time> out;
  for (auto& [name, row] : rows) out.push_back(std::move(row));
  std::sort(out.begin(), out.end(),
            [](const op_time& a, const op_time& b) { return a.self_us > b.self_us; });
  return out;
}

}  // namespace hookforge::detail::kineto

#endif  // HOOKFORGE_HAS_KINETO_TRACES
