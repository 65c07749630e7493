// hookforge/core/runtime/runtime_hooks.hpp — the slot of a runner that holds config-loaded hooks.
//
// List `hookforge::runtime_hooks` among a runner's hooks to let it take
// `any_hook`s at run time. Attaching resolves each handler's points by name
// against the runner's points; a handler that matches none produces the
// SR-Forge warning (an exception in strict mode) before anything runs.
//
// Point names that may be misspelled (a config says "on_post_stpe") are named in
// that report with the runner's closest points. A name that is no point of the runner
// is legitimate when it is another runner's point (a multi-target hook), so it is
// reported on its own only when it is no built-in point and lies within two edits of
// one of the runner's points; when none of a handler's names match, every name that
// is no built-in point is listed. Firing
// costs one indirect call per bound handler, and only a size check when none is
// bound to the point. time_with(timer) times every handler attached so far (HookProfiler
// from a config): each call then goes through one more indirect call and two clock reads.
#pragma once

#include <algorithm>
#include <any>
#include <chrono>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "hookforge/core/binding_table.hpp"
#include "hookforge/core/fields.hpp"
#include "hookforge/core/order.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/runtime/any_hook.hpp"
#include "hookforge/core/runtime/attach_policy.hpp"
#include "hookforge/core/runtime/closest_names.hpp"
#include "hookforge/core/runtime/join.hpp"
#include "hookforge/core/runtime/warning.hpp"

namespace hookforge {

/// The state of one runtime hook, for checkpoints.
struct runtime_state {
  std::string key;
  void* object;
  std::any (*save)(const void*);
  void (*load)(void*, const std::any&);
};

/// The event counts of one runtime hook (an event filter), for checkpoints.
struct runtime_counts {
  std::string key;
  void* object;
  std::vector<std::int64_t> (*save)(const void*);
  void (*load)(void*, const std::vector<std::int64_t>&);
};

/// What times a runner's runtime handlers (HookProfiler is one): a slot per (hook, method,
/// point), then the time of each call under its slot.
class handler_timer {
 public:
  virtual std::size_t slot(std::string_view hook, std::string_view method,
                           std::string_view point) = 0;
  virtual void record(std::size_t slot, std::chrono::steady_clock::duration elapsed) = 0;
  /// Around each call of the handler of `slot` (leave also when it throws): a timer may mark
  /// the call for a tracer (HookProfiler: a range in LibTorch's profiler).
  virtual void enter(std::size_t /*slot*/) {}
  virtual void leave(std::size_t /*slot*/) {}

 protected:
  ~handler_timer() = default;
};

namespace detail {

inline bool is_builtin_point(std::string_view name) {
  const auto& names = points::builtin::names;
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// "'on_post_stpe' (closest point of R: on_post_step)".
inline std::string describe_unknown_point(std::string_view name,
                                          std::span<const std::string_view> points,
                                          std::string_view runner) {
  auto closest = closest_names(name, points).first;
  if (closest.empty()) return fmt::format("'{}'", name);
  return fmt::format("'{}' (closest point of {}: {})", name, runner, join_names(closest, ", "));
}

/// A point name of a handler that is no point of the runner (see the rule above).
struct point_issue {
  std::string method;
  std::string point;
  std::string described;  ///< "'on_post_stpe' (closest point of R: on_post_step)"
};

/// Where a runtime hook's handlers go on one runner, and what attaching reports: the
/// one place the rule above is written (attach() and a config's checks both use it).
struct binding_plan {
  struct placement {
    std::size_t point;
    const erased_handler* handler;
    erased_call call;  ///< the one for this point (see erased_handler::call_at)
  };
  std::vector<placement> placed;
  std::string error;         ///< non-empty: the hook cannot be bound (binding_error's text)
  std::string error_method;  ///< the handler `error` is about
  std::vector<std::string_view> unmatched;  ///< handlers that bind to no point of the runner
  std::vector<point_issue> unknown;  ///< the unmatched handlers' names that are no built-in point
  std::vector<point_issue> near_misses;  ///< names of bound handlers that look misspelled

  /// SR-Forge's warning when a handler matches nothing.
  std::string unmatched_text(std::string_view hook, std::string_view runner) const {
    auto text = fmt::format(
        "Hook {} declares handler method(s) (['{}']) but {} exposes no "
        "matching HookPoint. Was this hook attached to the wrong target?",
        hook, join_names(unmatched, "', '"), runner);
    if (!unknown.empty()) {
      std::vector<std::string_view> names;
      for (const auto& u : unknown) names.push_back(u.described);
      text += fmt::format(" Unknown point name(s): {}.", join_names(names, ", "));
    }
    return text;
  }
  static std::string near_miss_text(const point_issue& issue, std::string_view hook,
                                    std::string_view runner) {
    return fmt::format(
        "Handler {}::{} binds to {}, which is no point of {} nor a built-in point. Is it "
        "misspelled?",
        hook, issue.method, issue.described, runner);
  }
  /// What attach() reports, in order.
  std::vector<std::string> reports(std::string_view hook, std::string_view runner) const {
    std::vector<std::string> out;
    if (!unmatched.empty()) out.push_back(unmatched_text(hook, runner));
    for (const auto& n : near_misses) out.push_back(near_miss_text(n, hook, runner));
    return out;
  }
};

/// `captured`: the points the runner records in a CUDA graph (runner.hpp, captured_points).
inline binding_plan plan_bindings(const erased_hook& hook, std::span<const std::string_view> points,
                                  std::string_view runner,
                                  std::span<const std::string_view> captured = {}) {
  binding_plan plan;
  for (const auto& h : hook.handlers) {
    if (h.points.empty()) continue;  // disabled by a bindings remap
    bool matched = false;
    std::vector<std::string_view> foreign;
    for (const auto& name : h.points) {
      auto it = std::find(points.begin(), points.end(), name);
      if (it == points.end()) {
        foreign.push_back(name);
        continue;
      }
      matched = true;
      auto call = h.call_at(name);
      if (!call && h.needs_unknown_point(name)) {
        plan.error = fmt::format(
            "handler {}::{} takes the point tag, but point {} of {} is neither one "
            "of its declared points nor a built-in one, so the hook cannot know its type. Bind "
            "it in code, or let the handler also take the context alone",
            hook.type_name, h.method, name, runner);
        plan.error_method = h.method;
        return plan;
      }
      if (!call) {
        plan.error =
            fmt::format("handler {}::{} cannot be called with the context of {} at point {}",
                        hook.type_name, h.method, runner, name);
        plan.error_method = h.method;
        return plan;
      }
      if (!hook.capture_safe &&
          std::find(captured.begin(), captured.end(), name) != captured.end()) {
        plan.error = fmt::format(
            "handler {}::{} runs at {}, which {} records in a CUDA graph and replays, and {} is "
            "not capture-safe (it declares no `static constexpr bool capture_safe = true`). "
            "Attach it to a runner that does not capture",
            hook.type_name, h.method, name, runner, hook.type_name);
        plan.error_method = h.method;
        return plan;
      }
      plan.placed.push_back({static_cast<std::size_t>(it - points.begin()), &h, call});
    }
    if (!matched) plan.unmatched.push_back(h.method);
    for (auto name : foreign) {
      if (is_builtin_point(name)) continue;
      if (!matched)
        plan.unknown.push_back(
            {h.method, std::string(name), describe_unknown_point(name, points, runner)});
      else if (closest_names(name, points).second <= 2)
        plan.near_misses.push_back(
            {h.method, std::string(name), describe_unknown_point(name, points, runner)});
    }
  }
  return plan;
}

}  // namespace detail

class runtime_hooks {
 public:
  /// One bound handler, as the dispatcher sees it (16 bytes; priorities are kept apart).
  struct handler {
    detail::erased_call call;
    void* object;
  };
  /// One bound handler, as a binding table shows it.
  using description = detail::runtime_row;

  /// The handlers bound to the runner's point number `point`, in firing order.
  std::span<const handler> at(std::size_t point) const {
    if (point >= handlers_.size()) return {};
    return handlers_[point];
  }
  /// The priorities of at(point), index for index.
  std::span<const int> priorities_at(std::size_t point) const {
    if (point >= priorities_.size()) return {};
    return priorities_[point];
  }
  std::span<const description> described_at(std::size_t point) const {
    if (point >= described_.size()) return {};
    return described_[point];
  }
  /// Appends the handlers that declare fields, once per point they are bound to (`points`:
  /// the runner's, by number).
  void append_bound_fields(std::vector<bound_fields>& out,
                           std::span<const std::string_view> points) const {
    for (std::size_t p = 0; p < described_.size() && p < points.size(); ++p)
      for (const auto& d : described_[p])
        if (!d.reads.empty() || !d.writes.empty())
          out.push_back({points[p], d.hook, d.method, d.reads, d.writes});
  }
  std::span<const runtime_state> states() const { return states_; }
  std::span<const runtime_counts> counted() const { return counted_; }

  /// Time every handler attached so far with `timer`, each under (hook, method, its point's
  /// name in `points` + " (" + `runner` + ")"). A second timer wraps the first one's calls.
  void time_with(handler_timer& timer, std::span<const std::string_view> points,
                 std::string_view runner) {
    for (std::size_t p = 0; p < handlers_.size() && p < points.size(); ++p) {
      const std::string point = fmt::format("{} ({})", points[p], runner);
      for (std::size_t i = 0; i < handlers_[p].size(); ++i) {
        const auto& d = described_[p][i];
        timed_.push_back(std::make_shared<timed_call>(
            timed_call{handlers_[p][i], &timer, timer.slot(d.hook, d.method, point)}));
        handlers_[p][i] = handler{&timed_call::invoke, timed_.back().get()};
      }
    }
  }

  /// Bind `hook` to the runner whose points are `points`. `taken_keys` are the
  /// state keys already used on this runner (by its static hooks); `captured` the points
  /// it records in a CUDA graph, where only capture-safe hooks may bind.
  void attach(const detail::erased_hook& hook, std::span<const std::string_view> points,
              std::string_view runner, std::span<const std::string_view> taken_keys,
              attach_policy policy = {}, std::span<const std::string_view> captured = {}) {
    check_state_key(hook, taken_keys, runner);
    auto plan = detail::plan_bindings(hook, points, runner, captured);
    if (!plan.error.empty()) throw binding_error("hookforge: " + plan.error);
    for (const auto& text : plan.reports(hook.type_name, runner)) report(policy, text);

    handlers_.resize(std::max(handlers_.size(), points.size()));
    priorities_.resize(handlers_.size());
    described_.resize(handlers_.size());
    for (const auto& [point, h, call] : plan.placed) {
      // All runtime handlers share one position (the slot's), so by order.hpp's rule a
      // later one runs after its equals.
      auto& priorities = priorities_[point];
      auto index = static_cast<std::ptrdiff_t>(detail::insertion_index(
          priorities.size(), {hook.priority, 0},
          [&](std::size_t i) { return detail::order_key{priorities[i], 0}; }));
      priorities.insert(priorities.begin() + index, hook.priority);
      handlers_[point].insert(handlers_[point].begin() + index, handler{call, hook.object.get()});
      described_[point].insert(described_[point].begin() + index,
                               description{hook.type_name, h->method, hook.priority, h->fields,
                                           h->declared.reads, h->declared.writes});
    }
    owned_.push_back(hook.object);
    if (hook.save_state)
      states_.push_back({hook.state_key, hook.object.get(), hook.save_state, hook.load_state});
    if (hook.save_counts)
      counted_.push_back({hook.state_key, hook.object.get(), hook.save_counts, hook.load_counts});
  }

 private:
  static void report(attach_policy policy, const std::string& text) {
    if (policy.strict) throw binding_error("hookforge: " + text);
    warn(text);
  }

  void check_state_key(const detail::erased_hook& hook, std::span<const std::string_view> taken,
                       std::string_view runner) const {
    if (!hook.save_state && !hook.save_counts) return;
    bool clash = std::find(taken.begin(), taken.end(), hook.state_key) != taken.end();
    for (const auto& s : states_) clash = clash || s.key == hook.state_key;
    for (const auto& c : counted_) clash = clash || c.key == hook.state_key;
    if (clash)
      throw binding_error(fmt::format(
          "hookforge: two stateful hooks on {} share the state key '{}'; give hook {} another key",
          runner, hook.state_key, hook.type_name));
  }

  std::vector<std::vector<handler>> handlers_;
  std::vector<std::vector<int>> priorities_;
  std::vector<std::vector<description>> described_;
  std::vector<std::shared_ptr<void>> owned_;
  std::vector<runtime_state> states_;
  std::vector<runtime_counts> counted_;

  /// A handler's call, timed: what time_with() puts in its place.
  struct timed_call {
    handler inner;
    handler_timer* timer;
    std::size_t slot;
    static void invoke(void* self, void* ctx) {
      auto& t = *static_cast<timed_call*>(self);
      struct marked {  // enter() ... leave(), even when the handler throws
        timed_call& t;
        explicit marked(timed_call& call) : t(call) { t.timer->enter(t.slot); }
        ~marked() { t.timer->leave(t.slot); }
      } mark(t);
      const auto start = std::chrono::steady_clock::now();
      t.inner.call(t.inner.object, ctx);
      t.timer->record(t.slot, std::chrono::steady_clock::now() - start);
    }
  };
  std::vector<std::shared_ptr<timed_call>> timed_;
};

}  // namespace hookforge
