// hookforge/core/checks.hpp — the compile-time checks made when hooks are attached to a runner.
//
// Each check is a function template whose parameters name the hook, the
// handler's method, the point and the runner, so the compiler prints them in
// the "In instantiation of ..." line right above the static_assert's text.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/point.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/core/runner.hpp"

namespace hookforge {

class runtime_hooks;

namespace check {

template <class Hook, class Runner, bool HasHandlers>
constexpr void hook_has_handlers() {
  static_assert(HasHandlers,
                "hookforge: Hook declares no handlers, so attaching it to Runner does nothing. Give it "
                "`static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(method, "
                "point...));`");
}

template <class Hook, int Priority, bool InRange>
constexpr void priority_in_range() {
  static_assert(InRange,
                "hookforge: a priority must lie in [0, 100] (HIGHEST = 0 ... LOWEST = 100)");
}

template <class Hook, fixed_string Method, class Runner, bool BindsHere>
constexpr void handler_binds_to_runner() {
  static_assert(BindsHere,
                "hookforge: Hook declares handler method(s) (Method) but Runner exposes no matching "
                "HookPoint. Was this hook attached to the wrong target? [Hook, Method, Runner: see "
                "'with' above]");
}

template <class Hook, fixed_string Method, class Point, class Runner, bool Callable>
constexpr void handler_takes_runner_context() {
  static_assert(Callable,
                "hookforge: handler Method of Hook cannot be called with the context (Ctx) of Runner at "
                "Point. Does it take another context type, or read a field this one lacks? [see "
                "'with' above]");
}

template <class HookA, class HookB, class Runner>
constexpr void state_keys_distinct() {
  static_assert(sizeof(HookA) == 0,
                "hookforge: two stateful hooks on this runner share a state key (hooks with "
                "state_dict() or event-filter counts are saved by key). Give one its own key with "
                "hookforge::keyed<\"name\">(hook).");
}

}  // namespace check

namespace detail {

/// The first point of B that Runner declares (void when none).
template <class Runner, class B>
struct first_match;
template <class Runner, fixed_string M, class Inv, class... P>
struct first_match<Runner, binding<M, Inv, P...>> {
  template <class... Q>
  struct pick { using type = void; };
  template <class Q0, class... Q>
  struct pick<Q0, Q...> {
    using type = std::conditional_t<points_of<Runner>::template contains<Q0>, Q0,
                                    typename pick<Q...>::type>;
  };
  using type = typename pick<P...>::type;
};

template <class Runner, class Hook, class B>
constexpr void check_binding() {
  if constexpr (B::points::size > 0) {  // a disabled handler binds nowhere, by request
    using hit = typename first_match<Runner, B>::type;
    check::handler_binds_to_runner<Hook, B::method_name, Runner, !std::is_void_v<hit>>();
    if constexpr (!std::is_void_v<hit>)
      check::handler_takes_runner_context<
          Hook, B::method_name, hit, Runner,
          std::is_invocable_v<typename B::invoker, Hook&, context_of<Runner>&>>();
  }
}

template <class Runner, class Hook, class... B>
constexpr void check_bindings(type_list<B...>) {
  (check_binding<Runner, Hook, B>(), ...);
}

/// Every check for one hook attached to Runner.
template <class Runner, class Hook>
constexpr bool check_hook() {
  if constexpr (std::is_same_v<Hook, runtime_hooks>) {
    return true;
  } else {
    check::hook_has_handlers<Hook, Runner, has_bindings<Hook>>();
    check::priority_in_range<Hook, priority_of<Hook>(), priority::in_range(priority_of<Hook>())>();
    check_bindings<Runner, Hook>(bindings_of<Hook>{});
    return true;
  }
}

/// The state keys of the persistent hooks among Hooks, in order.
template <class... Hooks>
constexpr auto static_state_keys() {
  constexpr std::size_t n = (std::size_t{persistent<Hooks>} + ... + 0);
  std::array<std::string_view, n> keys{};
  std::size_t i = 0;
  ([&] {
    if constexpr (persistent<Hooks>) keys[i++] = state_key_of<Hooks>();
  }(), ...);
  return keys;
}

/// Indices (a, b) of the first two hooks sharing a state key, or (npos, npos).
template <class... Hooks>
constexpr std::array<std::size_t, 2> duplicate_state_key() {
  constexpr std::size_t npos = static_cast<std::size_t>(-1);
  constexpr std::array<bool, sizeof...(Hooks)> has{persistent<Hooks>...};
  constexpr std::array<std::string_view, sizeof...(Hooks)> key{
      (persistent<Hooks> ? state_key_of<Hooks>() : std::string_view{})...};
  for (std::size_t a = 0; a < sizeof...(Hooks); ++a)
    for (std::size_t b = a + 1; b < sizeof...(Hooks); ++b)
      if (has[a] && has[b] && key[a] == key[b]) return {a, b};
  return {npos, npos};
}

template <class Runner, class... Hooks>
constexpr bool check_state_keys() {
  if constexpr (sizeof...(Hooks) > 1) {
    constexpr auto dup = duplicate_state_key<Hooks...>();
    if constexpr (dup[0] != static_cast<std::size_t>(-1)) {
      using list = type_list<Hooks...>;
      check::state_keys_distinct<type_at_t<dup[0], list>, type_at_t<dup[1], list>, Runner>();
    }
  }
  return true;
}

/// All attach checks for a runner's hook pack.
template <class Runner, class... Hooks>
constexpr bool check_pack() {
  static_assert((std::size_t{std::is_same_v<Hooks, runtime_hooks>} + ... + 0) <= 1,
                "hookforge: list hookforge::runtime_hooks at most once among a runner's hooks");
  (check_hook<Runner, Hooks>(), ...);
  return check_state_keys<Runner, Hooks...>();
}

}  // namespace detail
}  // namespace hookforge
