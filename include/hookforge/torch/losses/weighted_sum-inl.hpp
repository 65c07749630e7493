// hookforge/torch/losses/weighted_sum-inl.hpp — WeightedSum's checks and sum: included by
// weighted_sum.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <stdexcept>

#include <fmt/format.h>
#include <torch/types.h>

#include "hookforge/torch/losses/weighted_sum.hpp"

namespace hookforge {

HOOKFORGE_INLINE void WeightedSum::validate() const {
  if (terms.empty()) throw std::invalid_argument("WeightedSum: needs at least one term");
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const auto& t = terms[i];
    if (t.name.empty())
      throw std::invalid_argument(fmt::format("WeightedSum: term {} has an empty name", i));
    if (t.name == "loss")
      throw std::invalid_argument(
          "WeightedSum: a term must not be named 'loss' (the runners' name for the total)");
    for (std::size_t j = 0; j < i; ++j)
      if (terms[j].name == t.name)
        throw std::invalid_argument(
            fmt::format("WeightedSum: term name '{}' is given twice", t.name));
    if (!std::isfinite(t.weight))
      throw std::invalid_argument(
          fmt::format("WeightedSum: term '{}' has weight {}; it must be finite", t.name, t.weight));
    if (!t.loss)
      throw std::invalid_argument(fmt::format("WeightedSum: term '{}' has no loss", t.name));
  }
}

HOOKFORGE_INLINE loss_terms WeightedSum::operator()(const Entry& entry) const {
  validate();
  loss_terms out;
  for (const auto& t : terms) {
    auto value = t.loss(entry);
    out.emplace(t.name, t.weight == 1.0 ? value : value * t.weight);
  }
  return out;
}

}  // namespace hookforge
