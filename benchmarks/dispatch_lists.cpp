// benchmarks/dispatch_lists.cpp — builds the virtual and std::function hook lists.
//
// Kept apart from dispatch_erased.cpp, where the lists are fired, so that the
// compiler cannot see there which types the lists hold and devirtualize or
// inline the calls (that TU is also compiled with -fno-devirtualize-speculatively).
#include <utility>

#include "dispatch_cases.hpp"

namespace hookforge_bench {
namespace {

/// A hook behind a virtual method: the classic "list of Base*" design.
template <class H>
struct virtual_adapter final : virtual_hook {
  H hook;
  void bump(bench_ctx& ctx) override { hook.bump(ctx); }
};

template <class List, class Make, int... I>
void fill(List& list, int n, Make make, std::integer_sequence<int, I...>) {
  ((I < n ? list.push_back(make(Adder<I>{})) : void()), ...);
}

}  // namespace

virtual_list make_virtual_list(int n) {
  virtual_list list;
  fill(
      list, n,
      []<class H>(H) -> std::unique_ptr<virtual_hook> {
        return std::make_unique<virtual_adapter<H>>();
      },
      std::make_integer_sequence<int, max_hooks>{});
  return list;
}

function_list make_function_list(int n) {
  function_list list;
  fill(
      list, n,
      []<class H>(H h) -> std::function<void(bench_ctx&)> {
        return [h](bench_ctx& ctx) mutable { h.bump(ctx); };
      },
      std::make_integer_sequence<int, max_hooks>{});
  return list;
}

}  // namespace hookforge_bench
