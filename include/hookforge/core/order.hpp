// hookforge/core/order.hpp — the order in which the handlers of one point run. Written once.
//
// The rule: a lower priority runs first; equal priorities run in attach order.
//
// "Attach order" is a handler's position: the index of its hook in the runner's
// hook list (a hook's own bindings keep their declared order). Handlers attached
// at run time (`any_hook`s) all sit at the position of the runner's
// `runtime_hooks` slot, and among themselves keep the order they were attached in.
//
// Every place that orders handlers uses `runs_before`: the compile-time order of
// static hooks (hook_pack.hpp, dispatch_order), the insertion of a runtime
// handler (runtime_hooks::attach), and the merge of both lists when firing and
// when printing a binding table (hook_pack::fire_merged, hook_pack::add_rows).
#pragma once

#include <cstddef>

namespace hookforge::detail {

/// What the rule reads from a handler: its priority and its position.
struct order_key {
  int priority;
  std::size_t position;
};

/// The rule: does the handler with key `a` run before the one with key `b`?
constexpr bool runs_before(order_key a, order_key b) {
  return a.priority != b.priority ? a.priority < b.priority : a.position < b.position;
}

/// Where a handler with key `k` joins `n` handlers already in order, whose keys
/// `key_at(i)` gives: after every handler it does not run before, so among equal
/// keys the one attached last runs last.
template <class KeyAt>
constexpr std::size_t insertion_index(std::size_t n, order_key k, KeyAt key_at) {
  while (n > 0 && runs_before(k, key_at(n - 1))) --n;
  return n;
}

/// Can a runtime handler (position `runtime_position`, any priority) run after
/// static handler `a` and before `b`, its successor? Firing checks the runtime
/// list only there, so static handlers elsewhere stay back-to-back direct calls.
constexpr bool may_fall_between(order_key a, order_key b, std::size_t runtime_position) {
  return a.priority != b.priority || runs_before({a.priority, runtime_position}, a) !=
                                         runs_before({b.priority, runtime_position}, b);
}

}  // namespace hookforge::detail
