// hookforge/core/hook_traits.hpp — what hookforge reads from a hook type besides its bindings:
// its priority, whether it carries state, the key that state is saved under, and whether its
// handlers may be recorded in a CUDA graph.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hookforge/core/priority.hpp"
#include "hookforge/core/type_name.hpp"

namespace hookforge {

/// The hook's own priority: `static constexpr int priority`, else NORMAL.
template <class H>
constexpr int priority_of() {
  if constexpr (requires {
                  { H::priority } -> std::convertible_to<int>;
                })
    return H::priority;
  else
    return priority::NORMAL;
}

/// A hook whose state is saved in and restored from checkpoints.
template <class H>
concept stateful = requires(H& h, const H& ch) {
  ch.state_dict();
  h.load_state_dict(ch.state_dict());
};

/// A hook that counts events (an event filter, see filter.hpp): its counts are saved
/// in checkpoints too, so `every(n)` keeps counting across a resume.
template <class H>
concept counted = requires(H& h, const H& ch) {
  { ch.event_counts() } -> std::convertible_to<std::vector<std::int64_t>>;
  h.set_event_counts(ch.event_counts());
};

/// A hook with anything to save: state, event counts, or both (under one key).
template <class H>
concept persistent = stateful<H> || counted<H>;

/// The key a stateful hook's state is stored under: `static constexpr
/// std::string_view state_key` when the hook gives one, else its type name.
template <class H>
constexpr std::string_view state_key_of() {
  if constexpr (requires { std::string_view{H::state_key}; })
    return H::state_key;
  else
    return type_name<H>();
}

/// A hook whose handlers may be recorded once in a CUDA graph and replayed at every later
/// step: `static constexpr bool capture_safe = true`. Say it only of a hook whose handlers
/// read no device value on the host, create no tensor from host data, and do the same
/// device work at every step (no branch on a counter, an epoch or a device value): a replay
/// repeats the captured work and runs none of the handler's host code. The default is
/// false, so a runner that captures (runner.hpp, captured_points) refuses a hook that
/// does not say it.
template <class H>
constexpr bool capture_safe_of() {
  if constexpr (requires {
                  { H::capture_safe } -> std::convertible_to<bool>;
                })
    return H::capture_safe;
  else
    return false;
}

/// The name of the hook a user wrote, seen through wrappers (`ref`, `rebind`, ...).
template <class H>
constexpr std::string_view hook_name() {
  if constexpr (requires { typename H::inner_type; })
    return hook_name<typename H::inner_type>();
  else
    return short_type_name<H>();
}

/// What hook H's handlers need from a context of type Ctx and Ctx lacks, as the hook
/// says it: `template <class C> static consteval std::string_view context_lacks()`, the
/// first missing field's name ("" when Ctx has everything), seen through wrappers. A hook
/// that says nothing lacks nothing here; the attach check then reports only that a handler
/// cannot be called. The built-in hooks say it (hooks/), so the check names the field.
template <class H, class Ctx>
consteval std::string_view context_lacks_of() {
  if constexpr (requires { typename H::inner_type; })
    return context_lacks_of<typename H::inner_type, Ctx>();
  else if constexpr (requires { H::template context_lacks<Ctx>(); })
    return H::template context_lacks<Ctx>();
  else
    return "";
}

/// A context with everything hook H says its handlers need: a handler constrained
/// `template <context_for<MyHook> C>` takes exactly the contexts its context_lacks() accepts.
template <class Ctx, class H>
concept context_for = context_lacks_of<H, Ctx>().empty();

}  // namespace hookforge
