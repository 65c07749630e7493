// hookforge/torch/data/criterion.hpp — what a loss function may be, and how its value is read.
//
// A criterion is called on the batch (with the model's output merged in) and
// returns either one tensor or named terms, whose sum is the loss:
//   [](const Entry& e) { return torch::mse_loss(e.at("output"), e.at("target")); }
//   [](const Entry& e) { return loss_terms{{"l1", ...}, {"perceptual", ...}}; }
// A criterion whose weights change during training has `set_epoch(int64_t)`,
// which the trainer calls before each epoch (the loss-schedule update).
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

using loss_terms = std::map<std::string, torch::Tensor>;

template <class C>
concept criterion = std::invocable<C&, const Entry&> &&
                    (std::convertible_to<std::invoke_result_t<C&, const Entry&>, torch::Tensor> ||
                     std::convertible_to<std::invoke_result_t<C&, const Entry&>, loss_terms>);

/// A criterion with an epoch-dependent schedule.
template <class C>
concept scheduled_criterion = requires(C& c, std::int64_t epoch) { c.set_epoch(epoch); };

/// Evaluate `c` on `entry` as named terms ("loss" when it returns one tensor).
template <criterion C>
loss_terms evaluate_criterion(C& c, const Entry& entry) {
  using R = std::invoke_result_t<C&, const Entry&>;
  if constexpr (std::convertible_to<R, torch::Tensor>)
    return {{"loss", std::invoke(c, entry)}};
  else
    return std::invoke(c, entry);
}

/// The sum of the terms.
HOOKFORGE_INLINE torch::Tensor total_loss(const loss_terms& terms);

namespace detail {
/// A runner's extra losses (added by hooks) joined to the criterion's `terms`. A name the
/// criterion already has is std::invalid_argument: "<who>extra loss '<name>' has the name
/// of a criterion term" (`who`: "TrainingEpochRunner: ", "GANTrainingRunner: D ", …).
HOOKFORGE_INLINE void add_extra_losses(loss_terms& terms, const loss_terms& extra,
                                       std::string_view who);
}  // namespace detail

/// Call `set_epoch` when the criterion has one.
template <class C>
void update_criterion_schedule(C& c, std::int64_t epoch) {
  if constexpr (scheduled_criterion<C>) c.set_epoch(epoch);
}

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/data/criterion-inl.hpp"
#endif
