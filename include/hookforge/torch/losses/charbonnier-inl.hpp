// hookforge/torch/losses/charbonnier-inl.hpp — CharbonnierLoss's bodies: included by
// charbonnier.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <torch/types.h>

#include "hookforge/torch/losses/pixel_loss.hpp"

#include "hookforge/torch/losses/charbonnier.hpp"

namespace hookforge {

HOOKFORGE_INLINE void CharbonnierLoss::validate() const {
  if (!(eps > 0) || !std::isfinite(eps))
    throw std::invalid_argument(fmt::format("CharbonnierLoss: eps must be > 0, got {}", eps));
}

HOOKFORGE_INLINE torch::Tensor CharbonnierLoss::operator()(const Entry& entry) const {
  validate();
  auto [x, y] = detail::loss_fields(entry, "CharbonnierLoss", output_field, target_field);
  return (x - y).square().add(eps * eps).sqrt().mean();
}

}  // namespace hookforge
