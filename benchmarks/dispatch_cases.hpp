// benchmarks/dispatch_cases.hpp — the dispatch cases measured by docs/benchmarks.md ("Dispatch").
//
// One point (`on_post_step`) is fired in a loop with N hooks; every hook adds
// its `step` to a counter in the context. The cases:
//
//   static       hookforge static hooks: a hook_pack of Adder<0> ... Adder<N-1>
//   hand         the same N Adder objects, called by hand: N direct member calls
//   static_slot  the static pack plus a `runtime_hooks` slot with nothing attached
//   runtime      a `runtime_hooks` slot with N `any_hook<Ctx>(Adder<I>{})` attached
//   mixed        static_slot with one runtime hook attached (Adder<N>): N static hooks
//                plus one runtime hook, merged by priority at every fire
//   virtual      std::vector<std::unique_ptr<virtual_hook>>, one virtual call per hook
//   function     std::vector<std::function<void(Ctx&)>>
//
// Each case is an object whose `run(iterations)` calls `fire_loop`, a
// non-inlined function template: the same loop (fire, then make the context
// escape and clobber memory) for every case. The Google Benchmark binary
// (dispatch.cpp) times `run`; callgrind_dispatch.sh counts the instructions
// spent inside `fire_loop` (valgrind --toggle-collect='*fire_loop*').
//
// Why `step` is a data member and not the constant I: with a constant, GCC
// folds the N inlined additions of the static and hand-written cases into one
// `add` of their sum, and the measurement shows nothing but the loop. With a
// member that the compiler cannot see (the case objects are built in another
// function and reached through a virtual `run`), and memory clobbered after
// every fire, each fire loads every hook's step and the counter and stores the
// counter, for every case alike.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "hookforge/hookforge.hpp"

namespace hookforge_bench {

struct bench_ctx {
  long counter = 0;
};

/// The point every case fires.
using fired_point = hookforge::points::on_post_step;

/// Make `p` escape and clobber memory: the compiler must assume unknown code
/// read and modified whatever `p` points to (Google Benchmark's
/// DoNotOptimize + ClobberMemory, without depending on it).
inline void escape(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

/// The hook of every case: adds `step` (I + 1) to the context's counter at `on_post_step`.
template <int I>
struct Adder {
  long step = I + 1;
  void bump(bench_ctx& ctx) { ctx.counter += step; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(bump, hookforge::points::on_post_step));
};

/// The runner: two points, like a validation epoch runner. `Tag` only makes distinct
/// runner (and so hook_pack) types with the same hooks.
template <class Tag, class... Hooks>
struct tagged_runner {
  using hook_points = hookforge::point_list<hookforge::points::on_epoch_start, fired_point>;
  using Ctx = bench_ctx;
  hookforge::hook_pack<tagged_runner, Hooks...> hooks;
  tagged_runner() : hooks(Hooks{}...) {}
};
template <class... Hooks>
using bench_runner = tagged_runner<void, Hooks...>;

/// The loop every case runs: fire, then let the context escape. Not inlined, so
/// that callgrind can count exactly the instructions spent in it.
template <class Fire>
[[gnu::noinline]] long fire_loop(Fire fire, bench_ctx& ctx, std::size_t iterations) {
  for (std::size_t i = 0; i < iterations; ++i) {
    fire(ctx);
    escape(&ctx);
  }
  return ctx.counter;
}

/// One case with its N hooks, ready to fire.
class dispatch_bench {
 public:
  virtual ~dispatch_bench() = default;
  /// Fire the point `iterations` times; returns the counter afterwards.
  virtual long run(std::size_t iterations) = 0;
  long counter() const { return ctx_.counter; }

 protected:
  bench_ctx ctx_;
};

/// The case names, in the order the tables list them.
inline constexpr std::array<std::string_view, 7> case_names{
    "static", "hand", "static_slot", "runtime", "virtual", "function", "mixed"};
/// The hook counts measured. The static cases are instantiated for these only.
inline constexpr std::array<int, 4> hook_counts{0, 1, 8, 32};
inline constexpr int max_hooks = 32;

/// What one fire adds to the counter with n hooks: 1 + 2 + ... + n.
constexpr long added_per_fire(int n) { return static_cast<long>(n) * (n + 1) / 2; }
/// What one fire of case `name` with `n` hooks adds ("mixed" has one hook more).
constexpr long added_per_fire(std::string_view name, int n) {
  return added_per_fire(name == "mixed" ? n + 1 : n);
}

/// The case `name` with `n` hooks; null when `name` is unknown or `n` unsupported (the
/// hookforge and hand-written cases take the `hook_counts`, virtual/function 0 ... max_hooks).
std::unique_ptr<dispatch_bench> make_dispatch_bench(std::string_view name, int n);

// --- the type-erased lists (built in dispatch_lists.cpp, fired in dispatch_erased.cpp) --------

struct virtual_hook {
  virtual ~virtual_hook() = default;
  virtual void bump(bench_ctx& ctx) = 0;
};
using virtual_list = std::vector<std::unique_ptr<virtual_hook>>;
using function_list = std::vector<std::function<void(bench_ctx&)>>;

/// Adder<0> ... Adder<n-1>, each behind a virtual_hook (n <= max_hooks).
virtual_list make_virtual_list(int n);
/// Adder<0> ... Adder<n-1>, each in a std::function (n <= max_hooks).
function_list make_function_list(int n);

/// The "virtual" and "function" cases (dispatch_erased.cpp).
std::unique_ptr<dispatch_bench> make_erased_bench(std::string_view name, int n);

}  // namespace hookforge_bench
