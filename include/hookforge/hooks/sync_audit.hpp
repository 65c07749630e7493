// hookforge/hooks/sync_audit.hpp — SyncAudit: which hook, point and phase of the training
// step make the host wait for the GPU, found on any machine.
//
//   hookforge::SyncAudit audit;                            // observes from here on
//   hookforge::HookProfiler names({.print_at_end = false}); // names the wrapped handlers
//   hookforge::TrainingEpochRunner train(adam, {}, names.wrap(hookforge::ProgressBar{}));
//   hookforge::Trainer trainer(model, train, val, options, hookforge::ref(audit));
//   trainer.fit(...);                                      // the table at the end
//
//   sync audit: 40 training steps; 1 place synchronises the host
//   step   where         hook                           operator     calls  per step
//   train  on_post_step  ProgressBar.step@on_post_step  aten::item       4     0.100
//
// A host synchronisation is an ATen operator (`.item()`, a boolean mask, nonzero, a blocking
// copy: hooks/detail/sync_operators.hpp has the list and its limits), and LibTorch's
// RecordFunction callbacks see operators on the CPU as on CUDA. The audit registers one
// global callback for its lifetime and counts each synchronising operator under the
// innermost ranges it ran in (torch/profiling/range.hpp): the runner's step ("train",
// "eval"), the phase ("loader", "to device", "forward", "loss", "backward", "optimizer
// step", "scores") or the point whose hooks were firing, and the hook handler, where the
// handler is named: a HookProfiler's wrapper in C++, every config-loaded hook in
// hookforge-run (the audit times its runners' runtime handlers as HookProfiler does).
// An operator is counted where the step's code calls it; inside another operator only a
// blocking copy is (a CPU kernel's own reads, such as the CPU fused Adam reading each
// parameter's step count, are not the GPU's). An operator on a thread without ranges (a loader
// worker; on CUDA, autograd's device thread running backward) is counted with no step.
//
// Only one audit observes a process at a time. The callback records every operator's inputs,
// so an audited run is slower: audit for the table, measure speed without it.
// hookforge-run --audit-syncs attaches one; attached to the Trainer it prints at
// on_training_finished (options: where, or not at all).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <ATen/record_function.h>
#include <fmt/format.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/runtime/runtime_hooks.hpp"
#include "hookforge/hooks/detail/handler_ranges.hpp"
#include "hookforge/hooks/detail/text_output.hpp"
#include "hookforge/hooks/detail/sync_operators.hpp"
#include "hookforge/torch/profiling/range.hpp"

namespace hookforge {

/// One place that synchronised the host: an operator under the innermost ranges it ran in.
struct sync_site {
  std::string step;   ///< the runner's step: "train", "eval"; "" outside any
  std::string where;  ///< the phase ("forward") or the point whose hooks fired; "" for none
  std::string hook;   ///< the named handler, "<hook>.<method>@<point>"; "" for none
  std::string op;     ///< "aten::item", "aten::index (boolean mask)", ...
  std::int64_t calls = 0;
};

struct sync_audit_options {
  bool print_at_end = true;  ///< print the table at on_training_finished (on the trainer)
  std::FILE* file = stdout;  ///< where print() writes, unless `stream` is set
  std::ostream* stream = nullptr;
  /// hookforge-run: the components whose config-loaded hooks it names ("trainer",
  /// "training_runner", "validation_runner"). Not used in C++ (a HookProfiler names them).
  std::vector<std::string> components = {"trainer", "training_runner", "validation_runner"};
};

namespace detail::sync {

using site_key = std::tuple<std::string, std::string, std::string, std::string>;

/// What the audit's callback writes: counts by (step, at, hook, operator) and the steps.
struct observer_state {
  std::mutex mutex;
  std::map<site_key, std::int64_t> counts;
  std::atomic<std::int64_t> training_steps{0};
};

/// The observing audit's state (RecordFunction's callbacks are plain functions).
inline std::atomic<observer_state*> active{nullptr};

struct frame {
  range_kind kind;
  std::string name;
};
/// This thread's open ranges, outermost first.
inline std::vector<frame>& frames() {
  thread_local std::vector<frame> open;
  return open;
}
/// This thread's operators: how many are open, and the depth of the one counted (0: none),
/// whose own operators are part of it.
struct operator_depth {
  int open = 0;
  int counted = 0;
};
inline operator_depth& depth() {
  thread_local operator_depth d;
  return d;
}

/// Marks the ranges a start callback pushed, for its end callback to pop.
struct pushed final : at::ObserverContext {};

inline void count(observer_state& state, std::string_view op) {
  std::string step, where, hook;
  for (const auto& f : frames()) {  // outermost first: the last of each kind wins
    if (f.kind == range_kind::step) step = f.name;
    if (f.kind == range_kind::phase || f.kind == range_kind::point) where = f.name;
    if (f.kind == range_kind::hook) hook = f.name;
  }
  std::lock_guard lock(state.mutex);
  ++state.counts[{std::move(step), std::move(where), std::move(hook), std::string(op)}];
}

inline std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  auto* state = active.load(std::memory_order_acquire);
  if (fn.scope() == at::RecordScope::USER_SCOPE) {
    if (!state) return nullptr;
    const std::string_view name = fn.name();
    for (auto kind : {range_kind::step, range_kind::phase, range_kind::point, range_kind::hook}) {
      if (!name.starts_with(range_prefix(kind))) continue;
      const auto rest = name.substr(range_prefix(kind).size());
      if (kind == range_kind::step && rest == "train") ++state->training_steps;
      frames().push_back({kind, std::string(rest)});
      return std::make_unique<pushed>();
    }
    return nullptr;
  }
  auto& d = depth();
  ++d.open;  // every operator's end callback lowers it again
  if (!state || d.counted > 0) return nullptr;
  const auto op = synchronising(fn, /*called_by_an_operator=*/d.open > 1);
  if (!op) return nullptr;
  count(*state, *op);
  d.counted = d.open;
  return nullptr;
}

inline void on_end(const at::RecordFunction& fn, at::ObserverContext* context) {
  if (fn.scope() == at::RecordScope::USER_SCOPE) {
    if (context && !frames().empty()) frames().pop_back();  // a range of ours
    return;
  }
  auto& d = depth();
  if (d.counted == d.open) d.counted = 0;
  --d.open;
}

}  // namespace detail::sync

class SyncAudit final : public handler_timer {
 public:
  /// Observes from here to its destruction; throws std::logic_error while another does.
  explicit SyncAudit(sync_audit_options options = {}) : options_(std::move(options)) {
    detail::sync::observer_state* none = nullptr;
    if (!detail::sync::active.compare_exchange_strong(none, &state_))
      throw std::logic_error("SyncAudit: another SyncAudit observes this process; one at a time");
    handle_ = at::addGlobalCallback(
        at::RecordFunctionCallback(&detail::sync::on_start, &detail::sync::on_end)
            .needsInputs(true)
            .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
  }
  ~SyncAudit() {
    at::removeCallback(handle_);
    detail::sync::active.store(nullptr, std::memory_order_release);
  }
  SyncAudit(const SyncAudit&) = delete;  // the callback and the runners' timers point here
  SyncAudit& operator=(const SyncAudit&) = delete;

  /// Every place counted so far, most calls first.
  std::vector<sync_site> sites() const {
    std::vector<sync_site> out;
    {
      std::lock_guard lock(state_.mutex);
      for (const auto& [key, calls] : state_.counts) {
        const auto& [step, where, hook, op] = key;
        out.push_back({step, where, hook, op, calls});
      }
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.calls > b.calls; });
    return out;
  }
  /// Training steps ("step: train" ranges) seen so far: what "per step" divides by.
  std::int64_t training_steps() const { return state_.training_steps.load(); }

  /// The table, as text.
  std::string report() const {
    const auto rows = sites();
    const auto steps = training_steps();
    std::string text = fmt::format("sync audit: {} training steps; ", steps);
    if (rows.empty()) return text + "no operator synchronised the host\n";
    text += fmt::format("{} {} the host\n", rows.size(),
                        rows.size() == 1 ? "place synchronises" : "places synchronise");
    auto shown = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
    std::size_t step_w = 4, where_w = 5, hook_w = 4, op_w = 8;
    for (const auto& r : rows) {
      step_w = std::max(step_w, shown(r.step).size());
      where_w = std::max(where_w, shown(r.where).size());
      hook_w = std::max(hook_w, shown(r.hook).size());
      op_w = std::max(op_w, r.op.size());
    }
    text += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {:>8}  {:>8}\n", "step", step_w, "where",
                        where_w, "hook", hook_w, "operator", op_w, "calls", "per step");
    for (const auto& r : rows) {
      const double per_step = steps > 0 ? static_cast<double>(r.calls) / steps : 0.0;
      text += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {:>8}  {:>8.3f}\n", shown(r.step),
                          step_w, shown(r.where), where_w, shown(r.hook), hook_w, r.op, op_w,
                          r.calls, per_step);
    }
    return text;
  }

  /// Write report() to the options' stream or file.
  void print() const { detail::write_text(report(), options_.stream, options_.file); }

  void reset() {
    std::lock_guard lock(state_.mutex);
    state_.counts.clear();
    state_.training_steps = 0;
  }
  const sync_audit_options& options() const { return options_; }

  /// handler_timer: a config-loaded handler's calls are named ranges (as a HookProfiler's).
  std::size_t slot(std::string_view hook, std::string_view method,
                   std::string_view point) override {
    return detail::profiling::register_slot(hook, method, point);
  }
  void enter(std::size_t slot) override { ranges_.emplace_back(slot); }
  void leave(std::size_t) override { ranges_.pop_back(); }
  void record(std::size_t, std::chrono::steady_clock::duration) override {}

  template <class C>
  void print_report(C&) {
    if (options_.print_at_end) print();
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(print_report, points::on_training_finished));

 private:
  sync_audit_options options_;
  mutable detail::sync::observer_state state_;
  at::CallbackHandle handle_ = 0;
  std::deque<detail::profiling::profiler_range> ranges_;  // runtime handlers' open ranges
  range_observation observing_;  // the runners open their ranges while the audit lives
};

}  // namespace hookforge
