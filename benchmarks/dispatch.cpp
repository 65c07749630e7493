// benchmarks/dispatch.cpp — ns per fire of one point with N hooks.
// See docs/benchmarks.md, "Dispatch".
//
//   hookforge_bench_dispatch --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Benchmarks are named BM_dispatch/<case>/<N>; one iteration is one fire. The
// cases are described in dispatch_cases.hpp. Each benchmark calls the case's
// `run` once with all its iterations (KeepRunningBatch), so the only code timed
// per iteration is the fire loop itself.
#include <string>

#include <benchmark/benchmark.h>

#include "dispatch_cases.hpp"

namespace {

using hookforge_bench::dispatch_bench;

void bm_dispatch(benchmark::State& state, std::string_view name, int n) {
  auto bench = hookforge_bench::make_dispatch_bench(name, n);
  if (!bench) {
    state.SkipWithError("unknown case");
    return;
  }
  bench->run(1000);  // warm up: caches, branch predictors, lazy binding
  const long before = bench->counter();
  const auto iterations = static_cast<std::size_t>(state.max_iterations);
  while (state.KeepRunningBatch(state.max_iterations)) bench->run(iterations);
  const long after = bench->counter();
  benchmark::DoNotOptimize(after);
  const long expected =
      hookforge_bench::added_per_fire(name, n) * static_cast<long>(state.iterations());
  if (after - before != expected)
    state.SkipWithError("the counter does not match: a hook did not run exactly once per fire");
  state.counters["hooks"] = n;
}

}  // namespace

int main(int argc, char** argv) {
  for (auto name : hookforge_bench::case_names)
    for (int n : hookforge_bench::hook_counts)
      benchmark::RegisterBenchmark(
          ("BM_dispatch/" + std::string(name) + "/" + std::to_string(n)).c_str(), bm_dispatch, name,
          n);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
