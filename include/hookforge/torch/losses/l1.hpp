// hookforge/torch/losses/l1.hpp — mean absolute error as a criterion.
//
//   L1 = mean over every element of the batch of |output - target|
//
//   hookforge::L1Loss criterion;                                   // "output" vs "target"
//   trainer.fit(train_data, val_data, criterion);
//   hookforge::L1Loss{.output_field = "sr", .target_field = "hr"}   // other fields
//
// Fields and shapes as pixel_loss.hpp says.
#pragma once

#include <string>

#include <torch/types.h>

#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/losses/pixel_loss.hpp"

namespace hookforge {

struct L1Loss {
  std::string output_field = "output";
  std::string target_field = "target";

  /// The batch's mean absolute error, a 0-dim tensor.
  torch::Tensor operator()(const Entry& entry) const {
    auto [x, y] = detail::loss_fields(entry, "L1Loss", output_field, target_field);
    return torch::l1_loss(x, y);
  }
};

}  // namespace hookforge
