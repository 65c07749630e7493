// benchmarks/dispatch_erased.cpp — fires the virtual and std::function hook lists.
//
// Compiled with -fno-devirtualize-speculatively (benchmarks/CMakeLists.txt) so
// that GCC emits a plain indirect call per hook instead of guessing the target;
// the lists are built in dispatch_lists.cpp, so no derived type is visible here.
#include "dispatch_cases.hpp"

namespace hookforge_bench {
namespace {

/// (c) One virtual call per hook.
class virtual_case final : public dispatch_bench {
 public:
  explicit virtual_case(int n) : hooks_(make_virtual_list(n)) {}
  long run(std::size_t iterations) override {
    return fire_loop(
        [this](bench_ctx& c) {
          for (const auto& h : hooks_) h->bump(c);
        },
        ctx_, iterations);
  }

 private:
  virtual_list hooks_;
};

/// (d) One std::function call per hook.
class function_case final : public dispatch_bench {
 public:
  explicit function_case(int n) : hooks_(make_function_list(n)) {}
  long run(std::size_t iterations) override {
    return fire_loop(
        [this](bench_ctx& c) {
          for (const auto& f : hooks_) f(c);
        },
        ctx_, iterations);
  }

 private:
  function_list hooks_;
};

}  // namespace

std::unique_ptr<dispatch_bench> make_erased_bench(std::string_view name, int n) {
  if (n < 0 || n > max_hooks) return nullptr;
  std::unique_ptr<dispatch_bench> bench;
  if (name == "virtual")
    bench = std::make_unique<virtual_case>(n);
  else if (name == "function")
    bench = std::make_unique<function_case>(n);
  escape(bench.get());
  return bench;
}

}  // namespace hookforge_bench
