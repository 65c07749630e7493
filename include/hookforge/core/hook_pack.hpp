// hookforge/core/hook_pack.hpp — the hooks attached to one runner, and dispatch.
//
// A runner keeps its hooks in a `hook_pack<Runner, Hooks...>` member and fires
// a point with `hooks.fire<points::on_post_step>(ctx)`:
//
//   template <class... Hooks>
//   class AttackRunner {
//    public:
//     using hook_points = hookforge::point_list<on_pre_attack, on_post_attack>;
//     struct Ctx { int step = 0; double strength = 0.1; };
//     explicit AttackRunner(Hooks... hooks) : hooks_(std::move(hooks)...) {}
//     void attack(Ctx& ctx) { hooks_.template fire<on_pre_attack>(ctx); ... }
//    private:
//     hookforge::hook_pack<AttackRunner, Hooks...> hooks_;
//   };
//
// Constructing the pack runs the attach checks (checks.hpp). For each point the
// handler order — priority, then attach order — is computed at compile time and
// firing expands to one direct call per handler: no allocation, no virtual
// call, no lookup. If `hookforge::runtime_hooks` is one of the hooks, the pack
// also takes `any_hook`s and merges their handlers into the same order.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/binding_table.hpp"
#include "hookforge/core/field_checks.hpp"  // with checks.hpp and fields.hpp
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/order.hpp"
#include "hookforge/core/point.hpp"
#include "hookforge/core/runner.hpp"
#include "hookforge/core/runtime/attach_policy.hpp"

namespace hookforge {

// The runtime layer is opt-in: a runner that lists runtime_hooks includes
// core/runtime/runtime_hooks.hpp; static dispatch alone needs neither it nor {fmt}.
class runtime_hooks;
template <class Ctx>
class any_hook;

namespace detail {

/// The I-th hook of a pack. Stored as a base of hook_slots, so the hook (and its
/// type) at an index is found by overload resolution on the base: no recursive
/// tuple machinery to instantiate per hook.
template <std::size_t I, class H>
struct hook_slot {
  [[no_unique_address]] H hook;
};

template <class Indices, class... Hooks>
struct hook_slots;
template <std::size_t... I, class... Hooks>
struct hook_slots<std::index_sequence<I...>, Hooks...> : hook_slot<I, Hooks>... {};

template <std::size_t I, class H>
constexpr H& hook_at(hook_slot<I, H>& s) {
  return s.hook;
}
template <std::size_t I, class H>
constexpr const H& hook_at(const hook_slot<I, H>& s) {
  return s.hook;
}
template <class H, std::size_t I>
constexpr H& hook_of_type(hook_slot<I, H>& s) {
  return s.hook;
}

/// The type of the I-th hook (unevaluated use only).
template <std::size_t I, class H>
H hook_type_at(const hook_slot<I, H>&);

/// One handler in a point's static firing order.
struct dispatch_slot {
  std::size_t hook;     ///< index in the pack
  std::size_t binding;  ///< index in the hook's bindings
  int priority;

  constexpr order_key key() const { return {priority, hook}; }
};

/// Every (point, handler) pair of a pack, in attach order: built once per pack,
/// then each point's order is read from it.
template <std::size_t Capacity>
struct bound_handlers {
  struct entry {
    std::size_t point;  ///< index in the runner's points
    dispatch_slot slot;
  };
  std::array<entry, Capacity> items{};
  std::size_t size = 0;

  constexpr void add(std::size_t point, dispatch_slot slot) { items[size++] = {point, slot}; }
  constexpr std::size_t count_at(std::size_t point) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < size; ++i) n += items[i].point == point;
    return n;
  }
};

/// How many points H's bindings name, runner's or not: a bound on H's entries.
template <class H>
constexpr std::size_t points_named() {
  return []<class... B>(type_list<B...>) { return (B::points::size + ... + 0); }(bindings_of<H>{});
}

/// The positions in Points of a binding's points (Points::size for one the runner lacks).
template <class Points, class... Q>
constexpr std::array<std::size_t, sizeof...(Q)> positions_in(point_list<Q...>) {
  return {Points::template index_of<Q>...};
}

template <class Points, class... Hooks>
constexpr auto make_bound_handlers() {
  bound_handlers<(points_named<Hooks>() + ... + 0)> out;
  std::size_t hook = 0;
  [[maybe_unused]] auto add_hook = [&]<class... B>(int priority, type_list<B...>) {
    std::size_t binding = 0;
    [[maybe_unused]] auto add_binding = [&](const auto& positions) {
      for (std::size_t point : positions)
        if (point < Points::size) out.add(point, {hook, binding, priority});
      ++binding;
    };
    (add_binding(positions_in<Points>(typename B::points{})), ...);
    ++hook;
  };
  (add_hook(priority_of<Hooks>(), bindings_of<Hooks>{}), ...);
  return out;
}

template <class Points, class... Hooks>
inline constexpr auto bound_handlers_v = make_bound_handlers<Points, Hooks...>();

/// The handlers bound to P, in firing order (order.hpp).
template <class Points, class P, class... Hooks>
constexpr auto dispatch_order() {
  constexpr auto& bound = bound_handlers_v<Points, Hooks...>;
  constexpr std::size_t point = Points::template index_of<P>;
  std::array<dispatch_slot, bound.count_at(point)> order{};
  std::size_t n = 0;
  for (std::size_t i = 0; i < bound.size; ++i) {
    if (bound.items[i].point != point) continue;
    const dispatch_slot slot = bound.items[i].slot;
    auto at = insertion_index(n, slot.key(), [&](std::size_t j) { return order[j].key(); });
    for (std::size_t j = n; j > at; --j) order[j] = order[j - 1];
    order[at] = slot;
    ++n;
  }
  return order;
}

template <class Points, class P, class... Hooks>
inline constexpr auto dispatch_order_v = dispatch_order<Points, P, Hooks...>();

/// The binding-table rows of P's static handlers, in firing order.
template <class Points, class P, class... Hooks>
constexpr auto static_rows() {
  constexpr auto& order = dispatch_order_v<Points, P, Hooks...>;
  std::array<static_row, order.size()> rows{};
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    using hooks = type_list<Hooks...>;
    ((rows[K] = {hook_name<type_at_t<order[K].hook, hooks>>(),
                 type_at_t<order[K].binding, bindings_of<type_at_t<order[K].hook, hooks>>>::method,
                 order[K].priority, order[K].key(), handler_fields_text_at<order[K], Hooks...>()}),
     ...);
  }(std::make_index_sequence<order.size()>{});
  return rows;
}

template <class Points, class P, class... Hooks>
inline constexpr auto static_rows_v = static_rows<Points, P, Hooks...>();

template <class... Hooks>
constexpr std::size_t runtime_slot_index() {
  constexpr bool is_slot[] = {std::is_same_v<Hooks, runtime_hooks>..., false};
  std::size_t i = 0;
  while (i < sizeof...(Hooks) && !is_slot[i]) ++i;
  return i;  // sizeof...(Hooks) when absent
}

}  // namespace detail

template <class Runner, class... Hooks>
class hook_pack {
  static constexpr std::size_t runtime_index = detail::runtime_slot_index<Hooks...>();
  using slots = detail::hook_slots<std::index_sequence_for<Hooks...>, Hooks...>;
  template <std::size_t I>
  using hook_t = decltype(detail::hook_type_at<I>(std::declval<const slots&>()));

 public:
  using runner_type = Runner;
  /// True when this pack can take config-loaded (`any_hook`) hooks.
  static constexpr bool takes_runtime_hooks = runtime_index < sizeof...(Hooks);

  explicit hook_pack(Hooks... hooks) : hooks_{{std::move(hooks)}...} {
    // The attach checks, called from here so that a failure is reported in a few lines
    // that name the hook, its method, the point and the runner (see checks.hpp).
    static_assert((std::size_t{std::is_same_v<Hooks, runtime_hooks>} + ... + 0) <= 1,
                  "hookforge: list hookforge::runtime_hooks at most once among a runner's hooks");
    (check::hook_has_handlers<Hooks, Runner, detail::attach_report<Runner, Hooks>::has_handlers>(),
     ...);
    (check::priority_in_range<Hooks, detail::attach_report<Runner, Hooks>::priority,
                              detail::attach_report<Runner, Hooks>::priority_ok>(),
     ...);
    (check::handler_binds_to_runner<Hooks,
                                    detail::attach_report<Runner, Hooks>::unbound::method_name,
                                    typename detail::attach_report<Runner, Hooks>::unbound::points,
                                    Runner, detail::attach_report<Runner, Hooks>::binds_here>(),
     ...);
    (check::handler_takes_runner_context<
         Hooks, detail::attach_report<Runner, Hooks>::uncallable::method_name,
         typename detail::attach_report<Runner, Hooks>::uncallable_point, Runner,
         detail::attach_report<Runner, Hooks>::lacks_name,
         detail::attach_report<Runner, Hooks>::callable>(),
     ...);
    (check::handler_capture_safe<Hooks, detail::attach_report<Runner, Hooks>::captured::method_name,
                                 typename detail::attach_report<Runner, Hooks>::captured_point,
                                 Runner, detail::attach_report<Runner, Hooks>::capture_ok>(),
     ...);
    // The batch fields (field_checks.hpp): reads<> and writes<> name handlers, batch_fields names
    // the runner's points, and each read field is there where its handler runs.
    (check::fields_name_handlers<Hooks, detail::field_methods_report<Hooks>::method,
                                 detail::field_methods_report<Hooks>::known>(),
     ...);
    using batch = detail::runner_fields<Runner>;
    check::fields_at_runner_point<Runner, typename batch::foreign_point,
                                  std::is_void_v<typename batch::foreign_point>>();
    (check::handler_reads_present<Hooks, fields_report<Hooks>::binding::method_name,
                                  fields_report<Hooks>::field, typename fields_report<Hooks>::point,
                                  Runner, typename fields_report<Hooks>::present,
                                  fields_report<Hooks>::provided>(),
     ...);
    using keys = detail::state_key_report<Hooks...>;
    check::state_keys_distinct<typename keys::first, typename keys::second, Runner,
                               keys::distinct>();
  }

  /// Run every handler bound to point P, in order.
  // Member signatures name the context through a template parameter: a runner may hold
  // its pack in a base class, where the runner's own members are not declared yet.
  template <class P, class Ctx>
  [[gnu::always_inline]] inline void fire(Ctx& ctx) {
    static_assert(std::is_same_v<Ctx, context_of<Runner>>,
                  "hookforge: fire() takes the runner's own context type (Runner::Ctx)");
    static_assert(points_of<Runner>::template contains<P>,
                  "hookforge: a runner fires a point it does not list in its hook_points");
    constexpr auto& order = detail::dispatch_order_v<points_of<Runner>, P, Hooks...>;
    constexpr auto seq = std::make_index_sequence<order.size()>{};
    if constexpr (!takes_runtime_hooks) {
      fire_static<order, P>(ctx, seq);
    } else {
      constexpr auto point = points_of<Runner>::template index_of<P>;
      auto dynamic = runtime().at(point);
      // [[likely]]: without it GCC 12 arranges the inlined merge so that the path with
      // no runtime handler bound pays 2 more instructions per fire (docs/benchmarks.md).
      if (dynamic.empty()) [[likely]]
        fire_static<order, P>(ctx, seq);
      else
        fire_merged<order, P>(ctx, dynamic, runtime().priorities_at(point), seq);
    }
  }

  /// Whether a handler (of a hook in the pack, or config-loaded) is bound to point P: a
  /// runner can skip work that only feeds P.
  template <class P>
  bool binds() const {
    if constexpr (detail::dispatch_order_v<points_of<Runner>, P, Hooks...>.size() > 0)
      return true;
    else if constexpr (takes_runtime_hooks)
      return !runtime().at(points_of<Runner>::template index_of<P>).empty();
    else
      return false;
  }

  /// Attach a config-loaded hook; needs `runtime_hooks` among the pack's hooks.
  // Not constrained: a runner without the slot, or a hook made for another context,
  // gets hookforge's message naming the runner rather than "no matching function".
  template <class Ctx>
  void attach(const any_hook<Ctx>& hook, attach_policy policy = {}) {
    constexpr bool same_context = std::is_same_v<Ctx, context_of<Runner>>;
    check::runner_takes_runtime_hooks<Runner, takes_runtime_hooks>();
    check::any_hook_context_matches<Ctx, Runner, same_context>();
    if constexpr (takes_runtime_hooks && same_context) {
      constexpr auto keys = detail::static_state_keys<Hooks...>();
      runtime().attach(hook.erased(), points_of<Runner>::names, runner_name<Runner>(), keys, policy,
                       captured_points_of<Runner>::names);
    }
  }

  // auto&: runtime_hooks is only declared here, so its members are looked up on use.
  auto& runtime()
    requires takes_runtime_hooks
  {
    return detail::hook_at<runtime_index>(hooks_);
  }
  const auto& runtime() const
    requires takes_runtime_hooks
  {
    return detail::hook_at<runtime_index>(hooks_);
  }

  template <std::size_t I>
  auto& get() {
    return detail::hook_at<I>(hooks_);
  }
  /// The hook of type H (ambiguous, so an error, when two hooks share it).
  template <class H>
  H& get() {
    return detail::hook_of_type<H>(hooks_);
  }

  /// Call f(key, hook) for every stateful static hook; runtime ones are in runtime().states().
  template <class F>
  void for_each_stateful(F&& f) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            using H = hook_t<I>;
            if constexpr (stateful<H>) f(state_key_of<H>(), get<I>());
          }(),
          ...);
    }(std::index_sequence_for<Hooks...>{});
  }

  /// Call f(key, hook) for every static hook with event counts (filters); runtime ones
  /// are in runtime().counted().
  template <class F>
  void for_each_counted(F&& f) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            using H = hook_t<I>;
            if constexpr (counted<H>) f(state_key_of<H>(), get<I>());
          }(),
          ...);
    }(std::index_sequence_for<Hooks...>{});
  }

  /// The resolved bindings: every point, its handlers in firing order.
  std::vector<binding_row> table() const {
    std::vector<binding_row> rows;
    [&]<class... P>(point_list<P...>) { (add_rows<P>(rows), ...); }(points_of<Runner>{});
    return rows;
  }

  /// The handlers that declare batch fields (fields.hpp), static and runtime, once per point
  /// each is bound to: what the checks made before training follow (core/runtime/field_flow.hpp).
  std::vector<bound_fields> field_uses() const {
    std::vector<bound_fields> out;
    (append_static_fields<Hooks>(out), ...);
    if constexpr (takes_runtime_hooks) runtime().append_bound_fields(out, points_of<Runner>::names);
    return out;
  }

  /// `table()` rendered for people, headed by the runner's name.
  std::string format_table() const {
    auto rows = table();
    return format_binding_table(runner_name<Runner>(), points_of<Runner>::names, rows);
  }

 private:
  // always_inline: firing must stay a sequence of direct calls even when the same
  // point is fired from several places (GCC's heuristics may otherwise outline it).
  template <std::size_t K, auto& Order, class P, class Ctx>
  [[gnu::always_inline]] inline void call(Ctx& ctx) {
    constexpr auto slot = Order[K];
    using H = hook_t<slot.hook>;
    using Invoker = typename detail::type_at_t<slot.binding, bindings_of<H>>::invoker;
    // The handler is told the point where it takes the tag. One that cannot run here
    // is reported by the attach checks; skipping the call keeps that report the only error.
    if constexpr (detail::handler_takes_point<Invoker, H, Ctx, P>)
      Invoker{}(get<slot.hook>(), ctx, P{});
    else if constexpr (detail::invocable_on<Invoker, H, Ctx>)
      Invoker{}(get<slot.hook>(), ctx);
  }

  template <auto& Order, class P, class Ctx, std::size_t... K>
  [[gnu::always_inline]] inline void fire_static(Ctx& ctx, std::index_sequence<K...>) {
    (call<K, Order, P>(ctx), ...);
  }

  // A runtime handler can run just before slot K only where order.hpp's rule lets
  // one fall between slots K-1 and K; the check is emitted there alone.
  template <auto& Order, std::size_t K>
  static constexpr bool dynamic_may_run_before() {
    if constexpr (K == 0)
      return true;
    else
      return detail::may_fall_between(Order[K - 1].key(), Order[K].key(), runtime_index);
  }

  template <auto& Order, class P, class Ctx, class Handlers, class Priorities, std::size_t... K>
  void fire_merged(Ctx& ctx, Handlers dynamic, Priorities priorities, std::index_sequence<K...>) {
    std::size_t r = 0;
    [[maybe_unused]] auto run_dynamic_before = [&](int priority, std::size_t hook) {
      for (; r < dynamic.size(); ++r) {
        if (!detail::runs_before({priorities[r], runtime_index}, {priority, hook})) break;
        dynamic[r].call(dynamic[r].object, &ctx);
      }
    };
    ((dynamic_may_run_before<Order, K>() ? run_dynamic_before(Order[K].priority, Order[K].hook)
                                         : void(),
      call<K, Order, P>(ctx)),
     ...);
    for (; r < dynamic.size(); ++r) dynamic[r].call(dynamic[r].object, &ctx);
  }

  // The rows come from a compile-time array and the merge is one compiled loop
  // (binding_table.hpp), so a table costs a call per point, not code per handler.
  template <class P>
  void add_rows(std::vector<binding_row>& rows) const {
    constexpr auto& fixed = detail::static_rows_v<points_of<Runner>, P, Hooks...>;
    if constexpr (takes_runtime_hooks)
      detail::append_rows(rows, P::name, fixed,
                          runtime().described_at(points_of<Runner>::template index_of<P>),
                          runtime_index);
    else
      detail::append_rows(rows, P::name, fixed, {}, runtime_index);
  }

  template <class H>
  static void append_static_fields(std::vector<bound_fields>& out) {
    if constexpr (!std::is_same_v<H, runtime_hooks>) append_bound_fields<H>(out, hook_name<H>());
  }

  template <class H>
  using fields_report = detail::fields_report<Runner, H, detail::type_list<Hooks...>>;

  slots hooks_;
};

}  // namespace hookforge
