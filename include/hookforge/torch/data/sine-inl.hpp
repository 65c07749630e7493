// hookforge/torch/data/sine-inl.hpp — SineRegression's checks and samples: included by
// sine.hpp header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <torch/types.h>

#include "hookforge/torch/data/sine.hpp"

namespace hookforge {

HOOKFORGE_INLINE SineRegression::SineRegression(sine_regression_options o) : options_(o) {
  if (options_.count < 1) throw std::invalid_argument("Sine: count must be >= 1");
  if (!(options_.low < options_.high)) throw std::invalid_argument("Sine: low must be < high");
  if (!(options_.noise >= 0)) throw std::invalid_argument("Sine: noise must be >= 0");
}

HOOKFORGE_INLINE Entry SineRegression::get(std::size_t i) const {
  if (i >= size())
    throw std::out_of_range("Sine::get: index " + std::to_string(i) + " out of range for " +
                            std::to_string(size()) + " samples");
  std::uint64_t state = options_.seed * 0x9E3779B97F4A7C15ull + i;
  const double u0 = uniform(state), u1 = uniform(state), u2 = uniform(state);
  const double x = options_.low + (options_.high - options_.low) * u0;
  // Box-Muller: one Gaussian from two uniforms in (0, 1].
  const double gauss = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(6.283185307179586 * u2);
  const double y = std::sin(3 * x) + x / 2 + options_.noise * gauss;
  return Entry{{"input", torch::full({1}, x, torch::kFloat)},
               {"target", torch::full({1}, y, torch::kFloat)}};
}

HOOKFORGE_INLINE double SineRegression::uniform(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

}  // namespace hookforge
