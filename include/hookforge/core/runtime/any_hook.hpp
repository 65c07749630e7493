// hookforge/core/runtime/any_hook.hpp — a hook held type-erased, for config-driven runs.
//
// The same hook class serves static and runtime use: `any_hook<Ctx>` reads its
// `bindings` at construction and keeps, per handler, the method name, the point
// names it binds to and a plain function pointer that calls it with a `Ctx`.
// Points are matched by name when the hook is attached to a runner (see
// runtime_hooks.hpp), so a config can bind to points this code never names.
// A handler that takes the point tag needs the point's type, which only this code
// knows: it gets one function pointer per point it may be told, its declared points
// and the built-in ones, picked by name at attach.
#pragma once

#include <any>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/fields.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/point.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/core/runtime/join.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/core/type_name.hpp"

namespace hookforge {

/// method name -> point names; an empty list disables the method.
using binding_map = std::map<std::string, std::vector<std::string>, std::less<>>;

/// What a config may say about a hook besides its constructor parameters.
struct hook_options {
  // Default member initializers let callers name only what they set
  // ({.priority = HIGH}) without -Wmissing-field-initializers warnings.
  std::optional<int> priority{};  ///< overrides the hook's own priority
  std::string key{};              ///< state key; empty: the hook's own
  binding_map bindings{};         ///< remaps handlers to other points, or disables them
};

namespace detail {

using erased_call = void (*)(void* hook, void* ctx);

/// A handler's call told the point `point` (a point-taking handler; null where it cannot run).
struct point_call {
  std::string_view point;
  erased_call call;
};

struct erased_handler {
  std::string method;
  std::vector<std::string> points;
  std::string fields;       ///< what it reads and writes, as a binding table shows it (fields.hpp)
  handler_fields declared;  ///< the same as names
  erased_call call;         ///< with the context alone; null when the handler cannot be called so
  /// Empty unless the handler takes the point tag: then one per point it may be told.
  std::vector<point_call> point_calls;

  /// The call for `point`: told it where the handler takes the tag, else with the
  /// context alone (null when neither can run).
  erased_call call_at(std::string_view point) const {
    for (const auto& c : point_calls)
      if (c.point == point && c.call) return c.call;
    return call;
  }
  /// Does the handler take the tag, and `point` is none it can be told (its type unknown)?
  bool needs_unknown_point(std::string_view point) const {
    if (point_calls.empty()) return false;
    for (const auto& c : point_calls)
      if (c.point == point) return false;
    return true;
  }
};

/// The context-independent part of an any_hook.
struct erased_hook {
  std::shared_ptr<void> object;
  std::string type_name;
  int priority = priority::NORMAL;
  bool capture_safe = false;  ///< see capture_safe_of (hook_traits.hpp)
  std::vector<erased_handler> handlers;
  // State and event counts (null when the hook has none), saved under state_key.
  std::string state_key;
  std::any (*save_state)(const void*) = nullptr;
  void (*load_state)(void*, const std::any&) = nullptr;
  std::vector<std::int64_t> (*save_counts)(const void*) = nullptr;
  void (*load_counts)(void*, const std::vector<std::int64_t>&) = nullptr;
};

template <class H, class Invoker, class Ctx, class... Point>
void call_handler(void* hook, void* ctx) {
  Invoker{}(*static_cast<H*>(hook), *static_cast<Ctx*>(ctx), Point{}...);
}

/// The trampoline for one handler, told `Point...` (none or one), or null when it cannot
/// be called so with a `Ctx`.
template <class H, class Invoker, class Ctx, class... Point>
constexpr erased_call caller_for() {
  if constexpr (std::is_invocable_v<Invoker, H&, Ctx&, Point...>)
    return &call_handler<H, Invoker, Ctx, Point...>;
  else
    return nullptr;
}

/// One trampoline per point a handler may be told (its declared points and the built-in
/// ones, each once); empty when it takes the tag at none of them.
template <class H, class Invoker, class Ctx, class... Declared, class... Builtin>
std::vector<point_call> point_calls_for(point_list<Declared...>, point_list<Builtin...>) {
  if constexpr (!std::disjunction_v<std::is_invocable<Invoker, H&, Ctx&, Declared>...,
                                    std::is_invocable<Invoker, H&, Ctx&, Builtin>...>) {
    return {};
  } else {
    std::vector<point_call> calls;
    auto add = [&](std::string_view name, erased_call call) {
      for (const auto& c : calls)
        if (c.point == name) return;
      calls.push_back({name, call});
    };
    (add(Declared::name, caller_for<H, Invoker, Ctx, Declared>()), ...);
    (add(Builtin::name, caller_for<H, Invoker, Ctx, Builtin>()), ...);
    return calls;
  }
}

template <class H>
std::any save_state(const void* hook) {
  return static_cast<const H*>(hook)->state_dict();
}

template <class H>
void load_state(void* hook, const std::any& state) {
  using state_type = std::remove_cvref_t<decltype(std::declval<const H&>().state_dict())>;
  const auto* typed = std::any_cast<state_type>(&state);
  if (!typed)
    throw binding_error(
        fmt::format("hookforge: state for hook {} has the wrong type", type_name<H>()));
  static_cast<H*>(hook)->load_state_dict(*typed);
}

template <class H>
std::vector<std::int64_t> save_counts(const void* hook) {
  return static_cast<const H*>(hook)->event_counts();
}

template <class H>
void load_counts(void* hook, const std::vector<std::int64_t>& counts) {
  static_cast<H*>(hook)->set_event_counts(counts);
}

inline void apply_binding_map(erased_hook& hook, const binding_map& remap) {
  for (const auto& [method, points] : remap) {
    bool found = false;
    for (auto& h : hook.handlers)
      if (h.method == method) {
        h.points = points;
        found = true;
      }
    if (!found) {
      std::vector<std::string_view> names;
      for (const auto& h : hook.handlers) names.push_back(h.method);
      throw binding_error(
          fmt::format("hookforge: bindings: hook {} has no handler '{}' (its handlers: {})",
                      hook.type_name, method, join_names(names, ", ")));
    }
  }
}

}  // namespace detail

/// A type-erased hook that can be attached to runners whose context is `Ctx`.
template <class Ctx>
class any_hook {
 public:
  /// Take ownership of `hook`.
  template <class H>
    requires(!std::is_same_v<std::remove_cvref_t<H>, any_hook>)
  explicit any_hook(H hook, hook_options options = {})
      : any_hook(std::make_shared<H>(std::move(hook)), std::move(options)) {}

  /// Share `hook` with others (one instance firing from several components).
  template <class H>
  explicit any_hook(std::shared_ptr<H> hook, hook_options options = {}) {
    static_assert(has_bindings<H>,
                  "hookforge: the hook declares no handlers. Declare `static constexpr auto "
                  "bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(method, point...));`");
    erased_.type_name = std::string(hook_name<H>());
    erased_.priority = options.priority.value_or(priority_of<H>());
    if (!priority::in_range(erased_.priority))
      throw binding_error(fmt::format(
          "hookforge: hook {}: priority {} is out of range [0, 100] (HIGHEST = 0 ... LOWEST = 100)",
          erased_.type_name, erased_.priority));
    erased_.capture_safe = capture_safe_of<H>();
    add_handlers<H>(bindings_of<H>{});
    if constexpr (persistent<H>)
      erased_.state_key = options.key.empty() ? std::string(state_key_of<H>()) : options.key;
    if constexpr (stateful<H>) {
      erased_.save_state = &detail::save_state<H>;
      erased_.load_state = &detail::load_state<H>;
    }
    if constexpr (counted<H>) {
      erased_.save_counts = &detail::save_counts<H>;
      erased_.load_counts = &detail::load_counts<H>;
    }
    detail::apply_binding_map(erased_, options.bindings);
    erased_.object = std::move(hook);
  }

  std::string_view type_name() const { return erased_.type_name; }
  int priority() const { return erased_.priority; }
  const detail::erased_hook& erased() const { return erased_; }

 private:
  template <class H, class... B>
  void add_handlers(detail::type_list<B...>) {
    (erased_.handlers.push_back(
         detail::erased_handler{std::string(B::method),
                                {B::points::names.begin(), B::points::names.end()},
                                std::string(detail::handler_fields_text<H, B::method_name>()),
                                fields_of_handler<H>(B::method),
                                detail::caller_for<H, typename B::invoker, Ctx>(),
                                detail::point_calls_for<H, typename B::invoker, Ctx>(
                                    typename B::points{}, points::builtin{})}),
     ...);
  }

  detail::erased_hook erased_;
};

}  // namespace hookforge
