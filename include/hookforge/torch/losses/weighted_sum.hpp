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

#include <functional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

struct weighted_term {
  std::string name;     ///< the term's score name
  double weight = 1.0;  ///< finite; the term is weight * loss(batch)
  std::function<torch::Tensor(const Entry&)> loss;
};

struct WeightedSum {
  std::vector<weighted_term> terms;

  /// std::invalid_argument for no terms, an empty, repeated or reserved name, a weight
  /// that is not finite, or a term without a loss.
  void validate() const;

  /// {name: weight * loss(entry)} for each term.
  loss_terms operator()(const Entry& entry) const;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/losses/weighted_sum-inl.hpp"
#endif
