// hookforge/torch/losses/adversarial.hpp — the standard (non-saturating) GAN losses, on the
// scores GANTrainingRunner puts in the batch (docs/gan.md):
//
//   GANDiscriminatorLoss   D's criterion: BCE-with-logits of "d_real" against 1 and
//                          "d_fake" against 0, as two terms "real" and "fake"
//   GANGeneratorLoss       G's adversarial term: BCE-with-logits of "d_fake_for_g"
//                          against 1, times `weight` (add a content loss beside it with a
//                          weighted sum)
//
// Both are criteria (torch/data/criterion.hpp); the fields are options.
#pragma once

#include <string>
#include <utility>

#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

struct gan_discriminator_loss_options {
  std::string real_field = "d_real";
  std::string fake_field = "d_fake";
};

struct GANDiscriminatorLoss {
  gan_discriminator_loss_options options;
  explicit GANDiscriminatorLoss(gan_discriminator_loss_options o = {}) : options(std::move(o)) {}
  loss_terms operator()(const Entry& e) const;
};

struct gan_generator_loss_options {
  std::string fake_field = "d_fake_for_g";
  double weight = 1.0;  ///< >= 0
};

struct GANGeneratorLoss {
  gan_generator_loss_options options;
  explicit GANGeneratorLoss(gan_generator_loss_options o = {});
  torch::Tensor operator()(const Entry& e) const;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/losses/adversarial-inl.hpp"
#endif
