// hookforge/torch/models/mlp-inl.hpp — MLP's construction and forward pass: included by
// mlp.hpp header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include "hookforge/torch/models/mlp.hpp"

namespace hookforge {

HOOKFORGE_INLINE MLPImpl::MLPImpl(mlp_options o) : options(std::move(o)) {
  if (options.in_features < 1 || options.out_features < 1)
    throw std::invalid_argument("MLP: in_features and out_features must be >= 1");
  std::int64_t width = options.in_features;
  for (auto h : options.hidden) {
    if (h < 1)
      throw std::invalid_argument("MLP: every hidden width must be >= 1, got " + std::to_string(h));
    body->push_back(torch::nn::Linear(width, h));
    push_activation();
    width = h;
  }
  body->push_back(torch::nn::Linear(width, options.out_features));
  register_module("body", body);
}

HOOKFORGE_INLINE torch::Tensor MLPImpl::forward(const Entry& batch) {
  return body->forward(batch.at(options.input_field));
}

HOOKFORGE_INLINE void MLPImpl::push_activation() {
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
    throw std::invalid_argument("MLP: activation must be tanh, relu, gelu or sigmoid, got \"" + a +
                                "\"");
}

}  // namespace hookforge
