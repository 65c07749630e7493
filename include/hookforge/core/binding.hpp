// hookforge/core/binding.hpp — a hook's declared bindings: which method fires at which points.
//
//   struct GradientNormLogger {
//     void log_grad_norm(auto& ctx);        // or (auto& ctx, auto point): told which point fired
//     static constexpr auto bindings = hookforge::bindings(
//         HOOKFORGE_HOOKS_INTO(log_grad_norm, points::on_post_backward,
//                              points::on_post_d_backward, points::on_post_g_backward));
//   };
//
// `bindings` is an empty value of type `detail::type_list<binding<Method, Invoker,
// Points...>...>`; everything about it is in its type. A method that appears in no
// binding is not a handler, whatever its name.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

#include "hookforge/core/fixed_string.hpp"
#include "hookforge/core/point.hpp"

namespace hookforge {

/// Method `Method` of a hook, fired at `Points...`. `Invoker{}(hook, ctx, P{})` calls it
/// with the point tag, `Invoker{}(hook, ctx)` without; each is invocable only where the
/// method takes those arguments, and dispatch prefers the tag (see detail::handler_takes_point).
/// No points means the binding is disabled (see `rebind`).
template <fixed_string Method, class Invoker, point... Points>
struct binding {
  static constexpr auto method_name = Method;  // as a template argument
  static constexpr std::string_view method = Method;
  using invoker = Invoker;
  using points = point_list<Points...>;
};

namespace detail {

/// The project's one type list: a hook's bindings, a pack's hooks.
template <class... T>
struct type_list {
  static constexpr std::size_t size = sizeof...(T);
};

}  // namespace detail

/// What a hook stores in `static constexpr auto bindings`: an empty value whose
/// type lists the bindings.
template <class... Bindings>
constexpr detail::type_list<Bindings...> bindings(Bindings...) {
  return {};
}

namespace detail {

/// The I-th type of a type_list. Clang's builtin where there is one; otherwise
/// overload resolution on indexed bases, one class per list rather than per element.
template <std::size_t I, class List>
struct type_at;
#if defined(__has_builtin) && __has_builtin(__type_pack_element)
template <std::size_t I, class... T>
struct type_at<I, type_list<T...>> {
  using type = __type_pack_element<I, T...>;
};
#else
template <std::size_t I, class T>
struct indexed_type {};
template <class Indices, class... T>
struct indexed_types;
template <std::size_t... I, class... T>
struct indexed_types<std::index_sequence<I...>, T...> : indexed_type<I, T>... {};
template <std::size_t I, class T>
std::type_identity<T> pick_indexed(indexed_type<I, T>);

// Qualified call: argument-dependent lookup would complete every T (and trips GCC 12's
// -ftime-report into an internal compiler error).
template <std::size_t I, class... T>
struct type_at<I, type_list<T...>> {
  using type = typename decltype(detail::pick_indexed<I>(
      indexed_types<std::index_sequence_for<T...>, T...>{}))::type;
};
#endif
template <std::size_t I, class List>
using type_at_t = typename type_at<I, List>::type;

/// Can a binding's invoker call its handler on `hook` with `ctx`? A requires-expression:
/// far cheaper to instantiate, per binding and context, than std::is_invocable.
template <class Invoker, class H, class Ctx>
concept invocable_on = requires(Invoker invoker, H& hook, Ctx& ctx) { invoker(hook, ctx); };

/// Leads the parameter list HOOKFORGE_HOOKS_INTO spells its points in (see the macro).
struct points_follow {};

/// The macro's invoker: the overload set of its two calls, (self, ctx) and (self, ctx, point).
template <class... Calls>
struct handler_invoker : Calls... {
  using Calls::operator()...;
};
template <class... Calls>
handler_invoker(Calls...) -> handler_invoker<Calls...>;

template <fixed_string Method, class Invoker, class... P>
constexpr auto make_binding(Invoker, void (*)(points_follow, P...)) {
  static_assert(std::is_empty_v<Invoker>,
                "hookforge: a binding's invoker must not capture anything");
  if constexpr ((point<P> && ...)) {
    return binding<Method, Invoker, P...>{};
  } else {
    // GCC and Clang stand `int` in for a point name they have already reported as
    // undeclared; binding nowhere then keeps that report the only error.
    static_assert(((point<P> || std::is_same_v<P, int>) && ...),
                  "hookforge: HOOKFORGE_HOOKS_INTO(method, points...) takes point types "
                  "(declared with HOOKFORGE_POINT)");
    return binding<Method, Invoker>{};
  }
}

}  // namespace detail

namespace detail {
/// A `bindings` member not made by hookforge::bindings() declares no handlers.
template <class T>
struct as_binding_list {
  using type = type_list<>;
};
template <class... B>
struct as_binding_list<type_list<B...>> {
  using type = type_list<B...>;
};

template <class H>
struct declared_bindings {
  using type = type_list<>;
};
template <class H>
  requires requires { H::bindings; }
struct declared_bindings<H> {
  using type = typename as_binding_list<std::remove_cvref_t<decltype(H::bindings)>>::type;
};
}  // namespace detail

/// The bindings of hook type H as a type list (empty when H declares none).
template <class H>
using bindings_of = typename detail::declared_bindings<H>::type;

namespace detail {
/// Does H have a handler called `Method`?
template <class H, fixed_string Method>
constexpr bool has_handler_named() {
  return []<class... B>(type_list<B...>) {
    return ((B::method == Method.view()) || ...);
  }(bindings_of<H>{});
}

/// Does the handler behind Invoker take the point tag P after the context? Dispatch then
/// calls it so, even where it could also take the context alone.
template <class Invoker, class H, class Ctx, class P>
concept handler_takes_point =
    requires(Invoker invoker, H& hook, Ctx& ctx, P point) { invoker(hook, ctx, point); };

/// Can the handler behind Invoker run at P: with the tag, or with the context alone?
template <class Invoker, class H, class Ctx, class P>
concept handler_callable_at =
    handler_takes_point<Invoker, H, Ctx, P> || invocable_on<Invoker, H, Ctx>;
}  // namespace detail

/// Does H declare at least one binding?
template <class H>
inline constexpr bool has_bindings = bindings_of<H>::size > 0;

/// One (method, point) pair of a hook's bindings.
struct method_point {
  std::string_view method;
  std::string_view point;
  constexpr bool operator==(const method_point&) const = default;
};

namespace detail {
template <class... B>
constexpr auto list_bindings(type_list<B...>) {
  constexpr std::size_t n = (B::points::size + ... + 0);
  std::array<method_point, n> out{};
  std::size_t i = 0;
  auto add = [&]<class Bi>(std::type_identity<Bi>) {
    for (auto p : Bi::points::names) out[i++] = {Bi::method, p};
  };
  (add(std::type_identity<B>{}), ...);
  return out;
}
}  // namespace detail

/// Where H's handlers bind, as (method, point) pairs: `constexpr` and exact.
template <class H>
constexpr auto list_bindings() {
  return detail::list_bindings(bindings_of<H>{});
}

}  // namespace hookforge

/// A binding of the hook's method `method` to one or several points. The method takes
/// the context, and optionally the point tag after it: `method(ctx, point)` is called
/// where valid, else `method(ctx)`.
/// Declare the handler's return type (e.g. `void`) so a mismatched context is
/// reported by hookforge's check rather than deep inside the handler.
// The points are spelled as parameter types of a function type, not as template
// arguments: a misspelled point is then one error ("... has not been declared"),
// where a template argument list adds "template argument N is invalid" and more.
#define HOOKFORGE_HOOKS_INTO(method, ...)                                               \
  ::hookforge::detail::make_binding<#method>(                                           \
      ::hookforge::detail::handler_invoker{                                             \
          [](auto& hookforge_self,                                                      \
             auto& hookforge_ctx) -> decltype(hookforge_self.method(hookforge_ctx)) {   \
            return hookforge_self.method(hookforge_ctx);                                \
          },                                                                            \
          [](auto& hookforge_self, auto& hookforge_ctx, auto hookforge_point)           \
              -> decltype(hookforge_self.method(hookforge_ctx, hookforge_point)) {      \
            return hookforge_self.method(hookforge_ctx, hookforge_point);               \
          }},                                                                           \
      [] {                                                                              \
        using hookforge_points = void(::hookforge::detail::points_follow, __VA_ARGS__); \
        return static_cast<hookforge_points*>(nullptr);                                 \
      }())
