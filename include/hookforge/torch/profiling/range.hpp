// hookforge/torch/profiling/range.hpp — the named ranges of a training step, for whoever
// observes LibTorch's RecordFunction: ProfilerHook's traces show them, SyncAudit attributes
// each synchronising operator to the innermost of each kind.
//
//   const detail::step_range r(range_kind::phase, "forward");   // "phase: forward"
//
// Kinds, by the prefix of the range's name:
//   "step: "   a whole batch of a runner ("step: train", "step: validation")
//   "phase: "  the runner's own work in it: loader, to device, forward, loss, backward,
//              optimizer step, scores
//   "point: "  the hooks fired at a point ("point: on_post_step")
//   "hook: "   one handler of a hook (a HookProfiler's wrapper, or a config-loaded hook
//              timed through its runner): "hook: <hook>.<method>@<point>"
// The ranges are opened while a range_observation lives (ProfilerHook and SyncAudit hold
// one; so may a program that records LibTorch's profiler itself). Otherwise a range costs one
// relaxed load of a counter and builds no name: at::hasCallbacks() instead would cost about
// 200 instructions a range on LibTorch 2.11, 0.5 % of a small training step at a dozen
// ranges (callgrind, docs/benchmarks.md).
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <string_view>

#include <ATen/record_function.h>

namespace hookforge {

enum class range_kind { step, phase, point, hook };

/// The prefix of a range's name that says its kind.
constexpr std::string_view range_prefix(range_kind kind) {
  switch (kind) {
    case range_kind::step:
      return "step: ";
    case range_kind::phase:
      return "phase: ";
    case range_kind::point:
      return "point: ";
    case range_kind::hook:
      return "hook: ";
  }
  return "";
}

namespace detail {
/// How many range_observations live.
inline std::atomic<int> range_observers{0};
}  // namespace detail

/// While one lives, the runners open their named ranges for RecordFunction's observers.
/// Copies count as their own.
class range_observation {
 public:
  range_observation() { detail::range_observers.fetch_add(1, std::memory_order_relaxed); }
  range_observation(const range_observation&) : range_observation() {}
  range_observation& operator=(const range_observation&) { return *this; }
  ~range_observation() { detail::range_observers.fetch_sub(1, std::memory_order_relaxed); }
};

namespace detail {

/// A user-scope RecordFunction range named "<kind's prefix><name>", open for its lifetime
/// while a range_observation lives and LibTorch has a callback for it; `name` is read only then (a
/// callable returning the name may be given instead, so that an unobserved range builds nothing).
class step_range {
 public:
  step_range(range_kind kind, std::string_view name) {
    if (range_observers.load(std::memory_order_relaxed) == 0) return;
    open(kind, [&] { return name; });
  }
  template <class NameFn>
    requires requires(NameFn f) { std::string_view(f()); }
  step_range(range_kind kind, NameFn&& name) {
    if (range_observers.load(std::memory_order_relaxed) == 0) return;
    open(kind, name);
  }

 private:
  template <class NameFn>
  void open(range_kind kind, const NameFn& name) {
    range_.emplace(at::RecordScope::USER_SCOPE);
    if (range_->isActive()) {
      std::string label(range_prefix(kind));
      label += std::string_view(name());
      range_->before(std::move(label));
    }
  }

  std::optional<at::RecordFunction> range_;
};

/// Fire point P's hooks of `hooks` inside a range "point: <P>".
template <class P, class Pack, class Ctx>
void fire_in_range(Pack& hooks, Ctx& ctx) {
  const step_range range(range_kind::point, P::name);
  hooks.template fire<P>(ctx);
}

}  // namespace detail
}  // namespace hookforge
