// hookforge/torch/data/sine.hpp — a toy regression dataset: y = sin(3x) + x/2 + noise.
//
//   hookforge::SineRegression data({.count = 512, .seed = 1});
//   hookforge::Entry s = data.get(7);   // {"input": [1], "target": [1]}, float32
//
// Sample i is a function of (seed, i) only — x uniform in [low, high), the noise Gaussian
// with standard deviation `noise` — so two datasets with one seed agree, get() is
// thread-safe, and nothing is stored. For tests, toy runs and configs (registered as "Sine").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

struct sine_regression_options {
  std::int64_t count = 512;  ///< samples (>= 1)
  double low = -2.0;         ///< x in [low, high)
  double high = 2.0;
  double noise = 0.05;  ///< standard deviation of the noise added to y (>= 0)
  std::uint64_t seed = 0;
};

class SineRegression {
 public:
  explicit SineRegression(sine_regression_options o = {});

  std::size_t size() const { return static_cast<std::size_t>(options_.count); }

  Entry get(std::size_t i) const;
  /// The fields of every sample, for the checks made before training.
  static std::vector<std::string> field_names() { return {"input", "target"}; }

  const sine_regression_options& options() const { return options_; }

 private:
  /// splitmix64's next value, as a double in [0, 1).
  static double uniform(std::uint64_t& state);

  sine_regression_options options_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/data/sine-inl.hpp"
#endif
