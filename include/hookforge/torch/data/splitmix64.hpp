// hookforge/torch/data/splitmix64.hpp — random numbers that are a function of a seed alone,
// the same on every platform, for samplers and datasets that draw per (seed, epoch, index).
//
//   hookforge::detail::splitmix64 rng(hookforge::detail::mix64(seed) ^ index);
//   double u = rng.uniform();   // [0, 1)
//   int k = rng.below(4);       // 0, 1, 2 or 3
//
// Uniform doubles come from the top 53 bits, not from std:: distributions, whose output
// differs between standard libraries.
#pragma once

#include <cstdint>

namespace hookforge::detail {

/// SplitMix64's finaliser: a bijective mix, so distinct inputs give distinct seeds.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// splitmix64 (Steele, Lea, Flood 2014): the state steps by the golden gamma and each
/// output is its finaliser, mix64.
class splitmix64 {
 public:
  explicit constexpr splitmix64(std::uint64_t state) noexcept : state_(state) {}
  constexpr std::uint64_t next() noexcept {
    const std::uint64_t out = mix64(state_);
    state_ += 0x9E3779B97F4A7C15ULL;
    return out;
  }
  constexpr double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  constexpr double uniform(double lo, double hi) noexcept { return lo + (hi - lo) * uniform(); }
  /// In [0, n), for n >= 1.
  constexpr int below(int n) noexcept { return static_cast<int>(uniform() * n); }

 private:
  std::uint64_t state_;
};

}  // namespace hookforge::detail
