// hookforge/hooks/hook_profiler.hpp — HookProfiler: how long each hook's handlers take.
//
//   hookforge::HookProfiler profiler;
//   TrainingEpochRunner train{optimizer, {},
//                             profiler.wrap(hookforge::ProgressBar{}),       // timed
//                             profiler.wrap(hookforge::ref(ema), timer),     // a set, timed
//                             hookforge::GradientClip{1.0}};                 // not timed
//   Trainer trainer{model, train, val, options, hookforge::ref(profiler)};  // table at the end
//   ...
//   profiler.print();            // or report() for the text, timings() for the figures
//
// prints, slowest first:
//   hook profile: 2 handlers, 1.8 ms in hooks
//   hook          method  point           calls   total ms    mean us
//   ProgressBar   step    on_post_step      100      1.502     15.02
//   EMA           handle  on_post_step      100      0.298      2.98
//
// `wrap(hook)` (or hookforge::profiled(profiler, hook)) is a wrapper hook, like ref or
// when: it has the hook's bindings, priority, state and state key, and times each call of
// each handler with two steady_clock reads, under (hook, method, point). `wrap(a, b, …)`
// and `wrap(a_hook_set)` wrap a pack of hooks: they give a hook_set of wrappers, which a
// runner attaches hook by hook. So each hook keeps its own priority and state key, and a
// profiled run fires in the same order and saves the same checkpoint. Hooks that are not
// wrapped are untouched: the profiler costs nothing where it is not attached.
//
// Attached to the trainer by ref, the profiler prints its table at on_training_finished
// (options: where, or not at all), and at each on_trainer_epoch_finished adds the epoch's
// mean ms per call of every handler that ran to TrainerContext::epoch_figures, as
// "hook_ms/<hook>.<method>@<point>" (`per_epoch`), which LossLogger writes to
// metrics.jsonl and TensorBoardLogger as scalars. Its priority, NORMAL, puts it before
// them; the time of the hooks after it at that point counts in the next epoch. It is
// neither copyable nor movable: the wrappers point at it, so it must outlive the runners.
//
// Config-loaded hooks are timed through their runner's runtime slot: the profiler is a
// handler_timer (core/runtime/runtime_hooks.hpp), and runtime_hooks::time_with(profiler, ...)
// times every handler attached there. hookforge-run does so for the components listed in
// `components` (rows name the point and the component: "on_post_step (TrainingEpochRunner)").
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_set.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/runtime/runtime_hooks.hpp"
#include "hookforge/core/wrappers/wrapper.hpp"
#include "hookforge/hooks/detail/handler_ranges.hpp"
#include "hookforge/hooks/detail/text_output.hpp"

namespace hookforge {

class HookProfiler;

/// One (hook, method, point) row of a HookProfiler.
struct hook_timing {
  std::string hook;
  std::string method;
  std::string point;
  std::int64_t calls = 0;
  double total_seconds = 0;
  double mean_seconds() const {
    return calls > 0 ? total_seconds / static_cast<double>(calls) : 0.0;
  }
};

namespace detail::profiling {

/// The name a handler called without its point is recorded under (a runtime hook bound
/// by a config to a point its type cannot know).
struct untold_point {
  static constexpr std::string_view name = "(runtime point)";
};

template <class H, class B, class P>
std::size_t slot() {
  static const std::size_t index = register_slot(hook_name<H>(), B::method, P::name);
  return index;
}

/// The invoker of binding B of hook H, timed: it calls B's invoker on the wrapper's inner
/// hook and records the time in the wrapper's profiler.
template <class H, class B>
struct timed_invoker {
  using inner = typename B::invoker;

  template <class W, class Ctx, point P>
    requires handler_callable_at<inner, H, Ctx, P>
  void operator()(W& wrapper, Ctx& ctx, P p) const {
    const profiler_range range(slot<H, B, P>());
    const auto start = std::chrono::steady_clock::now();
    if constexpr (handler_takes_point<inner, H, Ctx, P>)
      inner{}(wrapper.inner(), ctx, p);
    else
      inner{}(wrapper.inner(), ctx);
    wrapper.profiler().record(slot<H, B, P>(), std::chrono::steady_clock::now() - start);
  }

  template <class W, class Ctx>
    requires invocable_on<inner, H, Ctx>
  void operator()(W& wrapper, Ctx& ctx) const {
    const profiler_range range(slot<H, B, untold_point>());
    const auto start = std::chrono::steady_clock::now();
    inner{}(wrapper.inner(), ctx);
    wrapper.profiler().record(slot<H, B, untold_point>(), std::chrono::steady_clock::now() - start);
  }
};

template <class H, class B>
struct timed_binding;
template <class H, fixed_string M, class Inv, class... P>
struct timed_binding<H, binding<M, Inv, P...>> {
  using type = binding<M, timed_invoker<H, binding<M, Inv, P...>>, P...>;
};

template <class H, class List>
struct timed_bindings;
template <class H, class... B>
struct timed_bindings<H, type_list<B...>> {
  static constexpr auto value = hookforge::bindings(typename timed_binding<H, B>::type{}...);
};

}  // namespace detail::profiling

/// A hook whose handlers are timed by a HookProfiler (made by HookProfiler::wrap / profiled).
template <class H>
class profiled_hook : public detail::wrapper_base<H> {
 public:
  static constexpr auto bindings = detail::profiling::timed_bindings<H, bindings_of<H>>::value;

  profiled_hook(H hook, HookProfiler& profiler)
      : detail::wrapper_base<H>(std::move(hook)), profiler_(&profiler) {}
  HookProfiler& profiler() const { return *profiler_; }

 private:
  HookProfiler* profiler_;
};

struct hook_profiler_options {
  bool print_at_end = true;  ///< print the table at on_training_finished (attached to the trainer)
  std::FILE* file = stdout;  ///< where print() writes, unless `stream` is set
  std::ostream* stream = nullptr;
  /// hookforge-run: the components whose config-loaded hooks it times ("trainer",
  /// "training_runner", "validation_runner"). Not used in C++, where wrap() chooses.
  std::vector<std::string> components = {"trainer", "training_runner", "validation_runner"};
  /// Attached to the trainer: each epoch's mean ms per handler call into the epoch's
  /// figures (TrainerContext::epoch_figures), for the loggers.
  bool per_epoch = true;
};

class HookProfiler final : public handler_timer {
  using clock = std::chrono::steady_clock;

 public:
  explicit HookProfiler(hook_profiler_options options = {}) : options_(options) {}
  HookProfiler(const HookProfiler&) = delete;  // the wrappers point at this object
  HookProfiler& operator=(const HookProfiler&) = delete;

  /// `hook`, with each call of its handlers timed here.
  template <class H>
  profiled_hook<H> wrap(H hook) {
    return profiled_hook<H>(std::move(hook), *this);
  }

  /// Several hooks, each timed: a hook_set of their wrappers, attached in the set's place.
  template <class... H>
    requires(sizeof...(H) > 1)
  hook_set<profiled_hook<H>...> wrap(H... hooks) {
    return hook_set<profiled_hook<H>...>(profiled_hook<H>(std::move(hooks), *this)...);
  }

  /// Each hook of a set (a bundle's, e.g.), timed: a set of their wrappers.
  template <class... H>
  hook_set<profiled_hook<H>...> wrap(hook_set<H...> set) {
    return std::apply(
        [this](H&... hooks) {
          return hook_set<profiled_hook<H>...>(profiled_hook<H>(std::move(hooks), *this)...);
        },
        set.hooks);
  }

  /// handler_timer: the slot of (hook, method, point), for runtime_hooks::time_with.
  std::size_t slot(std::string_view hook, std::string_view method,
                   std::string_view point) override {
    return detail::profiling::register_slot(hook, method, point);
  }

  /// handler_timer: a runtime handler's call as a profiler range (see profiler_range).
  void enter(std::size_t slot) override { ranges_.emplace_back(slot); }
  void leave(std::size_t) override { ranges_.pop_back(); }

  void record(std::size_t slot, clock::duration elapsed) override {
    if (slot >= entries_.size()) entries_.resize(slot + 1);
    ++entries_[slot].calls;
    entries_[slot].total += elapsed;
  }

  /// Every (hook, method, point) that ran, slowest (largest total) first.
  std::vector<hook_timing> timings() const {
    std::vector<hook_timing> rows;
    for (std::size_t slot = 0; slot < entries_.size(); ++slot) {
      if (entries_[slot].calls == 0) continue;
      auto name = detail::profiling::name_of(slot);
      rows.push_back({std::move(name.hook), std::move(name.method), std::move(name.point),
                      entries_[slot].calls,
                      std::chrono::duration<double>(entries_[slot].total).count()});
    }
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.total_seconds > b.total_seconds;
    });
    return rows;
  }

  /// The table, as text.
  std::string report() const {
    const auto rows = timings();
    double total = 0;
    std::size_t hook_w = 4, method_w = 6, point_w = 5;
    for (const auto& r : rows) {
      total += r.total_seconds;
      hook_w = std::max(hook_w, r.hook.size());
      method_w = std::max(method_w, r.method.size());
      point_w = std::max(point_w, r.point.size());
    }
    std::string text =
        fmt::format("hook profile: {} handlers, {:.3f} ms in hooks\n", rows.size(), total * 1e3);
    text += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>9}  {:>10}  {:>10}\n", "hook", hook_w, "method",
                        method_w, "point", point_w, "calls", "total ms", "mean us");
    for (const auto& r : rows)
      text += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>9}  {:>10.3f}  {:>10.2f}\n", r.hook, hook_w,
                          r.method, method_w, r.point, point_w, r.calls, r.total_seconds * 1e3,
                          r.mean_seconds() * 1e6);
    return text;
  }

  /// Write report() to the options' stream or file.
  void print() const { detail::write_text(report(), options_.stream, options_.file); }

  void reset() {
    entries_.clear();
    reported_.clear();
  }
  const hook_profiler_options& options() const { return options_; }

  template <class C>
  void print_report(C&) {
    if (options_.print_at_end) print();
  }

  /// Since the last call: mean ms per call of each handler that ran, by figure name
  /// "hook_ms/<hook>.<method>@<point>".
  std::vector<std::pair<std::string, double>> epoch_means() {
    std::vector<std::pair<std::string, double>> out;
    if (reported_.size() < entries_.size()) reported_.resize(entries_.size());
    for (std::size_t slot = 0; slot < entries_.size(); ++slot) {
      const auto calls = entries_[slot].calls - reported_[slot].calls;
      if (calls == 0) continue;
      const auto name = detail::profiling::name_of(slot);
      const double ms =
          std::chrono::duration<double, std::milli>(entries_[slot].total - reported_[slot].total)
              .count();
      out.emplace_back(fmt::format("hook_ms/{}.{}@{}", name.hook, name.method, name.point),
                       ms / static_cast<double>(calls));
      reported_[slot] = entries_[slot];
    }
    return out;
  }

  /// At on_trainer_epoch_finished: epoch_means() into the context's epoch figures.
  template <class C>
  void add_epoch_figures(C& ctx) {
    if constexpr (requires { ctx.epoch_figures.insert_or_assign(std::string(), 0.0); })
      if (options_.per_epoch)
        for (auto& [name, ms] : epoch_means()) ctx.epoch_figures.insert_or_assign(name, ms);
  }

  static constexpr auto bindings = hookforge::bindings(
      HOOKFORGE_HOOKS_INTO(print_report, points::on_training_finished),
      HOOKFORGE_HOOKS_INTO(add_epoch_figures, points::on_trainer_epoch_finished));

 private:
  struct entry {
    std::int64_t calls = 0;
    clock::duration total{};
  };

  hook_profiler_options options_;
  std::vector<entry> entries_;                            // by slot
  std::deque<detail::profiling::profiler_range> ranges_;  // runtime handlers' open ranges
  std::vector<entry> reported_;  // by slot: entries_ at the last epoch_means()
};

/// `hook`, timed by `profiler` (the same as profiler.wrap(hook)).
template <class H>
profiled_hook<H> profiled(HookProfiler& profiler, H hook) {
  return profiler.wrap(std::move(hook));
}

}  // namespace hookforge
