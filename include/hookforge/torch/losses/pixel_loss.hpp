// hookforge/torch/losses/pixel_loss.hpp — what the built-in pixel losses share: the two
// fields they compare, checked to exist and to have one shape.
//
// A loss is a criterion (torch/data/criterion.hpp): called on the batch with the model's
// output merged in, it returns a 0-dim tensor (reported as the score "loss") or named terms
// (WeightedSum, weighted_sum.hpp). The built-in pixel losses — L1Loss (l1.hpp), MSELoss
// (mse.hpp), CharbonnierLoss (charbonnier.hpp) — compare `output_field` with `target_field`
// element by element and average over every element of the batch, in the tensors' dtype
// (under autocast, as the operations' autocast policy says). Unlike torch's losses they do
// not broadcast: fields of different shapes are an error.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge::detail {

/// (entry.at(output_field), entry.at(target_field)); std::invalid_argument when their shapes
/// differ, std::out_of_range (Entry::at's) when one is missing.
HOOKFORGE_INLINE std::pair<torch::Tensor, torch::Tensor> loss_fields(
    const Entry& entry, std::string_view who, const std::string& output_field,
    const std::string& target_field);

}  // namespace hookforge::detail

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/losses/pixel_loss-inl.hpp"
#endif
