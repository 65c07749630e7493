// hookforge/torch/losses/mse.hpp — mean squared error as a criterion.
//
//   MSE = mean over every element of the batch of (output - target)^2
//
//   hookforge::MSELoss criterion;                                   // "output" vs "target"
//   hookforge::MSELoss{.output_field = "sr", .target_field = "hr"}   // other fields
//
// (hookforge::MSE, in torch/metrics/mse.hpp, is the same value reported as a metric: never
// added to the loss, computed without gradient.) Fields and shapes as pixel_loss.hpp says.
#pragma once

#include <string>

#include <torch/types.h>

#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/losses/pixel_loss.hpp"

namespace hookforge {

struct MSELoss {
  std::string output_field = "output";
  std::string target_field = "target";

  /// The batch's mean squared error, a 0-dim tensor.
  torch::Tensor operator()(const Entry& entry) const {
    auto [x, y] = detail::loss_fields(entry, "MSELoss", output_field, target_field);
    return torch::mse_loss(x, y);
  }
};

}  // namespace hookforge
