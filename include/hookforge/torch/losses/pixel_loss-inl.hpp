// hookforge/torch/losses/pixel_loss-inl.hpp — detail::loss_fields: included by pixel_loss.hpp
// header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <torch/types.h>

#include "hookforge/torch/losses/pixel_loss.hpp"

namespace hookforge {

namespace detail {

HOOKFORGE_INLINE std::pair<torch::Tensor, torch::Tensor> loss_fields(
    const Entry& entry, std::string_view who, const std::string& output_field,
    const std::string& target_field) {
  const auto& x = entry.at(output_field);
  const auto& y = entry.at(target_field);
  if (x.sizes() != y.sizes())
    throw std::invalid_argument(std::string(who) + ": '" + output_field + "' and '" + target_field +
                                "' differ in shape (" + c10::str(x.sizes()) + " vs " +
                                c10::str(y.sizes()) + ")");
  return {x, y};
}

}  // namespace detail

}  // namespace hookforge
