// hookforge/torch/losses/adversarial-inl.hpp — the adversarial losses' bodies: included by
// adversarial.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <stdexcept>
#include <utility>

#include <fmt/core.h>
#include <torch/nn/functional/loss.h>
#include <torch/types.h>

#include "hookforge/torch/losses/adversarial.hpp"

namespace hookforge {

HOOKFORGE_INLINE loss_terms GANDiscriminatorLoss::operator()(const Entry& e) const {
  const auto& real = e.at(options.real_field);
  const auto& fake = e.at(options.fake_field);
  return {{"real", torch::binary_cross_entropy_with_logits(real, torch::ones_like(real))},
          {"fake", torch::binary_cross_entropy_with_logits(fake, torch::zeros_like(fake))}};
}

HOOKFORGE_INLINE GANGeneratorLoss::GANGeneratorLoss(gan_generator_loss_options o)
    : options(std::move(o)) {
  if (!(options.weight >= 0))
    throw std::invalid_argument(
        fmt::format("GANGeneratorLoss: weight must be >= 0, got {}", options.weight));
}

HOOKFORGE_INLINE torch::Tensor GANGeneratorLoss::operator()(const Entry& e) const {
  const auto& fake = e.at(options.fake_field);
  return torch::binary_cross_entropy_with_logits(fake, torch::ones_like(fake)) * options.weight;
}

}  // namespace hookforge
