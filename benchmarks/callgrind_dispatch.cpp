// benchmarks/callgrind_dispatch.cpp — driver for callgrind_dispatch.sh.
//
//   hookforge_callgrind_dispatch <case> <N> <iterations>
//
// Builds the case (dispatch_cases.hpp), fires its point `iterations` times in
// `fire_loop`, checks the counter and prints it. Run under
//   valgrind --tool=callgrind --toggle-collect='*fire_loop*' ...
// the instructions counted are exactly those of the fire loop; the set-up is not counted.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "dispatch_cases.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <case> <N> <iterations>\n  cases:", argv[0]);
    for (auto name : hookforge_bench::case_names)
      std::fprintf(stderr, " %.*s", static_cast<int>(name.size()), name.data());
    std::fprintf(stderr, "\n  N: 0 1 8 32\n");
    return 2;
  }
  const std::string_view name = argv[1];
  const int n = std::atoi(argv[2]);
  const long iterations = std::atol(argv[3]);
  auto bench = hookforge_bench::make_dispatch_bench(name, n);
  if (!bench || iterations <= 0) {
    std::fprintf(stderr, "unknown case '%s' or unsupported N %d / iterations %ld\n", argv[1], n,
                 iterations);
    return 2;
  }
  const long counter = bench->run(static_cast<std::size_t>(iterations));
  const long expected = hookforge_bench::added_per_fire(name, n) * iterations;
  std::printf("%s N=%d iterations=%ld counter=%ld\n", argv[1], n, iterations, counter);
  if (counter != expected) {
    std::fprintf(stderr, "counter %ld, expected %ld\n", counter, expected);
    return 1;
  }
  return 0;
}
