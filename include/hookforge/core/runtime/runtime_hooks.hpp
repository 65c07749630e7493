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
// bound to the point.
#pragma once

#include <algorithm>
#include <any>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "hookforge/core/order.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/runtime/any_hook.hpp"
#include "hookforge/core/runtime/attach_policy.hpp"
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

namespace detail {

/// Levenshtein distance between two names.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// The names in `candidates` nearest to `name` (all those at the least distance) and that distance.
inline std::pair<std::vector<std::string_view>, std::size_t> closest_names(
    std::string_view name, std::span<const std::string_view> candidates) {
  std::vector<std::string_view> best;
  std::size_t least = static_cast<std::size_t>(-1);
  for (auto c : candidates) {
    auto d = edit_distance(name, c);
    if (d < least) best.clear(), least = d;
    if (d == least) best.push_back(c);
  }
  return {best, least};
}

inline bool is_builtin_point(std::string_view name) {
  const auto& names = points::builtin::names;
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// "'on_post_stpe' (closest point of R: on_post_step)".
inline std::string describe_unknown_point(std::string_view name, std::span<const std::string_view> points,
                                          std::string_view runner) {
  auto closest = closest_names(name, points).first;
  if (closest.empty()) return fmt::format("'{}'", name);
  return fmt::format("'{}' (closest point of {}: {})", name, runner, detail::join(closest, ", "));
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
  struct description {
    std::string hook;
    std::string method;
    int priority;
  };

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
  std::span<const runtime_state> states() const { return states_; }
  std::span<const runtime_counts> counted() const { return counted_; }

  /// Bind `hook` to the runner whose points are `points`. `taken_keys` are the
  /// state keys already used on this runner (by its static hooks).
  void attach(const detail::erased_hook& hook, std::span<const std::string_view> points,
              std::string_view runner, std::span<const std::string_view> taken_keys,
              attach_policy policy = {}) {
    check_state_key(hook, taken_keys, runner);

    struct placement {
      std::size_t point;
      const detail::erased_handler* handler;
      detail::erased_call call;  ///< the one for this point (see erased_handler::call_at)
    };
    std::vector<placement> placed;
    std::vector<std::string_view> unmatched;
    std::vector<std::string> unknown;  // point names of unmatched handlers that are no built-in point
    std::vector<std::string> near_misses;
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
        if (!call && h.needs_unknown_point(name))
          throw binding_error(fmt::format(
              "hookforge: handler {}::{} takes the point tag, but point {} of {} is neither one "
              "of its declared points nor a built-in one, so the hook cannot know its type. Bind "
              "it in code, or let the handler also take the context alone",
              hook.type_name, h.method, name, runner));
        if (!call)
          throw binding_error(fmt::format(
              "hookforge: handler {}::{} cannot be called with the context of {} at point {}",
              hook.type_name, h.method, runner, name));
        placed.push_back({static_cast<std::size_t>(it - points.begin()), &h, call});
      }
      if (!matched) unmatched.push_back(h.method);
      for (auto name : foreign) {
        if (detail::is_builtin_point(name)) continue;
        if (!matched)
          unknown.push_back(detail::describe_unknown_point(name, points, runner));
        else if (detail::closest_names(name, points).second <= 2)
          near_misses.push_back(fmt::format(
              "Handler {}::{} binds to {}, which is no point of {} nor a built-in point. Is it misspelled?",
              hook.type_name, h.method, detail::describe_unknown_point(name, points, runner), runner));
      }
    }
    if (!unmatched.empty()) {
      auto text = fmt::format("Hook {} declares handler method(s) (['{}']) but {} exposes no "
                              "matching HookPoint. Was this hook attached to the wrong target?",
                              hook.type_name, detail::join(unmatched, "', '"), runner);
      if (!unknown.empty())
        text += fmt::format(" Unknown point name(s): {}.", detail::join(unknown, ", "));
      report(policy, text);
    }
    for (const auto& text : near_misses) report(policy, text);

    handlers_.resize(std::max(handlers_.size(), points.size()));
    priorities_.resize(handlers_.size());
    described_.resize(handlers_.size());
    for (const auto& [point, h, call] : placed) {
      // All runtime handlers share one position (the slot's), so by order.hpp's rule a
      // later one runs after its equals.
      auto& priorities = priorities_[point];
      auto index = static_cast<std::ptrdiff_t>(detail::insertion_index(
          priorities.size(), {hook.priority, 0}, [&](std::size_t i) { return detail::order_key{priorities[i], 0}; }));
      priorities.insert(priorities.begin() + index, hook.priority);
      handlers_[point].insert(handlers_[point].begin() + index, handler{call, hook.object.get()});
      described_[point].insert(described_[point].begin() + index,
                               description{hook.type_name, h->method, hook.priority});
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
};

}  // namespace hookforge
