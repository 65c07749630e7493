// hookforge/torch/models/mlp.hpp — a multilayer perceptron over one field of the batch.
//
//   hookforge::MLP net({.in_features = 1, .hidden = {64, 64}, .out_features = 1});
//   auto y = net->forward(batch);   // batch.at("input"): [N, in_features] -> [N, out_features]
//
// Linear layers with `activation` (tanh, relu, gelu or sigmoid) between them; the last
// layer has none. A small model for tests, toy runs and configs (registered as "MLP").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

struct mlp_options {
  std::int64_t in_features = 1;
  std::vector<std::int64_t> hidden = {64,
                                      64};  ///< the hidden layers' widths (empty: one linear layer)
  std::int64_t out_features = 1;
  std::string activation = "tanh";  ///< tanh, relu, gelu or sigmoid
  std::string input_field = "input";

  /// The parameters of the model these options build, without building it (a double: a
  /// config may ask for more than an int64 holds).
  double parameter_count() const {
    double n = 0, width = static_cast<double>(in_features);
    for (auto h : hidden) {
      n += (width + 1) * static_cast<double>(h);
      width = static_cast<double>(h);
    }
    return n + (width + 1) * static_cast<double>(out_features);
  }
};

struct MLPImpl : torch::nn::Module {
  explicit MLPImpl(mlp_options o = {});

  torch::Tensor forward(const Entry& batch);

  mlp_options options;
  torch::nn::Sequential body;

 private:
  void push_activation();
};
TORCH_MODULE(MLP);

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/models/mlp-inl.hpp"
#endif
