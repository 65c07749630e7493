// hookforge/torch/data/criterion-inl.hpp — total_loss's and add_extra_losses's definitions:
// included by criterion.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "hookforge/torch/data/criterion.hpp"

namespace hookforge {

HOOKFORGE_INLINE torch::Tensor total_loss(const loss_terms& terms) {
  torch::Tensor total;
  for (const auto& [name, value] : terms) total = total.defined() ? total + value : value;
  return total;
}

namespace detail {

HOOKFORGE_INLINE void add_extra_losses(loss_terms& terms, const loss_terms& extra,
                                       std::string_view who) {
  for (const auto& [name, value] : extra) {
    if (!terms.emplace(name, value).second)
      throw std::invalid_argument(std::string(who) + "extra loss '" + name +
                                  "' has the name of a criterion term");
  }
}

}  // namespace detail

}  // namespace hookforge
