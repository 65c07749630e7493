// hookforge/torch/data/model.hpp — reaching the torch module behind a model, when there is one.
//
// A model is anything `call_model` accepts (entry.hpp): a module holder
// (`torch::nn::Linear`, a TORCH_MODULE), a module object, or a plain callable.
// Runners switch train/eval mode and checkpoints save parameters only through
// the module; a plain callable has none and is left alone.
#pragma once

#include <concepts>
#include <type_traits>

#include <torch/nn/module.h>

namespace hookforge {

/// The module behind `model`, or null for a plain callable.
template <class M>
torch::nn::Module* module_of(M& model) {
  if constexpr (std::is_base_of_v<torch::nn::Module, M>)
    return &model;
  else if constexpr (requires {
                       { model.ptr().get() } -> std::convertible_to<torch::nn::Module*>;
                     })
    return model.ptr().get();
  else
    return nullptr;
}

/// Put the model in training (true) or evaluation (false) mode, if it is a module.
template <class M>
void set_training_mode(M& model, bool training) {
  if (auto* module = module_of(model)) module->train(training);
}

}  // namespace hookforge
