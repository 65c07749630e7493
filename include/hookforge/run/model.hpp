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
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include "hookforge/config/register.hpp"
#include "hookforge/core/runtime/join.hpp"
#include "hookforge/run/machine.hpp"
#include "hookforge/run/settings.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/data/fields_of.hpp"
#include "hookforge/torch/io/pretrained.hpp"
#include "hookforge/torch/models/freeze.hpp"

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
  /// The fields forward() adds to the batch, for the field checks made before training
  /// (field_flow.hpp); nullopt where the model does not say.
  virtual std::optional<std::vector<std::string>> output_fields() const { return std::nullopt; }
};

namespace detail {

/// Bytes that training takes per parameter: the weight, its gradient and an optimiser's two
/// moments (Adam's), 4 bytes each in float.
inline constexpr double training_bytes_per_parameter = 16;

/// Options that say how many parameters their model has (espcn_options, mlp_options, ...).
template <class O>
concept counts_parameters = requires(const O& o) {
  { o.parameter_count() } -> std::convertible_to<double>;
};

/// std::invalid_argument when the one options argument has parameter_count() and the model
/// it builds could not be trained in this machine's memory: a config's `hidden: [100000,
/// 100000]` is refused before anything is allocated.
template <class... A>
void refuse_unaffordable(const A&... args) {
  if constexpr (sizeof...(A) == 1 && (counts_parameters<A> && ...)) {
    const double parameters = (static_cast<double>(args.parameter_count()), ...);
    const double bytes = parameters * training_bytes_per_parameter;
    if (!affordable(bytes))
      throw std::invalid_argument(fmt::format(
          "a model of {:.3g} parameters needs {} to train (weight, gradient and two optimiser "
          "moments, 4 bytes each), more than half this machine's memory ({})",
          parameters, gibibytes(bytes), gibibytes(allocation_budget())));
  }
}

}  // namespace detail

/// A module holder (TORCH_MODULE) as a Model, moved to settings().device. Options with
/// parameter_count() are checked first: a model that could not train in this machine's
/// memory is refused before it is allocated (detail::refuse_unaffordable).
template <class Holder>
class module_model final : public Model {
 public:
  /// Builds the module from `args` (its options), as Holder(args...) does.
  template <class... A>
    requires(sizeof...(A) > 0 && std::constructible_from<Holder, A...> &&
             !(sizeof...(A) == 1 && (std::is_same_v<std::remove_cvref_t<A>, module_model> && ...)))
  explicit module_model(A&&... args)
      : net_((detail::refuse_unaffordable(args...), Holder(std::forward<A>(args)...))) {
    net_->to(settings().device);
  }

  Entry forward(const Entry& batch) override { return call_model(net_, batch); }
  std::shared_ptr<torch::nn::Module> ptr() const override { return net_.ptr(); }
  /// "output" for a forward returning a Tensor; an Entry's fields where the module says
  /// them (`output_fields()`).
  std::optional<std::vector<std::string>> output_fields() const override {
    return output_fields_of(net_);
  }
  Holder& net() { return net_; }

 private:
  Holder net_;
};

/// `Pretrained`'s parameters: a model, the file its weights start from, and what to freeze.
struct pretrained_config {
  std::shared_ptr<Model> model;                ///< required: the model to initialise
  std::filesystem::path file = {};             ///< any file read_weights reads (.pth, .ckpt, ...)
  std::string prefix = {};                     ///< take the file's tensors under it, without it
  bool strict = true;                          ///< every tensor on both sides must match
  std::string section = "model";               ///< the module section of a hookforge checkpoint
  std::string key = {};                        ///< the checkpoint's entry holding the weights
  std::vector<std::string> strip_prefix = {};  ///< removed from the file's names, in order
  /// Regular expression to replacement, one each, applied in order: [{"^net\\.": "body."}].
  std::vector<std::map<std::string, std::string>> rename = {};
  std::vector<std::string> opaque_globals = {};  ///< more globals a .pth may hold, never called
  std::vector<std::string> freeze = {};          ///< parameter name patterns kept out of training
};

/// A model whose weights start from a file, with some parameters frozen: MMEngine's
/// `init_cfg=dict(type='Pretrained', ...)` as a model entry of its own.
///
///   model:
///     _target: Pretrained
///     params: {model: {_target: ESPCN, params: {...}}, file: teacher.pt, freeze: ["body.0.*"]}
///
/// It is the model it wraps (same module, same names in checkpoints); the load and the
/// freeze happen when it is built, so hookforge-run --check reports them too (one line on
/// stdout, rank 0). Optimisers built on it get only its trainable parameters.
class pretrained_model final : public Model {
 public:
  explicit pretrained_model(pretrained_config config) : inner_(std::move(config.model)) {
    if (!inner_) throw std::invalid_argument("Pretrained: model must be given");
    if (config.file.empty() && config.freeze.empty())
      throw std::invalid_argument("Pretrained: give a file to load, parameters to freeze, or both");
    std::string line = "Pretrained:";
    if (!config.file.empty())
      line += " " + load_pretrained(inner_->module(), options_of(config)).summary();
    if (!config.freeze.empty()) {
      const auto frozen = hookforge::freeze(inner_->module(), config.freeze);
      line += (config.file.empty() ? " froze " : "; froze ") + std::to_string(frozen.size()) +
              " parameters (" + join_names(frozen, ", ") + ")";
    }
    if (settings().rank == 0) fmt::print("{}\n", line);
  }

  Entry forward(const Entry& batch) override { return inner_->forward(batch); }
  std::shared_ptr<torch::nn::Module> ptr() const override { return inner_->ptr(); }
  std::optional<std::vector<std::string>> output_fields() const override {
    return inner_->output_fields();
  }

 private:
  static pretrained_options options_of(const pretrained_config& config) {
    pretrained_options options{.file = config.file,
                               .prefix = config.prefix,
                               .strict = config.strict,
                               .section = config.section,
                               .key = config.key,
                               .strip_prefix = config.strip_prefix,
                               .opaque_globals = config.opaque_globals};
    for (const auto& rule : config.rename) {
      if (rule.size() != 1)
        throw std::invalid_argument(
            "Pretrained: each rename is one pattern and its replacement ({\"^net\\\\.\": "
            "\"body.\"}), "
            "got " +
            std::to_string(rule.size()) + " in one entry");
      options.rename.emplace_back(rule.begin()->first, rule.begin()->second);
    }
    return options;
  }

  std::shared_ptr<Model> inner_;
};

}  // namespace hookforge::run

HOOKFORGE_DECLARE_KIND(model, hookforge::run::Model);
