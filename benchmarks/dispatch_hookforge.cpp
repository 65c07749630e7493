// benchmarks/dispatch_hookforge.cpp — the hookforge cases (static, static_slot, runtime,
// mixed) and the hand-written baseline they are compared with. See dispatch_cases.hpp.
#include <tuple>
#include <utility>

#include "dispatch_cases.hpp"

namespace hookforge_bench {
namespace {

template <template <class...> class Runner, class Seq, class... Extra>
struct adder_runner;
template <template <class...> class Runner, int... I, class... Extra>
struct adder_runner<Runner, std::integer_sequence<int, I...>, Extra...> {
  using type = Runner<Adder<I>..., Extra...>;
};
/// Runner<Adder<0>, ..., Adder<N-1>, Extra...>
template <template <class...> class Runner, int N, class... Extra>
using adder_runner_t =
    typename adder_runner<Runner, std::make_integer_sequence<int, N>, Extra...>::type;

/// The runner of the "mixed" case: another type than static_slot's, so that each case's
/// `fire` is instantiated for, and inlined into, its own fire loop only. GCC -O2 stops
/// inlining a pack-with-runtime-slot `fire` once it has two call sites; define
/// HOOKFORGE_BENCH_MIXED_SHARES_RUNNER to see it (static_slot then pays a call per fire).
#ifdef HOOKFORGE_BENCH_MIXED_SHARES_RUNNER
template <class... Hooks>
using mixed_runner = bench_runner<Hooks...>;
#else
struct mixed_tag;
template <class... Hooks>
using mixed_runner = tagged_runner<mixed_tag, Hooks...>;
#endif

/// (a) hookforge static hooks; (f) with `runtime_hooks` listed last (nothing attached).
template <int N, class... Extra>
class static_case final : public dispatch_bench {
 public:
  long run(std::size_t iterations) override {
    return fire_loop([this](bench_ctx& c) { runner_.hooks.template fire<fired_point>(c); }, ctx_,
                     iterations);
  }

 private:
  adder_runner_t<bench_runner, N, Extra...> runner_;
};

/// (b) The same hooks, in the same std::tuple layout as hook_pack keeps them,
/// called by hand: `std::get<0>(hooks).bump(ctx); ...; std::get<N-1>(hooks).bump(ctx);`.
template <class Seq>
class hand_case;
template <int... I>
class hand_case<std::integer_sequence<int, I...>> final : public dispatch_bench {
 public:
  long run(std::size_t iterations) override {
    return fire_loop([this](bench_ctx& c) { (std::get<I>(hooks_).bump(c), ...); }, ctx_,
                     iterations);
  }

 private:
  std::tuple<Adder<I>...> hooks_;
};

/// (e) hookforge runtime hooks: a `runtime_hooks` slot and N attached `any_hook<Ctx>`s.
template <int N>
class runtime_case final : public dispatch_bench {
 public:
  runtime_case() {
    [this]<int... I>(std::integer_sequence<int, I...>) {
      (runner_.hooks.attach(hookforge::any_hook<bench_ctx>(Adder<I>{})), ...);
    }(std::make_integer_sequence<int, N>{});
  }
  long run(std::size_t iterations) override {
    return fire_loop([this](bench_ctx& c) { runner_.hooks.template fire<fired_point>(c); }, ctx_,
                     iterations);
  }

 private:
  bench_runner<hookforge::runtime_hooks> runner_;
};

/// N static hooks and one runtime hook (Adder<N>, same priority, runs last): every fire
/// takes hook_pack's merge path (fire_merged).
template <int N>
class mixed_case final : public dispatch_bench {
 public:
  mixed_case() { runner_.hooks.attach(hookforge::any_hook<bench_ctx>(Adder<N>{})); }
  long run(std::size_t iterations) override {
    return fire_loop([this](bench_ctx& c) { runner_.hooks.template fire<fired_point>(c); }, ctx_,
                     iterations);
  }

 private:
  adder_runner_t<mixed_runner, N, hookforge::runtime_hooks> runner_;
};

template <int N>
std::unique_ptr<dispatch_bench> make_for(std::string_view name) {
  std::unique_ptr<dispatch_bench> bench;
  if (name == "static")
    bench = std::make_unique<static_case<N>>();
  else if (name == "static_slot")
    bench = std::make_unique<static_case<N, hookforge::runtime_hooks>>();
  else if (name == "hand")
    bench = std::make_unique<hand_case<std::make_integer_sequence<int, N>>>();
  else if (name == "runtime")
    bench = std::make_unique<runtime_case<N>>();
  else if (name == "mixed")
    bench = std::make_unique<mixed_case<N>>();
  escape(bench.get());  // nothing about the hooks' state is known where they fire
  return bench;
}

}  // namespace

std::unique_ptr<dispatch_bench> make_dispatch_bench(std::string_view name, int n) {
  if (name == "virtual" || name == "function") return make_erased_bench(name, n);
  switch (n) {
    case 0:
      return make_for<0>(name);
    case 1:
      return make_for<1>(name);
    case 8:
      return make_for<8>(name);
    case 32:
      return make_for<32>(name);
    default:
      return nullptr;
  }
}

}  // namespace hookforge_bench
