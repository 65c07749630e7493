// hookforge/core/runtime/any_hook.hpp — a hook held type-erased, for config-driven runs.
//
// The same hook class serves static and runtime use: `any_hook<Ctx>` reads its
// `bindings` at construction and keeps, per handler, the method name, the point
// names it binds to and a plain function pointer that calls it with a `Ctx`.
// Points are matched by name when the hook is attached to a runner (see
// runtime_hooks.hpp), so a config can bind to points this code never names.
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

#include <fmt/format.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/priority.hpp"
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

struct erased_handler {
  std::string method;
  std::vector<std::string> points;
  erased_call call;  ///< null when the handler cannot take this context type
};

/// The context-independent part of an any_hook.
struct erased_hook {
  std::shared_ptr<void> object;
  std::string type_name;
  int priority = priority::NORMAL;
  std::vector<erased_handler> handlers;
  // State and event counts (null when the hook has none), saved under state_key.
  std::string state_key;
  std::any (*save_state)(const void*) = nullptr;
  void (*load_state)(void*, const std::any&) = nullptr;
  std::vector<std::int64_t> (*save_counts)(const void*) = nullptr;
  void (*load_counts)(void*, const std::vector<std::int64_t>&) = nullptr;
};

template <class H, class Invoker, class Ctx>
void call_handler(void* hook, void* ctx) {
  Invoker{}(*static_cast<H*>(hook), *static_cast<Ctx*>(ctx));
}

/// The trampoline for one handler, or null when it cannot take a `Ctx`.
template <class H, class Invoker, class Ctx>
constexpr erased_call caller_for() {
  if constexpr (std::is_invocable_v<Invoker, H&, Ctx&>)
    return &call_handler<H, Invoker, Ctx>;
  else
    return nullptr;
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
    throw binding_error(fmt::format("hookforge: state for hook {} has the wrong type", type_name<H>()));
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
      throw binding_error(fmt::format(
          "hookforge: bindings: hook {} has no handler '{}' (its handlers: {})", hook.type_name,
          method, fmt::join(names, ", ")));
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
    (erased_.handlers.push_back(detail::erased_handler{
         std::string(B::method),
         {B::points::names.begin(), B::points::names.end()},
         detail::caller_for<H, typename B::invoker, Ctx>()}),
     ...);
  }

  detail::erased_hook erased_;
};

}  // namespace hookforge
