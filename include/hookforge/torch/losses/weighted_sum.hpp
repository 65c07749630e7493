// hookforge/torch/losses/weighted_sum.hpp — several losses in one criterion, each weighted
// and each reported under its own name.
//
//   hookforge::WeightedSum criterion{{
//       {.name = "l1", .weight = 1.0, .loss = hookforge::L1Loss{}},
//       {.name = "mse", .weight = 0.5, .loss = hookforge::MSELoss{}},
//   }};
//   criterion(batch);   // loss_terms{{"l1", 1.0 * L1}, {"mse", 0.5 * MSE}}
//
// It returns `loss_terms` (torch/data/criterion.hpp), one term per entry holding the
// WEIGHTED value, so the runner's loss — the sum of the terms — is sum(weight_i * loss_i)
// and each term appears in the batch and epoch scores under its name (as weighted), beside
// "loss", the total. A term's `loss` is any callable Entry -> Tensor returning a 0-dim
// tensor: a built-in loss, a lambda, another criterion wrapped in one. The weights are
// fixed: a criterion that changes them per epoch has `set_epoch` (criterion.hpp).
//
// The terms are checked at each call (std::invalid_argument naming the term): at least one;
// names non-empty, distinct and not "loss" (the runners' name for the total); weights
// finite; every `loss` set.
#pragma once

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <torch/types.h>

#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

struct weighted_term {
  std::string name;    ///< the term's score name
  double weight = 1.0; ///< finite; the term is weight * loss(batch)
  std::function<torch::Tensor(const Entry&)> loss;
};

struct WeightedSum {
  std::vector<weighted_term> terms;

  /// std::invalid_argument for no terms, an empty, repeated or reserved name, a weight
  /// that is not finite, or a term without a loss.
  void validate() const {
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

  /// {name: weight * loss(entry)} for each term.
  loss_terms operator()(const Entry& entry) const {
    validate();
    loss_terms out;
    for (const auto& t : terms) {
      auto value = t.loss(entry);
      out.emplace(t.name, t.weight == 1.0 ? value : value * t.weight);
    }
    return out;
  }
};

}  // namespace hookforge
