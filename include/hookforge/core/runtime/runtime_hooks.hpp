// hookforge/core/runtime/runtime_hooks.hpp — the slot of a runner that holds config-loaded hooks.
//
// List `hookforge::runtime_hooks` among a runner's hooks to let it take
// `any_hook`s at run time. Attaching resolves each handler's points by name
// against the runner's points; a handler that matches none produces the
// SR-Forge warning (an exception in strict mode) before anything runs. Firing
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
#include <vector>

#include <fmt/format.h>

#include "hookforge/core/order.hpp"
#include "hookforge/core/runtime/any_hook.hpp"
#include "hookforge/core/runtime/attach_policy.hpp"
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

    struct placement { std::size_t point; const detail::erased_handler* handler; };
    std::vector<placement> placed;
    std::vector<std::string_view> unmatched;
    for (const auto& h : hook.handlers) {
      if (h.points.empty()) continue;  // disabled by a bindings remap
      bool matched = false;
      for (const auto& name : h.points) {
        auto it = std::find(points.begin(), points.end(), name);
        if (it == points.end()) continue;
        matched = true;
        if (!h.call)
          throw binding_error(fmt::format(
              "hookforge: handler {}::{} cannot be called with the context of {} at point {}",
              hook.type_name, h.method, runner, name));
        placed.push_back({static_cast<std::size_t>(it - points.begin()), &h});
      }
      if (!matched) unmatched.push_back(h.method);
    }
    if (!unmatched.empty())
      report(policy, fmt::format("Hook {} declares handler method(s) (['{}']) but {} exposes no "
                                 "matching HookPoint. Was this hook attached to the wrong target?",
                                 hook.type_name, fmt::join(unmatched, "', '"), runner));

    handlers_.resize(std::max(handlers_.size(), points.size()));
    priorities_.resize(handlers_.size());
    described_.resize(handlers_.size());
    for (const auto& [point, h] : placed) {
      // All runtime handlers share one position (the slot's), so by order.hpp's rule a
      // later one runs after its equals.
      auto& priorities = priorities_[point];
      auto index = static_cast<std::ptrdiff_t>(detail::insertion_index(
          priorities.size(), {hook.priority, 0}, [&](std::size_t i) { return detail::order_key{priorities[i], 0}; }));
      priorities.insert(priorities.begin() + index, hook.priority);
      handlers_[point].insert(handlers_[point].begin() + index, handler{h->call, hook.object.get()});
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
