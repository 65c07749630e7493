// hookforge/core/hook_set.hpp — several hooks passed as one attach argument.
//
//   auto logging = hookforge::hook_set(hookforge::ref(timer), hookforge::ref(progress));
//   TrainingEpochRunner train(optimizer, {}, logging, GradientClip{{.max_norm = 1}});
//
// A runner given a hook_set attaches each of its hooks as if they had been passed one by
// one, in place of the set: the same checks, priorities, attach order, state keys and
// binding table. Bundles of built-in hooks (hookforge::default_hooks) hand out their
// hooks this way, one set per component. A set holds hooks, not other sets.
#pragma once

#include <tuple>
#include <type_traits>
#include <utility>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_pack.hpp"

namespace hookforge {

template <class... Hooks>
class hook_set;

namespace detail {
template <class T>
inline constexpr bool is_hook_set = false;
template <class... Hooks>
inline constexpr bool is_hook_set<hook_set<Hooks...>> = true;
}  // namespace detail

template <class... Hooks>
class hook_set {
  static_assert(!(detail::is_hook_set<Hooks> || ...),
                "hookforge: a hook_set holds hooks, not other hook_sets");

 public:
  explicit hook_set(Hooks... hooks) : hooks(std::move(hooks)...) {}

  std::tuple<Hooks...> hooks;
};

template <class... Hooks>
hook_set(Hooks...) -> hook_set<Hooks...>;

namespace detail {

/// The hooks an attach argument stands for: itself, or a set's members.
template <class H>
struct attached_hooks {
  using type = type_list<H>;
  static std::tuple<H> take(H&& hook) { return std::tuple<H>(std::move(hook)); }
};
template <class... Hooks>
struct attached_hooks<hook_set<Hooks...>> {
  using type = type_list<Hooks...>;
  static std::tuple<Hooks...> take(hook_set<Hooks...>&& set) { return std::move(set.hooks); }
};

template <class... Lists>
struct concat_lists;
template <>
struct concat_lists<> {
  using type = type_list<>;
};
template <class... A>
struct concat_lists<type_list<A...>> {
  using type = type_list<A...>;
};
template <class... A, class... B, class... Rest>
struct concat_lists<type_list<A...>, type_list<B...>, Rest...> {
  using type = typename concat_lists<type_list<A..., B...>, Rest...>::type;
};

template <class Runner, class List>
struct pack_over;
template <class Runner, class... Hooks>
struct pack_over<Runner, type_list<Hooks...>> {
  using type = hook_pack<Runner, Hooks...>;
};

/// The pack of the hooks the arguments stand for, sets opened.
template <class Runner, class... Args>
using flat_pack =
    typename pack_over<Runner,
                       typename concat_lists<typename attached_hooks<Args>::type...>::type>::type;

}  // namespace detail

/// A pack given one or more hook_sets: the pack of their hooks, in argument order.
template <class Runner, class... Args>
  requires(detail::is_hook_set<Args> || ...)
class hook_pack<Runner, Args...> : public detail::flat_pack<Runner, Args...> {
  using base = detail::flat_pack<Runner, Args...>;

 public:
  explicit hook_pack(Args... args)
      : hook_pack(
            std::tuple_cat(detail::attached_hooks<Args>::take(std::move(args))...),
            std::make_index_sequence<(std::tuple_size_v<decltype(detail::attached_hooks<Args>::take(
                                          std::declval<Args>()))> +
                                      ...)>{}) {}

 private:
  // Straight into the pack's own constructor, so a failed attach check of a set's hook is
  // reported through as few "required from" lines as possible.
  template <class Tuple, std::size_t... I>
  hook_pack(Tuple&& hooks, std::index_sequence<I...>) : base(std::get<I>(std::move(hooks))...) {}
};

}  // namespace hookforge
