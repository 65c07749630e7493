// hookforge/run/loss.hpp — the loss kind: a criterion built from a config.
//
//   loss:
//     _target: L1                       # L1, MSE, GANDiscriminatorLoss, GANGeneratorLoss, ...
//     params: {output_field: output, target_field: target}
//
// A loss entry builds a `std::shared_ptr<hookforge::run::Loss>`: called on the batch (the
// model's output merged in), it returns named terms whose sum is the loss ("loss" when
// there is one), and set_epoch reaches criteria with a schedule. Any criterion
// (torch/data/criterion.hpp) registers through `criterion_loss`:
//
//   HOOKFORGE_REGISTER_AS(loss, "Charbonnier", hookforge::run::criterion_loss<hookforge::Charbonnier>,
//                         hookforge::config::options<hookforge::charbonnier_options>(...));
//
// `loss_fn` is what the runners are given: a copyable criterion sharing one Loss.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <torch/nn/functional/loss.h>
#include <torch/types.h>

#include "hookforge/config/register.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge::run {

/// What a loss entry builds (see the top of this header).
class Loss {
 public:
  virtual ~Loss() = default;
  /// The named terms of the loss on `batch`; their sum is the loss.
  virtual loss_terms operator()(const Entry& batch) = 0;
  /// Called by the Trainer before each epoch (criteria whose weights follow a schedule).
  virtual void set_epoch(std::int64_t epoch) { (void)epoch; }
};

/// A criterion (callable on a const Entry&, returning a Tensor or loss_terms) as a Loss.
template <class C>
class criterion_loss final : public Loss {
 public:
  template <class... A>
    requires(std::constructible_from<C, A...> &&
             !(sizeof...(A) == 1 && (std::is_same_v<std::remove_cvref_t<A>, criterion_loss> && ...)))
  explicit criterion_loss(A&&... args) : criterion_(std::forward<A>(args)...) {
    static_assert(hookforge::criterion<C>,
                  "hookforge::run::criterion_loss: C must be callable on a const Entry& and return a Tensor "
                  "or loss_terms");
  }
  loss_terms operator()(const Entry& batch) override { return evaluate_criterion(criterion_, batch); }
  void set_epoch(std::int64_t epoch) override { update_criterion_schedule(criterion_, epoch); }
  C& criterion() { return criterion_; }

 private:
  C criterion_;
};

/// The criterion the runners get: shares one Loss (copies call the same object).
struct loss_fn {
  std::shared_ptr<Loss> loss;
  loss_terms operator()(const Entry& batch) const { return (*loss)(batch); }
  void set_epoch(std::int64_t epoch) const { loss->set_epoch(epoch); }
};

/// Fields two-input losses compare.
struct pair_loss_options {
  std::string output_field = "output";
  std::string target_field = "target";
};

/// Mean absolute error between two fields of the batch (torch::nn::functional::l1_loss).
struct L1Loss {
  pair_loss_options options;
  explicit L1Loss(pair_loss_options o = {}) : options(std::move(o)) {}
  torch::Tensor operator()(const Entry& e) const {
    return torch::nn::functional::l1_loss(e.at(options.output_field), e.at(options.target_field));
  }
};

/// Mean squared error between two fields of the batch (torch::nn::functional::mse_loss).
struct MSELoss {
  pair_loss_options options;
  explicit MSELoss(pair_loss_options o = {}) : options(std::move(o)) {}
  torch::Tensor operator()(const Entry& e) const {
    return torch::nn::functional::mse_loss(e.at(options.output_field), e.at(options.target_field));
  }
};

}  // namespace hookforge::run

HOOKFORGE_DECLARE_KIND(loss, hookforge::run::Loss);
