// hookforge/torch/models/mlp.hpp — a multilayer perceptron over one field of the batch.
//
//   hookforge::MLP net({.in_features = 1, .hidden = {64, 64}, .out_features = 1});
//   auto y = net->forward(batch);   // batch.at("input"): [N, in_features] -> [N, out_features]
//
// Linear layers with `activation` (tanh, relu, gelu or sigmoid) between them; the last
// layer has none. A small model for tests, toy runs and configs (registered as "MLP").
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

struct mlp_options {
  std::int64_t in_features = 1;
  std::vector<std::int64_t> hidden = {64, 64};  ///< the hidden layers' widths (empty: one linear layer)
  std::int64_t out_features = 1;
  std::string activation = "tanh";            ///< tanh, relu, gelu or sigmoid
  std::string input_field = "input";
};

struct MLPImpl : torch::nn::Module {
  explicit MLPImpl(mlp_options o = {}) : options(std::move(o)) {
    if (options.in_features < 1 || options.out_features < 1)
      throw std::invalid_argument("MLP: in_features and out_features must be >= 1");
    std::int64_t width = options.in_features;
    for (auto h : options.hidden) {
      if (h < 1) throw std::invalid_argument("MLP: every hidden width must be >= 1, got " + std::to_string(h));
      body->push_back(torch::nn::Linear(width, h));
      push_activation();
      width = h;
    }
    body->push_back(torch::nn::Linear(width, options.out_features));
    register_module("body", body);
  }

  torch::Tensor forward(const Entry& batch) { return body->forward(batch.at(options.input_field)); }

  mlp_options options;
  torch::nn::Sequential body;

 private:
  void push_activation() {
    const auto& a = options.activation;
    if (a == "tanh")
      body->push_back(torch::nn::Tanh());
    else if (a == "relu")
      body->push_back(torch::nn::ReLU());
    else if (a == "gelu")
      body->push_back(torch::nn::GELU());
    else if (a == "sigmoid")
      body->push_back(torch::nn::Sigmoid());
    else
      throw std::invalid_argument("MLP: activation must be tanh, relu, gelu or sigmoid, got \"" + a + "\"");
  }
};
TORCH_MODULE(MLP);

}  // namespace hookforge
