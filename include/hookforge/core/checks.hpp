// hookforge/core/checks.hpp — the compile-time checks made when hooks are attached to a runner.
//
// Each check (namespace check) is a function template whose parameters name the hook,
// the handler's method, the point and the runner, so the compiler prints them in the
// "In instantiation of ..." line right above the static_assert's text. What they are
// given is worked out beforehand, per hook, in detail::attach_report.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string_view>
#include <type_traits>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/fixed_string.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/point.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/core/runner.hpp"
#include "hookforge/core/type_name.hpp"

// C++26 lets a static_assert print a message computed at compile time (P2741): there,
// each check's message names the hook, method, runner and point itself, on one line.
// Elsewhere (GCC 12, C++20) the fixed text refers to the template arguments, which the
// compiler prints in the "In instantiation of" line above it.
#if defined(__cpp_static_assert) && __cpp_static_assert >= 202306L
#define HOOKFORGE_COMPOSED_MESSAGES 1
#else
#define HOOKFORGE_COMPOSED_MESSAGES 0
#endif

namespace hookforge {

class runtime_hooks;

namespace detail {

/// A message composed at compile time (C++26 static_assert messages); long ones are cut.
class static_message {
 public:
  constexpr static_message& operator<<(std::string_view part) {
    for (char c : part)
      if (length_ < sizeof text_) text_[length_++] = c;
    return *this;
  }
  constexpr static_message& operator<<(int value) {
    if (value < 0) *this << "-";
    char digits[12]{};
    int n = 0;
    unsigned magnitude =
        value < 0 ? 0u - static_cast<unsigned>(value) : static_cast<unsigned>(value);
    do digits[n++] = static_cast<char>('0' + magnitude % 10);
    while ((magnitude /= 10) != 0);
    while (n > 0) *this << std::string_view(&digits[--n], 1);
    return *this;
  }
  template <class... P>
  constexpr static_message& operator<<(point_list<P...>) {
    std::string_view separator;
    ((*this << separator << P::name, separator = ", "), ...);
    return *this;
  }
  constexpr const char* data() const { return text_; }
  constexpr std::size_t size() const { return length_; }

 private:
  char text_[1024]{};
  std::size_t length_ = 0;
};

/// A point's name; "-" for none (a check that passed).
template <class P>
constexpr std::string_view point_name() {
  if constexpr (std::is_void_v<P>)
    return "-";
  else
    return P::name;
}

}  // namespace detail

namespace check {

// hook_pack's constructor calls each check directly, with what the check reports on
// as template arguments: GCC then prints the check (naming hook, method, runner and
// point), the pack's constructor, the runner's and the user's line, and the message,
// within ten lines. Keep it that way: every helper between adds a line.

template <class Hook, class Runner, bool HasHandlers>
constexpr void hook_has_handlers() {
#if HOOKFORGE_COMPOSED_MESSAGES
  static_assert(HasHandlers,
                detail::static_message{}
                    << "hookforge: " << hook_name<Hook>()
                    << " declares no handlers, so attaching it to " << runner_name<Runner>()
                    << " does nothing. Give it `static constexpr auto bindings "
                    << "= hookforge::bindings(HOOKFORGE_HOOKS_INTO(method, point...));`");
#else
  static_assert(
      HasHandlers,
      "hookforge: Hook declares no handlers, so attaching it to Runner does nothing. Give it "
      "`static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(method, "
      "point...));`");
#endif
}

template <class Hook, int Priority, bool InRange>
constexpr void priority_in_range() {
#if HOOKFORGE_COMPOSED_MESSAGES
  static_assert(InRange,
                detail::static_message{}
                    << "hookforge: " << hook_name<Hook>() << " has priority " << Priority
                    << ", but a priority must lie in [0, 100] (HIGHEST = 0 ... LOWEST = 100)");
#else
  static_assert(InRange,
                "hookforge: a priority must lie in [0, 100] (HIGHEST = 0 ... LOWEST = 100)");
#endif
}

template <class Hook, fixed_string Method, class Points, class Runner, bool BindsHere>
constexpr void handler_binds_to_runner() {
#if HOOKFORGE_COMPOSED_MESSAGES
  static_assert(BindsHere, detail::static_message{}
                               << "hookforge: " << hook_name<Hook>() << "::" << Method.view()
                               << " binds to " << Points{} << ", which " << runner_name<Runner>()
                               << " does not expose. Was this hook attached to the wrong target?");
#else
  static_assert(
      BindsHere,
      "hookforge: Hook declares handler method(s) (Method) but Runner exposes no matching "
      "HookPoint. Was this hook attached to the wrong target? [Hook, Method, Points, Runner: "
      "see 'with' above]");
#endif
}

template <class Hook, fixed_string Method, class Point, class Runner, fixed_string Lacks,
          bool Callable>
constexpr void handler_takes_runner_context() {
  if constexpr (!Lacks.view().empty()) {  // the hook names what the context lacks
#if HOOKFORGE_COMPOSED_MESSAGES
    static_assert(Callable, detail::static_message{}
                                << "hookforge: " << hook_name<Hook>() << "::" << Method.view()
                                << " cannot be called with the context of " << runner_name<Runner>()
                                << " (" << type_name<context_of<Runner>>() << ") at "
                                << detail::point_name<Point>() << ": the context has no "
                                << Lacks.view());
#else
    static_assert(Callable,
                  "hookforge: handler Method of Hook cannot be called with the context of Runner "
                  "at Point: the context has no Lacks [see 'with' above]");
#endif
  } else {
#if HOOKFORGE_COMPOSED_MESSAGES
    static_assert(Callable,
                  detail::static_message{}
                      << "hookforge: " << hook_name<Hook>() << "::" << Method.view()
                      << " cannot be called with the context of " << runner_name<Runner>() << " ("
                      << type_name<context_of<Runner>>() << ") at " << detail::point_name<Point>()
                      << ". Does it take another context type, or read a field this one lacks?");
#else
    static_assert(
        Callable,
        "hookforge: handler Method of Hook cannot be called with the context (Ctx) of Runner at "
        "Point. Does it take another context type, or read a field this one lacks? [see "
        "'with' above]");
#endif
  }
}

template <class Hook, fixed_string Method, class Point, class Runner, bool Safe>
constexpr void handler_capture_safe() {
#if HOOKFORGE_COMPOSED_MESSAGES
  static_assert(Safe, detail::static_message{}
                          << "hookforge: " << hook_name<Hook>() << "::" << Method.view()
                          << " runs at " << detail::point_name<Point>() << ", which "
                          << runner_name<Runner>()
                          << " records in a CUDA graph and replays, and the hook is not "
                          << "capture-safe. Attach it to a runner that does not capture, or "
                          << "declare `static constexpr bool capture_safe = true;` in a hook "
                          << "that reads nothing on the host and does the same work every step");
#else
  static_assert(Safe,
                "hookforge: handler Method of Hook runs at Point, which Runner records in a CUDA "
                "graph and replays, and Hook is not capture-safe. Attach it to a runner that does "
                "not capture, or declare `static constexpr bool capture_safe = true;` in a hook "
                "that reads nothing on the host and does the same work every step [see 'with' "
                "above]");
#endif
}

template <class HookA, class HookB, class Runner, bool Distinct>
constexpr void state_keys_distinct() {
#if HOOKFORGE_COMPOSED_MESSAGES
  static_assert(
      Distinct,
      detail::static_message{}
          << "hookforge: " << hook_name<HookA>() << " and " << hook_name<HookB>() << " on "
          << runner_name<Runner>() << " share the state key '" << state_key_of<HookA>()
          << "' (hooks with state_dict() or event-filter counts are saved by key). Give one "
          << "its own key with hookforge::keyed<\"name\">(hook).");
#else
  static_assert(Distinct,
                "hookforge: two stateful hooks on this runner share a state key (hooks with "
                "state_dict() or event-filter counts are saved by key). Give one its own key with "
                "hookforge::keyed<\"name\">(hook).");
#endif
}

template <class HookCtx, class Runner, bool Matches>
constexpr void any_hook_context_matches() {
#if HOOKFORGE_COMPOSED_MESSAGES
  static_assert(Matches, detail::static_message{}
                             << "hookforge: an any_hook<" << type_name<HookCtx>()
                             << "> cannot be attached to " << runner_name<Runner>()
                             << ", whose handlers receive " << type_name<context_of<Runner>>()
                             << ". Make the hook as hookforge::any_hook<"
                             << type_name<context_of<Runner>>() << ">(...)");
#else
  static_assert(
      Matches,
      "hookforge: an any_hook<HookCtx> cannot be attached to Runner, whose handlers receive "
      "another context type (Runner::Ctx). Make the hook as "
      "hookforge::any_hook<Runner::Ctx>(...) [HookCtx, Runner: see 'with' above]");
#endif
}

template <class Runner, bool TakesRuntimeHooks>
constexpr void runner_takes_runtime_hooks() {
#if HOOKFORGE_COMPOSED_MESSAGES
  static_assert(
      TakesRuntimeHooks,
      detail::static_message{}
          << "hookforge: " << runner_name<Runner>() << " has no slot for config-loaded hooks, "
          << "so attach() cannot take an any_hook. Construct it with hookforge::runtime_hooks{} "
          << "among its hooks, e.g. " << runner_name<Runner>()
          << " runner{hook, ..., hookforge::runtime_hooks{}}");
#else
  static_assert(TakesRuntimeHooks,
                "hookforge: Runner has no slot for config-loaded hooks, so attach() cannot take an "
                "any_hook. Construct it with hookforge::runtime_hooks{} among its hooks, e.g. "
                "Runner runner{hook, ..., hookforge::runtime_hooks{}}");
#endif
}

}  // namespace check

namespace detail {

/// Stands in for "no such binding" in a report.
using no_binding = binding<"", void>;

/// Does B bind to a point of Runner? A binding to no points is disabled, by request.
template <class Runner, class B>
constexpr bool binds_to() {
  return []<class... P>(point_list<P...>) {
    return sizeof...(P) == 0 || (points_of<Runner>::template contains<P> || ...);
  }(typename B::points{});
}

/// Can the handler of B on Hook run at point P with the context Ctx (told P, or not)?
template <class Hook, class B, class P, class Ctx>
inline constexpr bool handler_callable = handler_callable_at<typename B::invoker, Hook, Ctx, P>;

/// Index of the first true flag (flags.size() when none): one fold where a
/// recursive "first match" template would instantiate a class per element.
constexpr std::size_t first_true(std::initializer_list<bool> flags) {
  std::size_t i = 0;
  for (bool f : flags) {
    if (f) break;
    ++i;
  }
  return i;
}

/// The first point of Runner among B's where the handler of B on Hook cannot run.
template <class Runner, class Hook, class B, class Points = typename B::points>
struct uncallable_in;
template <class Runner, class Hook, class B, class... P>
struct uncallable_in<Runner, Hook, B, point_list<P...>> {
  static constexpr std::size_t index =
      first_true({(points_of<Runner>::template contains<P> &&
                   !handler_callable<Hook, B, P, context_of<Runner>>)...});
  static constexpr bool found = index < sizeof...(P);
  using point = type_at_t<index, type_list<P..., void>>;  // void when none
};

/// The first of B's points that Runner fires inside a captured CUDA graph.
template <class Runner, class B, class Points = typename B::points>
struct captured_in;
template <class Runner, class B, class... P>
struct captured_in<Runner, B, point_list<P...>> {
  static constexpr std::size_t index =
      first_true({captured_points_of<Runner>::template contains<P>...});
  static constexpr bool found = index < sizeof...(P);
  using point = type_at_t<index, type_list<P..., void>>;  // void when none
};

template <class Runner, class Hook, class List>
struct binding_report;
template <class Runner, class Hook, class... B>
struct binding_report<Runner, Hook, type_list<B...>> {
  /// The first binding to none of Runner's points (no_binding when none).
  using unbound = type_at_t<first_true({!binds_to<Runner, B>()...}), type_list<B..., no_binding>>;

  /// The first (binding, point) where the handler cannot take the context.
  using uncallable = type_at_t<first_true({uncallable_in<Runner, Hook, B>::found...}),
                               type_list<B..., no_binding>>;
  using uncallable_point = typename uncallable_in<Runner, Hook, uncallable>::point;

  /// The first binding to a point Runner captures in a CUDA graph, and that point.
  using captured =
      type_at_t<first_true({captured_in<Runner, B>::found...}), type_list<B..., no_binding>>;
  using captured_point = typename captured_in<Runner, captured>::point;
};

/// What the attach checks report on for one hook of Runner; the checks read it in
/// hook_pack's constructor. The runtime slot passes every check.
template <class Runner, class Hook>
struct attach_report {
  static constexpr bool skip = std::is_same_v<Hook, runtime_hooks>;
  static constexpr bool has_handlers = skip || has_bindings<Hook>;
  static constexpr int priority = skip ? priority::NORMAL : priority_of<Hook>();
  static constexpr bool priority_ok = priority::in_range(priority);

  using bindings =
      binding_report<Runner, Hook, std::conditional_t<skip, type_list<>, bindings_of<Hook>>>;
  using unbound = typename bindings::unbound;
  static constexpr bool binds_here = std::is_same_v<unbound, no_binding>;
  using uncallable = typename bindings::uncallable;
  using uncallable_point = typename bindings::uncallable_point;
  static constexpr bool callable = std::is_void_v<uncallable_point>;
  // What the hook says the context lacks, when a handler cannot be called ("" otherwise).
  static constexpr std::string_view lacks =
      callable ? std::string_view{} : context_lacks_of<Hook, context_of<Runner>>();
  static constexpr auto lacks_name = fixed_string<lacks.size() + 1>(lacks);
  // A handler at a point the runner captures in a CUDA graph needs a capture-safe hook.
  using captured = typename bindings::captured;
  using captured_point = typename bindings::captured_point;
  static constexpr bool capture_ok = std::is_void_v<captured_point> || capture_safe_of<Hook>();
};

/// The state keys of the persistent hooks among Hooks, in order.
template <class... Hooks>
constexpr auto static_state_keys() {
  constexpr std::size_t n = (std::size_t{persistent<Hooks>} + ... + 0);
  std::array<std::string_view, n> keys{};
  std::size_t i = 0;
  (
      [&] {
        if constexpr (persistent<Hooks>) keys[i++] = state_key_of<Hooks>();
      }(),
      ...);
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

/// The first two hooks among Hooks sharing a state key (void, void when none).
template <class... Hooks>
struct state_key_report {
  static constexpr auto dup = duplicate_state_key<Hooks...>();
  static constexpr bool distinct = dup[0] == static_cast<std::size_t>(-1);
  using first = type_at_t<distinct ? 0 : dup[0] + 1, type_list<void, Hooks...>>;
  using second = type_at_t<distinct ? 0 : dup[1] + 1, type_list<void, Hooks...>>;
};

}  // namespace detail
}  // namespace hookforge

#undef HOOKFORGE_COMPOSED_MESSAGES
