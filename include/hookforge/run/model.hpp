// hookforge/run/model.hpp — the model kind: a torch module that takes the batch.
//
//   model:
//     _target: MLP                      # a registered model
//     params: {in_features: 1, hidden: [64, 64], out_features: 1}
//
// A model entry builds a `std::shared_ptr<hookforge::run::Model>`: the module (ptr(), for
// train/eval mode, parameters and checkpoints) and forward(batch) -> Entry, which the
// runners call. It is moved to the run's device (settings().device) when built, before
// any optimiser takes its parameters. Register a TORCH_MODULE whose Impl has
// `forward(const Entry&)` (returning a Tensor, the "output" field, or an Entry) with
// `module_model`:
//
//   HOOKFORGE_REGISTER_AS(model, "ESPCN", hookforge::run::module_model<hookforge::ESPCN>,
//                         hookforge::config::options<hookforge::espcn_options>(...));
#pragma once

#include <concepts>
#include <memory>
#include <type_traits>
#include <utility>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include "hookforge/config/register.hpp"
#include "hookforge/run/settings.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge::run {

/// What a model entry builds (see the top of this header).
class Model {
 public:
  virtual ~Model() = default;
  /// The model's output on `batch`, as fields to merge into it ("output", ...).
  virtual Entry forward(const Entry& batch) = 0;
  /// The module (hookforge::module_of finds it here).
  virtual std::shared_ptr<torch::nn::Module> ptr() const = 0;
  torch::nn::Module& module() const { return *ptr(); }
};

/// A module holder (TORCH_MODULE) as a Model, moved to settings().device.
template <class Holder>
class module_model final : public Model {
 public:
  /// Builds the module from `args` (its options), as Holder(args...) does.
  template <class... A>
    requires(sizeof...(A) > 0 && std::constructible_from<Holder, A...> &&
             !(sizeof...(A) == 1 && (std::is_same_v<std::remove_cvref_t<A>, module_model> && ...)))
  explicit module_model(A&&... args) : net_(std::forward<A>(args)...) {
    net_->to(settings().device);
  }

  Entry forward(const Entry& batch) override { return call_model(net_, batch); }
  std::shared_ptr<torch::nn::Module> ptr() const override { return net_.ptr(); }
  Holder& net() { return net_; }

 private:
  Holder net_;
};

}  // namespace hookforge::run

HOOKFORGE_DECLARE_KIND(model, hookforge::run::Model);
